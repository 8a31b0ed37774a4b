import assert from "node:assert/strict";
import { validateArguments, validateValue } from "./validate.ts";

const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: {} },
  { type: "object" },
  { type: "object", properties: {}, additionalProperties: true },
  {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    title: "t",
    description: "d",
  },
  // Not open: each constrains something.
  { type: "object", properties: {}, additionalProperties: false },
  { type: "object", required: ["a"] },
  { type: "object", properties: { a: { type: "number" } } },
  { type: "object", maxProperties: 0 },
  { type: "object", title: { not: "a string" } },
  { type: ["object", "null"] },
  { type: "object", not: {} },
  { type: "object", $ref: "#/$defs/x", $defs: { x: { required: ["a"] } } },
  {},
];

const VALUES: unknown[] = [
  {},
  { a: 1 },
  { a: "x", b: [1, { c: null }] },
  [],
  [1, 2],
  null,
  "text",
  3,
];

Deno.test("validateArguments answers as validateValue does, for open and other schemas", () => {
  for (const schema of SCHEMAS) {
    for (const value of VALUES) {
      const args = value as Record<string, unknown>;
      const fast = validateArguments(schema, args);
      // A fresh copy of the schema: the validator's own cache is not shared.
      const slow = validateValue(structuredClone(schema), args);
      assert.equal(
        fast.valid,
        slow.valid,
        `${JSON.stringify(schema)} on ${JSON.stringify(value)}`,
      );
      if (!fast.valid && !slow.valid) assert.equal(fast.message, slow.message);
    }
  }
});

Deno.test("validateArguments still refuses what an open-looking schema forbids", () => {
  const closed = {
    type: "object",
    properties: {},
    additionalProperties: false,
  };
  assert.equal(validateArguments(closed, { a: 1 }).valid, false);
  const open = { type: "object", properties: {} };
  assert.equal(validateArguments(open, { a: 1 }).valid, true);
  // An array is not an object, however the schema reads.
  assert.equal(
    validateArguments(open, [] as unknown as Record<string, unknown>).valid,
    false,
  );
});
