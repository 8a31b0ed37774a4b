import assert from "node:assert/strict";
import { serializeResult } from "./_truncate.ts";

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
  assert.equal(JSON.parse(r.json), '{"list":[1,1,1,1,1,1');
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
