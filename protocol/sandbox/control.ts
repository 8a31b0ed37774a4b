/**
 * How a sandbox process finds its control socket: the Unix socket the host
 * writes its frames to (operations, aborts, RPC answers). It is named by
 * one argument after the main script. A socket, not stdin: Deno reads
 * stdin on a blocking-pool thread, one more thread hop and about 40 µs of
 * CPU per operation, where a socket is read on the process's own event
 * loop. Also, no worker can reach it: the host accepts one connection, the
 * main thread's, and closes the listener at once.
 *
 * @module
 */

/** The argument's prefix; the socket's path follows it. */
export const CONTROL_ARG = "--skillbox-control=";

/**
 * The argument naming a control socket.
 *
 * @param path the socket's path as the process sees it
 * @returns the argument
 * @example
 * ```ts
 * import { controlArg } from "./control.ts";
 * import assert from "node:assert/strict";
 * assert.equal(controlArg("/s/c.sock"), "--skillbox-control=/s/c.sock");
 * ```
 */
export function controlArg(path: string): string {
  return CONTROL_ARG + path;
}

/**
 * The control socket named in a process's arguments.
 *
 * @param args the process's arguments (`Deno.args`)
 * @returns the socket's path, or null when none is named (frames then come
 *   on stdin)
 * @example
 * ```ts
 * import { controlSocketOf } from "./control.ts";
 * import assert from "node:assert/strict";
 * assert.equal(controlSocketOf(["--skillbox-control=/s/c.sock"]), "/s/c.sock");
 * assert.equal(controlSocketOf(["x"]), null);
 * ```
 */
export function controlSocketOf(args: readonly string[]): string | null {
  const arg = args.find((a) => a.startsWith(CONTROL_ARG));
  const path = arg?.slice(CONTROL_ARG.length) ?? "";
  return path.startsWith("/") ? path : null;
}
