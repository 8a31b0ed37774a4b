/**
 * A typo under `policy` silently weakened a security setting: the section
 * is strict, an unknown key refused with its key path.
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../runtime/config_error.ts";
import { parseConfig } from "../../runtime/config.ts";

function refusal(text: string): string {
  try {
    parseConfig(text, "f.jsonc");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`accepted: ${text}`);
}

Deno.test("parseConfig() refuses an unknown key under policy with its key path", () => {
  assert.match(
    refusal('{ "policy": { "tool": { "deny": ["toolkit:shell"] } } }'),
    /^f\.jsonc: policy\.tool: not a policy setting \(one of tools, permissions,/,
  );
  assert.match(
    refusal('{ "policy": { "net": ["example.com"] } }'),
    /^f\.jsonc: policy\.net: not a policy setting/,
  );
  // Every key the policy's owners read is still taken.
  const config = parseConfig(`{
    "tokens": ["t1"],
    "policy": {
      "tools": { "deny": ["toolkit:shell"] },
      "permissions": { "net": ["example.com"] },
      "max_timeout_seconds": 5,
      "tokens": { "t1": { "max_sessions": 2 } },
      "interpreters": { ".sh": null },
    },
  }`);
  assert.deepEqual(Object.keys(config.policy).sort(), [
    "interpreters",
    "max_timeout_seconds",
    "permissions",
    "tokens",
    "tools",
  ]);
});

Deno.test("parseConfig() never echoes a token written as a policy key", () => {
  const message = refusal(
    '{ "tokens": ["s3cret-token"], "policy": { "s3cret-token": {} } }',
  );
  assert.ok(!message.includes("s3cret"), message);
  assert.match(message, /^f\.jsonc: policy\.<token>: not a policy setting/);
});
