/**
 * The host as an operator starts it: its main script and the flags of the
 * `host` task in deno.json, read from there so tests that spawn a host
 * process never drift from what `deno run host` runs.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** The CLI's main script, `host.ts`. */
export const HOST_MAIN: string = fileURLToPath(
  new URL("../../host.ts", import.meta.url),
);

const project = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
) as { tasks: { host: string } };

/**
 * The flags of the `host` task (`--no-prompt`, `--allow-*`, ...).
 *
 * @example
 * ```ts
 * import { HOST_FLAGS } from "./host_cli.ts";
 * import assert from "node:assert/strict";
 * assert.ok(HOST_FLAGS.includes("--no-prompt"));
 * ```
 */
export const HOST_FLAGS: readonly string[] = project.tasks.host.split(/\s+/)
  .filter((word) => word.startsWith("--"));
