/**
 * A careless operator's config: every mistake in `skillbox.jsonc`, the
 * `SKILLBOX_*` variables or the CLI flags is a `ConfigError` naming where it
 * is, never a stack trace.
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../runtime/config_error.ts";
import { parseConfig } from "../../runtime/config.ts";

Deno.test("parseConfig() refuses a file nested deeper than its parser's stack with a ConfigError", () => {
  for (
    const text of [
      "[".repeat(100_000),
      `{ "policy": ${'{ "a": '.repeat(50_000)}1${"}".repeat(50_001)}`,
    ]
  ) {
    assert.throws(
      () => parseConfig(text, "deep.jsonc"),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message === "deep.jsonc: nested too deeply to read",
    );
  }
});
