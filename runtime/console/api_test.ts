import assert from "node:assert/strict";
import { openRecorder, RunRecorder } from "../store/recorder.ts";
import { testWithPostgres } from "../../tests/support/postgres.ts";
import { openPostgresStore } from "../store/postgres.ts";
import { openSqliteStore } from "../store/sqlite.ts";
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
    children: () => ({ children: [], next: null }),
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

// A run_code run making code.max_calls (1,000) inner calls, each with
// arguments and a result near the 16 KiB cap: its detail was every child,
// whole, in one answer (about 35 MB).
async function manyChildren(store: RunStore): Promise<void> {
  const big = JSON.stringify("x".repeat(16_000));
  const child = (i: number) => ({
    id: `c${i}`,
    parentId: "p",
    kind: "tool" as const,
    name: "inc",
    toolkit: null,
    session: "s",
    transport: "websocket",
    tokenLabel: null,
    host: "h1",
    startedAt: 1000 + i,
    endedAt: 1001 + i,
    durationMs: 1,
    outcome: "ok",
    error: null,
    summary: null,
    args: big,
    result: big,
    eventCount: 0,
    llmTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
  });
  await store.write([{
    run: { ...child(-1), id: "p", parentId: null, name: "run_code" },
    events: [],
  }]);
  for (let i = 0; i < 1000; i += 250) {
    await store.write(
      Array.from(
        { length: 250 },
        (_, k) => ({ run: child(i + k), events: [] }),
      ),
    );
  }
  const recorder = new RunRecorder({ store, host: "h1" });
  const api = createApi({
    recorder,
    catalog: () => Promise.reject(new Error("no catalog")),
    sessions: () => [],
    processes: () => [],
  });
  try {
    const res = await api.request("/runs/p");
    const text = await res.text();
    assert.ok(text.length < 100_000, `the detail is ${text.length} bytes`);
    const detail = JSON.parse(text);
    assert.equal(detail.children.length, 100);
    assert.equal(detail.children_total, 1000);
    assert.equal(detail.children[0].arguments, undefined, "a summary");
    const seen: string[] = detail.children.map((c: { id: string }) => c.id);
    let next: string | null = detail.children_next;
    while (next !== null) {
      const page = await (await api.request(
        `/runs/p/children?after=${encodeURIComponent(next)}&limit=1000`,
      )).json();
      assert.ok(page.children.length <= 100);
      seen.push(...page.children.map((c: { id: string }) => c.id));
      next = page.next;
    }
    assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => `c${i}`));
    const bad = await api.request("/runs/p/children?after=nope");
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /cursor "nope"/);
  } finally {
    await recorder.close();
  }
}

Deno.test("a run's detail carries one page of its 1,000 children (SQLite)", async () => {
  await manyChildren(openSqliteStore(":memory:"));
});

testWithPostgres(
  "a run's detail carries one page of its 1,000 children (PostgreSQL)",
  async (pg) => {
    await manyChildren(await openPostgresStore(await pg.database()));
  },
);
