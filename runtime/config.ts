/**
 * The host configuration: `skillbox.jsonc` read as JSONC (`jsonc.ts`),
 * checked against its schema (`config_schema.ts`, the one place a new
 * section goes), then overridden by `SKILLBOX_*` environment variables and
 * CLI flags (`config_overrides.ts`, which documents the precedence).
 *
 * @module
 */

import { ConfigError } from "./config_error.ts";
import { type HostConfig, validateConfig } from "./config_schema.ts";
import { MAX_MODULE_FILE_BYTES } from "./discovery/module_graph.ts";
import { parseJsonc } from "./jsonc.ts";

/**
 * Returns the configuration with every default applied.
 *
 * @returns a fresh default config
 * @example Read a default
 * ```ts
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(defaultConfig().limits.maxParallel, 4);
 * ```
 */
export function defaultConfig(): HostConfig {
  return parseConfig("{}");
}

/**
 * Parses and validates the text of a `skillbox.jsonc`.
 *
 * @param text the JSONC text (comments and trailing commas allowed)
 * @param file the file name used in error messages
 * @returns the config, defaults applied
 * @throws {ConfigError} on a syntax error (with line and column) or a schema
 *   error (with the field path)
 * @example Parse, then fail on a typo
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import { ConfigError } from "./config_error.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig('{ "listen": { "port": 9000 }, // comment\n }');
 * assert.equal(config.listen.port, 9000);
 * assert.throws(() => parseConfig('{ "limits": { "max_parallel": "4" } }'), /limits\.max_parallel/);
 * assert.throws(() => parseConfig('{\n  "listen": }', "a.jsonc"), ConfigError);
 * ```
 */
export function parseConfig(
  text: string,
  file = "skillbox.jsonc",
): HostConfig {
  return validateConfig(parseJsonc(text, file), file);
}

/**
 * Reads and parses a config file: a regular file (a link followed) of at
 * most {@link MAX_MODULE_FILE_BYTES}.
 *
 * @param path the file
 * @returns the config, defaults applied
 * @throws {ConfigError} when the file cannot be read, is not a regular file,
 *   is too large or is invalid
 * @example Load a file
 * ```ts
 * import { loadConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonc" });
 * await Deno.writeTextFile(path, '{ "tokens": ["t1"] }');
 * assert.deepEqual((await loadConfig(path)).tokens, ["t1"]);
 * await Deno.remove(path);
 * ```
 */
export async function loadConfig(path: string): Promise<HostConfig> {
  let text: string;
  try {
    // A device (`/dev/zero`) would be read without end, a FIFO waited on
    // for ever.
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Error("not a regular file");
    if (info.size > MAX_MODULE_FILE_BYTES) {
      throw new Error(`larger than ${MAX_MODULE_FILE_BYTES} bytes`);
    }
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ConfigError(
      `Cannot read config "${path}": ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseConfig(text, path);
}
