/**
 * `--config` names any path: a device or a FIFO was read without end or
 * waited on for ever, and a huge file was read whole. Only a regular file
 * is read (a link followed), and no more than the bound on one local file.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../../runtime/config_error.ts";
import { loadConfig } from "../../runtime/config.ts";
import { MAX_MODULE_FILE_BYTES } from "../../runtime/discovery/module_graph.ts";

async function refusal(path: string): Promise<string> {
  try {
    await loadConfig(path);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`read: ${path}`);
}

Deno.test("loadConfig() refuses a device or a FIFO as not a regular file", async () => {
  assert.equal(
    await refusal("/dev/null"),
    'Cannot read config "/dev/null": not a regular file',
  );
  const dir = await Deno.makeTempDir();
  try {
    const fifo = join(dir, "skillbox.jsonc");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success);
    assert.equal(
      await refusal(fifo),
      `Cannot read config "${fifo}": not a regular file`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfig() follows a link to a regular file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "real.jsonc"), '{ "tokens": ["t1"] }');
    await Deno.symlink("real.jsonc", join(dir, "skillbox.jsonc"));
    const config = await loadConfig(join(dir, "skillbox.jsonc"));
    assert.deepEqual(config.tokens, ["t1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfig() refuses a file past the bound on one local file", async () => {
  const path = await Deno.makeTempFile({ suffix: ".jsonc" });
  try {
    await Deno.writeTextFile(path, "{}".padEnd(MAX_MODULE_FILE_BYTES + 1));
    assert.equal(
      await refusal(path),
      `Cannot read config "${path}": larger than ${MAX_MODULE_FILE_BYTES} bytes`,
    );
  } finally {
    await Deno.remove(path);
  }
});
