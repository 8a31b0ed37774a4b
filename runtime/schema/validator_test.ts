import assert from "node:assert/strict";
import { z } from "zod";
import { schemaErrors, validateValue } from "./validator.ts";

function problems(schema: Record<string, unknown>, value: unknown): string {
  const r = validateValue(schema, value);
  assert.ok(!r.valid, "expected the value to be invalid");
  return r.message;
}

Deno.test("validateValue() names the field path of each problem", async (t) => {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2 },
      mode: { enum: ["fast", "safe"] },
      items: { type: "array", items: { type: "number", minimum: 3 } },
      "a/b": { type: "boolean" },
      either: { anyOf: [{ type: "string" }, { type: "number" }] },
      ref: { $ref: "#/$defs/n" },
    },
    required: ["name"],
    additionalProperties: false,
    $defs: { n: { type: "integer" } },
  };
  const cases: [string, unknown, string][] = [
    ["a missing field", {}, '"name" is required'],
    ["a wrong type", { name: 5 }, '"name" must be of type string, got number'],
    ["a short string", { name: "x" }, '"name" is too short (1 < 2)'],
    [
      "an enum",
      { name: "ok", mode: "slow" },
      '"mode" must be one of ["fast","safe"]',
    ],
    [
      "an array item",
      { name: "ok", items: [5, 1] },
      '"items.1" is less than 3',
    ],
    [
      "an escaped key",
      { name: "ok", "a/b": 1 },
      '"a/b" must be of type boolean, got number',
    ],
    ["an extra field", { name: "ok", extra: 1 }, '"extra" is not allowed'],
    [
      "a union",
      { name: "ok", either: true },
      '"either" does not match any of the allowed schemas',
    ],
    [
      "a $ref",
      { name: "ok", ref: 1.5 },
      '"ref" must be of type integer, got number',
    ],
    ["the root", [], "The value must be of type object, got array"],
  ];
  for (const [label, value, expected] of cases) {
    await t.step(label, () => assert.equal(problems(schema, value), expected));
  }
});

Deno.test("validateValue() never quotes the failing value", () => {
  const secret = "s3cr3t-value-123";
  const schema = {
    type: "object",
    properties: {
      token: { type: "string", pattern: "^ghp_", maxLength: 4, enum: ["x"] },
      pin: { type: "number", maximum: 10, multipleOf: 7 },
    },
  };
  const message = problems(schema, { token: secret, pin: 123456789 });
  assert.ok(!message.includes(secret), message);
  assert.ok(!message.includes("123456789"), message);
  assert.match(message, /"token"/);
  assert.match(message, /"pin" is greater than 10/);
});

Deno.test("validateValue() reads zod's JSON Schema and hand-written draft-07", () => {
  const zodSchema = z.toJSONSchema(
    z.object({ n: z.number().int(), tag: z.string().optional() }),
  ) as Record<string, unknown>;
  assert.ok(validateValue(zodSchema, { n: 1 }).valid);
  assert.equal(problems(zodSchema, { n: 1, x: 1 }), '"x" is not allowed');
  const draft7 = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "string" } },
  };
  assert.equal(
    problems(draft7, { a: 1 }),
    '"a" must be of type string, got number',
  );
});

Deno.test("schemaErrors() returns null for a valid value and the units otherwise", () => {
  const schema = {
    type: "object",
    properties: { rows: { type: "number" } },
    required: ["rows"],
  };
  assert.equal(schemaErrors(schema, { rows: 3 }), null);
  const errors = schemaErrors(schema, { rows: "3" });
  assert.ok(errors !== null);
  const type = errors.find((e) => e.keyword === "type");
  assert.equal(type?.instanceLocation, "#/rows");
});

Deno.test("schemaErrors() follows the draft named by $schema", () => {
  // Draft 4 reads a boolean exclusiveMaximum; 2020-12 would reject it as a schema keyword value.
  const schema = {
    $schema: "http://json-schema.org/draft-04/schema#",
    type: "number",
    maximum: 5,
    exclusiveMaximum: true,
  };
  assert.equal(schemaErrors(schema, 4), null);
  assert.ok(schemaErrors(schema, 5) !== null);
});
