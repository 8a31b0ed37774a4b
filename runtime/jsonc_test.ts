import assert from "node:assert/strict";
import { parseJsonc } from "./jsonc.ts";
import { ConfigError } from "./config_error.ts";

Deno.test("parseJsonc() reads comments and trailing commas", () => {
  assert.deepEqual(
    parseJsonc('/* a */ { "x": [1, 2,], // b\n "y": null, }', "f"),
    { x: [1, 2], y: null },
  );
  assert.throws(
    () => parseJsonc("", "f"),
    /^ConfigError: f:1:1: Value expected$/,
  );
});

Deno.test("parseJsonc() names file, line and column of the first error in a sentence", () => {
  assert.throws(
    () => parseJsonc('{\n\n   "a": 1\n   "b": 2 }', "dir/x.jsonc"),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === "dir/x.jsonc:4:4: Comma expected",
  );
  assert.throws(
    () => parseJsonc('{ "a": "unterminated', "y.jsonc"),
    (e: unknown) =>
      e instanceof ConfigError &&
      /^y\.jsonc:1:\d+: [A-Z][a-z ]+$/.test(e.message),
  );
});
