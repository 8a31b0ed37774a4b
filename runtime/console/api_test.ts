import assert from "node:assert/strict";
import { openRecorder, RunRecorder } from "../store/recorder.ts";
import type { RunStore } from "../store/store.ts";
import { createApi } from "./api.ts";

Deno.test("/live is served no-store, over streamSSE's no-cache", async () => {
  const recorder = openRecorder({
    path: ":memory:",
    maxRuns: 10,
    maxAgeDays: 1,
  });
  const api = createApi({
    recorder,
    catalog: () => Promise.reject(new Error("no catalog")),
    sessions: () => [],
    processes: () => [],
  });
  const abort = new AbortController();
  const res = await api.request("/live", { signal: abort.signal });
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await reader.read()).value ?? "", /^event: hello\n/);
  abort.abort();
  await reader.cancel();
  await recorder.close();
});

Deno.test("/overview lists every other host: beating, gone, or only named by a run", async () => {
  const running = (id: string, host: string) => ({
    id,
    parentId: null,
    kind: "tool" as const,
    name: "nap",
    toolkit: null,
    session: "s",
    transport: "sse",
    tokenLabel: null,
    host,
    startedAt: 1,
    endedAt: 1,
    durationMs: 0,
    outcome: "running",
    error: null,
    summary: null,
    args: "{}",
    result: null,
    eventCount: 0,
    llmTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
    cursor: 1,
  });
  const store: RunStore = {
    write() {},
    list: () => ({
      runs: [running("r2", "h2"), running("r3", "h3"), running("r1", "h1")],
      next: null,
    }),
    get: () => null,
    timings: () => [],
    prune: () => 0,
    interrupt: () => 0,
    count: () => 0,
    follow: () => () => {},
    beat() {},
    hosts: () => [
      { host: "h1", ageMs: 0 },
      { host: "h2", ageMs: 100 },
      { host: "h4", ageMs: 99_999 },
    ],
    close() {},
  };
  const recorder = new RunRecorder({ store, host: "h1" });
  const api = createApi({
    recorder,
    catalog: () => Promise.reject(new Error("no catalog")),
    sessions: () => [],
    processes: () => [],
  });
  const view = await (await api.request("/overview")).json();
  assert.deepEqual(view.hosts, [
    { id: "h1", self: true, alive: true, last_seen_ms: 0, running: 0 },
    { id: "h2", self: false, alive: true, last_seen_ms: 100, running: 1 },
    { id: "h3", self: false, alive: false, last_seen_ms: null, running: 1 },
    { id: "h4", self: false, alive: false, last_seen_ms: 99_999, running: 0 },
  ]);
  assert.deepEqual(view.running.map((r: { id: string }) => r.id), ["r3", "r2"]);
  await recorder.close();
});
