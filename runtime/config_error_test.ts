import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";

Deno.test("ConfigError carries its message and cause under its own name", () => {
  const cause = new Error("ENOENT");
  const error = new ConfigError('Cannot read config "x": ENOENT', { cause });
  assert.equal(error.name, "ConfigError");
  assert.equal(error.cause, cause);
  assert.equal(String(error), 'ConfigError: Cannot read config "x": ENOENT');
});
