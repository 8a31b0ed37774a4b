/**
 * A key named `__proto__` vanished inside `toolkits`, `mcp_servers` and
 * `policy` (their records drop it): refused with its key path instead.
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

Deno.test("parseConfig() refuses a __proto__ key where a record would drop it", async (t) => {
  const cases: [string, string][] = [
    ['{ "toolkits": { "__proto__": { "root": "/" } } }', "toolkits.__proto__"],
    [
      '{ "toolkits": { "fs": { "__proto__": { "root": "/" } } } }',
      "toolkits.fs.__proto__",
    ],
    [
      '{ "mcp_servers": { "__proto__": { "command": "x" } } }',
      "mcp_servers.__proto__",
    ],
    [
      '{ "mcp_servers": { "a": { "command": "x", "env": { "__proto__": "v" } } } }',
      "mcp_servers.a.env.__proto__",
    ],
    [
      '{ "policy": { "__proto__": { "tools": { "deny": ["x"] } } } }',
      "policy.__proto__",
    ],
    [
      '{ "tokens": ["t"], "policy": { "tokens": { "__proto__": {} } } }',
      "policy.tokens.__proto__",
    ],
  ];
  for (const [text, path] of cases) {
    await t.step(path, () => {
      const message = refusal(text);
      assert.ok(message.startsWith("f.jsonc:1:"), message);
      assert.ok(
        message.includes(`${path}: a key named "__proto__" is not allowed`),
        message,
      );
    });
  }
});
