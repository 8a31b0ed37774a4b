import assert from "node:assert/strict";
import {
  MAX_SCHEMA_STEPS,
  validateValue,
} from "../../runtime/schema/validator.ts";

// The error objects the validator library copies while it checks: it
// passes each error up through every application above it, with
// `errors.push(wrapper, ...childErrors)`. Counted: the values pushed onto
// any array during the validation.
function pushedDuring(run: () => void): number {
  const original = Array.prototype.push;
  let pushed = 0;
  Array.prototype.push = function (this: unknown[], ...items: unknown[]) {
    pushed += items.length;
    return original.apply(this, items);
  };
  try {
    run();
  } finally {
    Array.prototype.push = original;
  }
  return pushed;
}

// n failing items, `depth` objects deep: n errors, each copied `depth`
// times, yet only about n + depth schema steps.
function failingItems(n: number, depth: number) {
  let schema: Record<string, unknown> = {
    type: "array",
    items: { type: "number" },
  };
  let value: unknown = new Array(n).fill(true);
  for (let i = 0; i < depth; i++) {
    schema = { type: "object", properties: { a: schema } };
    value = { a: value };
  }
  return { schema, value };
}

Deno.test("validateValue() counts the errors it builds against its step bound", () => {
  let message = "";
  const work = (n: number) => {
    const { schema, value } = failingItems(n, 50);
    return pushedDuring(() => {
      const result = validateValue(schema, value);
      message = result.valid ? "" : result.message;
    });
  };
  const small = work(25_000);
  const large = work(100_000);
  // Within the bound, whatever the number of failures: not n errors
  // copied 50 times over.
  assert.ok(small < 2 * MAX_SCHEMA_STEPS, `${small} values pushed`);
  assert.ok(large < 2 * MAX_SCHEMA_STEPS, `${large} values pushed`);
  // The value is not deep: it is refused for what is wrong with it.
  assert.match(
    message,
    /^"a\.a\.a\..*\.0" must be of type number, got boolean/,
  );
});

Deno.test("validateValue() still names every failure it can afford to", () => {
  const { schema, value } = failingItems(100, 5);
  const result = validateValue(schema, value);
  assert.ok(!result.valid);
  assert.equal(result.issues.length, 100);
  assert.match(result.message, /; and 80 more$/);
});

Deno.test("validateValue() describes a cyclic value's failure and returns", () => {
  // An in-process caller's value may refer to itself: measuring how deep
  // it nests, for the gathering pass, must end too.
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const result = validateValue({ type: "number" }, cycle);
  assert.equal(
    result.valid ? "" : result.message,
    "The value must be of type number, got object",
  );
});
