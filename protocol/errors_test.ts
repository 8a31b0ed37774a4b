import assert from "node:assert/strict";
import { SkillboxError, toWireError } from "./errors.ts";

Deno.test("toWireError() maps any thrown value, even one String() refuses", () => {
  assert.equal(
    toWireError(new SkillboxError("unknown_tool", "no")).code,
    "unknown_tool",
  );
  assert.deepEqual(toWireError("boom"), {
    code: "runtime_error",
    message: "boom",
    detail: {},
    retryable: false,
  });
  // String() throws for these: no toString, or one that throws. The caller
  // (an error path) must still get an answer, not a second throw.
  const bare = Object.create(null);
  const hostile = {
    toString() {
      throw new Error("no");
    },
  };
  for (const value of [bare, hostile]) {
    const wire = toWireError(value);
    assert.equal(wire.code, "runtime_error");
    assert.equal(wire.message, "[object Object]");
  }
});
