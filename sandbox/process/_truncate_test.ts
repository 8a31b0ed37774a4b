import assert from "node:assert/strict";
import { OUTPUT_FIELDS_CHARS, serializeResult } from "./_truncate.ts";

Deno.test("serializeResult() leaves small values alone", () => {
  assert.deepEqual(serializeResult({ a: 1 }, 100), {
    json: '{"a":1}',
    truncated: false,
  });
  assert.deepEqual(serializeResult(undefined, 100), {
    json: "null",
    truncated: false,
  });
});

Deno.test("serializeResult() cuts objects to a JSON prefix string", () => {
  const r = serializeResult({ list: Array(100).fill(1) }, 20);
  assert.equal(r.truncated, true);
  // 20 characters of JSON between the quotes, its escaped quotes counted.
  assert.equal(r.json.length, 22);
  assert.equal(JSON.parse(r.json), '{"list":[1,1,1,1,1');
});

Deno.test("serializeResult() cuts only the data of an output()", () => {
  const r = serializeResult(
    { __skillbox_output: true, data: "z".repeat(50), exit_code: 3 },
    30,
  );
  assert.equal(r.truncated, true);
  assert.deepEqual(JSON.parse(r.json), {
    __skillbox_output: true,
    data: "z".repeat(30),
    exit_code: 3,
  });
});

Deno.test("serializeResult() throws on cycles", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => serializeResult(cyclic, 10), TypeError);
});

// JSON text a cut result may not exceed: quotes, backslashes and control
// characters take 2 to 6 characters each once escaped.
Deno.test("serializeResult() keeps a cut result within the bound whatever must be escaped", async (t) => {
  const cases: [string, unknown][] = [
    ["control characters", "\u0001".repeat(1000)],
    ["quotes", '"'.repeat(1000)],
    ["backslashes and newlines", "\\\n".repeat(1000)],
    ["a list of quoted strings", Array(1000).fill('"')],
    ["lone surrogates", "\ud800".repeat(1000)],
    ["surrogate pairs", "😀".repeat(1000)],
    ["an output() with escapes", {
      __skillbox_output: true,
      data: "\u0002".repeat(1000),
      exit_code: 0,
    }],
    ["an output() whose other fields are over the bound", {
      __skillbox_output: true,
      data: "ok",
      summary: "n".repeat(2 * OUTPUT_FIELDS_CHARS),
    }],
  ];
  for (const [what, value] of cases) {
    await t.step(what, () => {
      for (const max of [1, 2, 3, 7, 100, 999]) {
        const r = serializeResult(value, max);
        assert.equal(r.truncated, true);
        // An output() keeps its other fields when they are short.
        const room = typeof value === "object" && !Array.isArray(value)
          ? OUTPUT_FIELDS_CHARS
          : 0;
        assert.ok(
          r.json.length <= max + 2 + room,
          `${r.json.length} characters of JSON for a bound of ${max}`,
        );
        JSON.parse(r.json);
      }
    });
  }
});

Deno.test("serializeResult() cuts a string to its longest prefix that fits, never inside a surrogate pair", () => {
  assert.equal(JSON.parse(serializeResult("ab\u0001cd", 7).json), "ab");
  assert.equal(JSON.parse(serializeResult("ab\u0001cd", 8).json), "ab\u0001");
  assert.equal(JSON.parse(serializeResult("a😀b", 2).json), "a");
  assert.equal(JSON.parse(serializeResult("a😀b", 3).json), "a😀");
});
