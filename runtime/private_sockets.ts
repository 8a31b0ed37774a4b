/**
 * Where the host's private Unix sockets live (each egress proxy, each
 * sandbox process's control socket): one folder per host process, made on
 * first use with mode 0700 (again if it was removed), removed when the host
 * exits. Each socket has a random name; a confined process sees only its
 * own sockets (bound into its namespace).
 *
 * @module
 */

import { join } from "node:path";

let dir: string | null = null;
// Every folder this process made: a folder removed while the host ran (a
// /tmp cleaner on a host up for weeks) is made again, under a new name,
// rather than no sandbox process or egress proxy starting from then on.
const made: string[] = [];

/**
 * A fresh socket path in the host's socket folder.
 *
 * @returns an absolute path that does not exist yet
 * @example
 * ```ts
 * import { privateSocketPath } from "./private_sockets.ts";
 * import assert from "node:assert/strict";
 * assert.notEqual(privateSocketPath(), privateSocketPath());
 * ```
 */
export function privateSocketPath(): string {
  if (dir === null || !isDirectory(dir)) {
    // Short: a Unix socket path has room for about 107 bytes.
    dir = Deno.makeTempDirSync({ prefix: "skillbox-sockets-" });
    if (made.push(dir) === 1) {
      globalThis.addEventListener("unload", () => {
        for (const folder of made) {
          try {
            Deno.removeSync(folder, { recursive: true });
          } catch {
            // Already gone.
          }
        }
      });
    }
  }
  const name = crypto.getRandomValues(new Uint8Array(12)).toHex();
  return join(dir, `${name}.sock`);
}

// lstat: a link planted where the folder was is not the folder.
function isDirectory(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}
