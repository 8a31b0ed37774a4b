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

/**
 * Reads a host's stderr until its banner names the WebSocket port.
 *
 * @param reader the host's stderr, as text
 * @returns the port, and all that was read up to it
 * @example
 * ```ts
 * import { readListening } from "./host_cli.ts";
 * import assert from "node:assert/strict";
 * const banner = "skillbox listening: ws://127.0.0.1:8787/a2e (WebSocket)\n";
 * const reader = ReadableStream.from([banner]).getReader();
 * assert.deepEqual(await readListening(reader), { port: "8787", seen: banner });
 * ```
 */
export async function readListening(
  reader: ReadableStreamDefaultReader<string>,
): Promise<{ port: string; seen: string }> {
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`The host ended before listening:\n${seen}`);
    seen += value;
    const port = /skillbox listening: ws:\/\/127\.0\.0\.1:(\d+)\//.exec(seen)
      ?.[1];
    if (port !== undefined) return { port, seen };
  }
}
