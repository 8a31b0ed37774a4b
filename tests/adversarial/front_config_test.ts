/**
 * A careless operator's config: every mistake in `skillbox.jsonc`, the
 * `SKILLBOX_*` variables or the CLI flags is a `ConfigError` naming where it
 * is, never a stack trace.
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../runtime/config_error.ts";
import {
  defaultConfig,
  loadConfig,
  parseConfig,
} from "../../runtime/config.ts";
import {
  type ConfigFlags,
  resolveConfig,
} from "../../runtime/config_overrides.ts";

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

Deno.test("loadConfig() reads a file that starts with a byte order mark", async () => {
  const path = await Deno.makeTempFile({ suffix: ".jsonc" });
  try {
    await Deno.writeTextFile(path, '\uFEFF{ "tokens": ["t1"] }');
    assert.deepEqual((await loadConfig(path)).tokens, ["t1"]);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("resolveConfig() refuses an empty flag value, as the file refuses an empty one", async (t) => {
  // `--token "$TOKEN"` with TOKEN unset: a host no client can sign in to
  // (a handshake with no token is refused as missing one), while its banner
  // says "auth: 1 token(s)".
  for (
    const [flags, name] of [
      [{ tokens: ["t1", ""] }, "--token"],
      [{ skills: [""] }, "--skills"],
      [{ hostname: "" }, "--hostname"],
    ] satisfies [ConfigFlags, string][]
  ) {
    await t.step(name, () => {
      assert.throws(
        () => resolveConfig(defaultConfig(), { flags }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message === `Invalid ${name} "": expected a non-empty value`,
      );
    });
  }
});

Deno.test("parseConfig() refuses a key given twice in one object, naming where", () => {
  // JSON keeps the last silently: a second "tokens" lower in a long file
  // would turn auth off.
  assert.throws(
    () =>
      parseConfig(
        '{\n  "tokens": ["s3cret"],\n  "limits": {},\n  "tokens": []\n}',
        "dup.jsonc",
      ),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === 'dup.jsonc:4:3: Duplicate key "tokens"',
  );
  assert.throws(
    () => parseConfig('{ "listen": { "port": 1, "port": 2 } }', "dup.jsonc"),
    /^ConfigError: dup\.jsonc:1:26: Duplicate key "port"$/,
  );
  // The same key in two objects is no repeat.
  assert.equal(
    parseConfig('{ "egress": { "secrets": [] }, "store": { "path": "r.db" } }')
      .egress.secrets.length,
    0,
  );
});
