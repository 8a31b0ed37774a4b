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

/** A host CLI process started by {@link spawnHostCli}. */
export interface HostCli {
  /** The process: kill it and await its status when done. */
  child: Deno.ChildProcess;
  /** Its stderr, as text; hand it to {@link readListening}. */
  stderr: ReadableStreamDefaultReader<string>;
}

/**
 * Starts the host as `deno run host` does, with `args` after the main
 * script, in `cwd`; stdin and stdout are closed and stderr is piped, since
 * the banner and the log are where tests read it.
 *
 * @example
 * ```ts ignore
 * import { readListening, spawnHostCli } from "./host_cli.ts";
 * const host = spawnHostCli(["--port", "0"], Deno.cwd());
 * const { port } = await readListening(host.stderr);
 * host.child.kill("SIGTERM");
 * await host.child.status;
 * ```
 */
export function spawnHostCli(args: string[], cwd: string): HostCli {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...HOST_FLAGS, HOST_MAIN, ...args],
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  return { child, stderr };
}
