import assert from "node:assert/strict";
import { type LineSink, LogLines } from "./log_lines.ts";

// A sink that takes at most `chunk` bytes a write, and only while open.
function pausedSink(chunk = Infinity) {
  const text: string[] = [];
  let open = Promise.withResolvers<void>();
  let writes = 0;
  const sink: LineSink = {
    async write(bytes) {
      writes++;
      await open.promise;
      const taken = bytes.subarray(0, Math.min(chunk, bytes.length));
      text.push(new TextDecoder().decode(taken));
      return taken.length;
    },
  };
  return {
    sink,
    text: () => text.join(""),
    writes: () => writes,
    resume: () => open.resolve(),
    pause: () => open = Promise.withResolvers<void>(),
  };
}

Deno.test("LogLines keeps order when the sink takes a few bytes at a time", async () => {
  const paused = pausedSink(3);
  paused.resume();
  const lines = new LogLines(paused.sink);
  for (let i = 0; i < 20; i++) lines.log(`line ${i}`);
  await lines.written(10_000);
  assert.equal(
    paused.text(),
    Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join(""),
  );
});

Deno.test("LogLines never waits for a paused reader, and drops past its bound", async () => {
  const paused = pausedSink();
  const lines = new LogLines(paused.sink, 100);
  // 10 lines of 20 bytes: 5 fit the bound, 5 are dropped. None blocks.
  for (let i = 0; i < 10; i++) lines.log(`paused line ${i}`.padEnd(19, "."));
  // The first is handed to the sink (a turn later), the rest wait.
  for (let turn = 0; turn < 100 && paused.writes() === 0; turn++) {
    await Promise.resolve();
  }
  assert.equal(paused.writes(), 1);
  assert.equal(paused.text(), "");
  paused.resume();
  await lines.written(10_000);
  const written = paused.text().split("\n").slice(0, -1);
  assert.deepEqual(written, [
    ...Array.from(
      { length: 5 },
      (_, i) => `paused line ${i}`.padEnd(19, "."),
    ),
    "skillbox: 5 log line(s) dropped: stderr was not read",
  ]);
  // Room again once the reader caught up.
  lines.log("after");
  await lines.written(10_000);
  assert.ok(paused.text().endsWith("stderr was not read\nafter\n"));
});

Deno.test("LogLines writes the start of a line longer than its whole bound", async () => {
  // Dropped, it was lost unsaid: nothing waiting drains to report it, and
  // a CLI whose one error line was that long exited with no word.
  const paused = pausedSink();
  paused.resume();
  const lines = new LogLines(paused.sink, 100);
  lines.log(`skillbox: ${"é".repeat(200)}`);
  await lines.written(10_000);
  const text = paused.text();
  assert.match(text, /^skillbox: (é)+\n$/);
  assert.ok(new TextEncoder().encode(text).length <= 100);
});

Deno.test("LogLines.written gives up on a reader that stays paused", async () => {
  const paused = pausedSink();
  const lines = new LogLines(paused.sink);
  lines.log("never read");
  await lines.written(10); // Returns: the process may exit.
  assert.equal(paused.text(), "");
  paused.resume();
  await lines.written(10_000);
  assert.equal(paused.text(), "never read\n");
});

Deno.test("LogLines stops writing once the reader is gone", async () => {
  let writes = 0;
  const lines = new LogLines({
    write() {
      writes++;
      return Promise.reject(new Deno.errors.BrokenPipe("Broken pipe"));
    },
  });
  lines.log("one");
  lines.log("two");
  await lines.written(10_000);
  lines.log("three");
  await lines.written(10_000);
  assert.equal(writes, 1);
});

Deno.test("LogLines.written waits for the notice of dropped lines too", async () => {
  // A byte a write: the notice takes many turns to write after the last
  // line that was kept, and a caller about to exit must not cut it off.
  const paused = pausedSink(1);
  const lines = new LogLines(paused.sink, 100);
  for (let i = 0; i < 10; i++) lines.log(`paused line ${i}`.padEnd(19, "."));
  paused.resume();
  await lines.written(10_000);
  assert.ok(
    paused.text().endsWith(
      "\nskillbox: 5 log line(s) dropped: stderr was not read\n",
    ),
    paused.text(),
  );
});
