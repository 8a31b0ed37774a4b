import assert from "node:assert/strict";
import { progressLogger } from "./progress.ts";

Deno.test("progressLogger() stays quiet for a fast load", () => {
  const lines: string[] = [];
  const onProgress = progressLogger((l) => lines.push(l));
  for (let done = 1; done <= 100; done++) {
    onProgress({ done, total: 100, elapsedMs: done * 5 });
  }
  assert.deepEqual(lines, []);
});

Deno.test("progressLogger() reports a slow load a few times a second, then its end", () => {
  const lines: string[] = [];
  const onProgress = progressLogger((l) => lines.push(l));
  // 1,000 modules over 3 s, one every 3 ms.
  for (let done = 1; done <= 1000; done++) {
    onProgress({ done, total: 1000, elapsedMs: done * 3 });
  }
  const progress = lines.slice(0, -1);
  assert.ok(progress.length >= 7 && progress.length <= 9, lines.join("\n"));
  for (const line of progress) {
    assert.match(line, /^loading skills: \d+\/1000 modules$/);
  }
  assert.equal(lines.at(-1), "loaded skills: 1000 modules in 3.0 s");
  // A later reload starts over: quiet again when fast.
  lines.length = 0;
  onProgress({ done: 1, total: 1, elapsedMs: 10 });
  assert.deepEqual(lines, []);
});
