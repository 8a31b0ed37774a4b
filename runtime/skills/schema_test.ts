import assert from "node:assert/strict";
import { checkSchema, isEmptySchema } from "./schema.ts";

Deno.test("checkSchema() names the deepest failing field by JSON pointer", () => {
  const schema = {
    type: "object",
    properties: {
      rows: { type: "number" },
      opts: {
        type: "object",
        properties: { sep: { type: "string" } },
        required: ["sep"],
      },
    },
    required: ["rows"],
  };
  assert.equal(checkSchema(schema, { rows: 1, opts: { sep: "," } }), null);
  assert.equal(
    checkSchema(schema, { opts: { sep: "," } }),
    'field "/rows" is required',
  );
  assert.equal(
    checkSchema(schema, { rows: "1", opts: { sep: "," } }),
    'field "/rows" has type "string", expected "number"',
  );
  assert.equal(
    checkSchema(schema, { rows: 1, opts: {} }),
    'field "/opts/sep" is required',
  );
});

Deno.test("checkSchema() accepts anything against an empty schema", () => {
  assert.ok(isEmptySchema({}));
  assert.equal(checkSchema({}, Symbol.for("x")), null);
});

Deno.test("checkSchema() words other keywords with the validator's text", () => {
  const problem = checkSchema({ type: "string", minLength: 3 }, "ab");
  assert.match(problem ?? "", /^field "\/": /);
});
