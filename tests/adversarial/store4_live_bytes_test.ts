/**
 * `/api/live` against a token whose own feed is never read (a stalled tab,
 * a client that opens it and stops reading), while its calls finish with
 * results as large as the recorder keeps: what the feed holds is bounded
 * in bytes for every kind of change, not only for events.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type LiveChange, openRecorder } from "../../runtime/store/recorder.ts";
import { createApi } from "../../runtime/console/api.ts";
import { startRun } from "../support/runs.ts";

// Arguments and a result each kept whole (seven strings of 2,000
// characters: within the redactor's 2,000 per string and 16 KiB a value),
// an error and a summary of 4,000: about 72 KB of a feed's memory a run.
const big = Object.fromEntries(
  Array.from({ length: 7 }, (_, i) => [`k${i}`, "x".repeat(2000)]),
);
const text = "y".repeat(4000);

Deno.test("a live feed nobody reads holds a bounded size of finished runs, not 2,000 of 72 KB", async () => {
  const recorder = openRecorder(null);
  const api = createApi({
    recorder,
    catalog: () => Promise.reject(new Error("no catalog")),
    sessions: () => [],
    processes: () => [],
  });
  const abort = new AbortController();
  const res = await api.request("/live", { signal: abort.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let read = "";
  while (!read.includes("event: hello")) read += (await reader.read()).value;
  // 400 runs are about 29 MB; 8 MiB hold about 116 of them.
  const SENT = 400;
  for (let i = 0; i < SENT; i++) {
    const id = startRun(recorder, { name: "big", args: big });
    recorder.finished(id, {
      outcome: "ok",
      result: big,
      error: text,
      summary: text,
    });
  }
  // Read what the feed held: at each read one more small run, heard once
  // the feed has room again, after the count of those it lost.
  while (!/^event: lost$|"name":"small"/m.test(read)) {
    const { value, done } = await reader.read();
    if (done) break;
    read += value;
    recorder.finished(
      startRun(recorder, { name: "small" }),
      { outcome: "ok" },
    );
  }
  abort.abort();
  await reader.cancel();
  await recorder.close();
  const delivered = read.match(/^event: finished$/gm)?.length ?? 0;
  const lost = Number(/^event: lost\ndata: (\d+)$/m.exec(read)?.[1] ?? 0);
  assert.ok(delivered <= 130, `${delivered} finished runs of 72 KB were held`);
  assert.ok(lost >= SENT - 130, `${lost} lost`);
});

Deno.test("a queued started change holds the run as it started, not what its later events grow", () => {
  const recorder = openRecorder(null);
  const heard: LiveChange[] = [];
  recorder.subscribe((change) => heard.push(change));
  const id = startRun(recorder, { name: "grow" });
  // A module's event may be 1 MiB (the sandbox's cap): a feed holding
  // 2,000 started changes held 2 GiB through them once each run said so.
  const message = "z".repeat(1 << 20);
  recorder.event(id, { kind: "status", seq: 0, data: { message } });
  recorder.event(id, { kind: "llm.token", seq: 1, data: { text: message } });
  const started = heard[0]!;
  assert.ok(started.type === "started");
  assert.equal(started.run.status.length, 0, "its status grew");
  assert.equal(started.run.tokens.length, 0, "its tokens grew");
  assert.equal(started.run.eventCount, 0);
  recorder.close();
});
