import assert from "node:assert/strict";
import { indexOfText, prefixTable, replaceAllText } from "./text_search.ts";

Deno.test("indexOfText() answers as indexOf() does, short and long patterns", () => {
  const long = "ab".repeat(200) + "c";
  for (
    const [text, pattern, from] of [
      ["hello world", "o", 0],
      ["hello world", "o", 5],
      ["hello world", "z", 0],
      [`x${long}y${long}`, long, 0],
      [`x${long}y${long}`, long, 2],
      [`${"ab".repeat(500)}c`, long, 0],
      ["short", long, 0],
    ] as const
  ) {
    assert.equal(
      indexOfText(text, pattern, from),
      text.indexOf(pattern, from),
      `${text.length}/${pattern.length}/${from}`,
    );
  }
});

Deno.test("indexOfText() finds a long pattern of one repeated letter in one pass", () => {
  // V8's own search of this shape (a 4 KiB pattern in 4 MiB of the
  // letter) took 36 s, a 256 KiB one half an hour.
  const half = "a".repeat(128 * 1024);
  const pattern = `${half}b${half}`;
  const text = "a".repeat(4 * 1024 * 1024);
  assert.equal(indexOfText(text, pattern), -1);
  assert.equal(
    indexOfText(`${text}b${half}`, pattern),
    text.length - half.length,
  );
});

Deno.test("replaceAllText() replaces every occurrence, left to right", () => {
  const long = "a".repeat(300) + "b";
  assert.equal(replaceAllText(`x${long}${long}y`, long, "[r]"), "x[r][r]y");
  assert.equal(replaceAllText("aaaa", "aa", "$&"), "$&$&");
  const same = "nothing here";
  assert.equal(replaceAllText(same, long, "[r]"), same);
});

Deno.test("prefixTable() is the Knuth-Morris-Pratt table", () => {
  assert.deepEqual([...prefixTable("aabaaab", 7).slice(0, 7)], [
    0,
    1,
    0,
    1,
    2,
    2,
    3,
  ]);
  // Longer than the reused table: its own.
  const big = prefixTable("a".repeat(2000), 2000);
  assert.equal(big[1999], 1999);
});
