import assert from "node:assert/strict";
import { openRecorder } from "../store/recorder.ts";
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
