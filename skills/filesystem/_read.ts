/**
 * Reading a file under root by what the open file is, not by what its path
 * said a moment before: a path can be replaced between a look and a read,
 * a file can grow, and a stat by path can report a size that reading does
 * not respect (a file under /proc says 0). So a file is opened once, its
 * type is taken from the open handle, and reading stops one byte past the
 * cap whatever the file does.
 *
 * @module
 */

import { constants, type FileHandle, open } from "node:fs/promises";
import { type FsConfig, openedInside } from "./_paths.ts";

/**
 * Reads a regular file whole when it holds at most `maxBytes`.
 *
 * It is opened without waiting (a FIFO would otherwise hold the call until
 * a writer came), then skipped when the open handle is not a regular file,
 * or when more than `maxBytes` are there or arrive while it is read, or
 * when it is not the file inside root (a symlink swapped in: see
 * `openedInside`).
 *
 * @param cfg the toolkit config
 * @param abs absolute path
 * @param maxBytes the most bytes to return
 * @returns the bytes, or null to skip the file
 * @throws {Error} when reading the opened file fails
 * @example Read a small file, skip one over the cap
 * ```ts
 * import { readRegularFile } from "./_read.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const cfg = { root, writable: false };
 * await Deno.writeTextFile(`${root}/a.txt`, "hello");
 * const bytes = await readRegularFile(cfg, `${root}/a.txt`, 10);
 * assert.equal(new TextDecoder().decode(bytes!), "hello");
 * assert.equal(await readRegularFile(cfg, `${root}/a.txt`, 4), null);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function readRegularFile(
  cfg: FsConfig,
  abs: string,
  maxBytes: number,
): Promise<Uint8Array | null> {
  await using handle = await open(
    abs,
    constants.O_RDONLY | constants.O_NONBLOCK,
  ).catch(() => null);
  // Gone since it was listed, or not readable: nothing to search.
  if (handle === null) return null;
  const info = await handle.stat();
  if (!info.isFile() || info.size > maxBytes) return null;
  if (!await openedInside(cfg, abs, info)) return null;
  return await readAtMost(handle, maxBytes, info.size);
}

/**
 * Reads an open file to its end, or gives up as soon as it holds more than
 * `maxBytes`: at most `maxBytes + 1` bytes are ever read.
 *
 * @param handle the open file
 * @param maxBytes the most bytes to return
 * @param sizeHint the size it said it had (the first buffer's size)
 * @returns the bytes, or null when there were more than `maxBytes`
 * @example Whatever the file claimed, reading stops past the cap
 * ```ts
 * import { readAtMost } from "./_read.ts";
 * import { open } from "node:fs/promises";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "x".repeat(100));
 * const handle = await open(path);
 * assert.equal(await readAtMost(handle, 10, 0), null);
 * await handle.close();
 * await Deno.remove(path);
 * ```
 */
export async function readAtMost(
  handle: FileHandle,
  maxBytes: number,
  sizeHint = 0,
): Promise<Uint8Array | null> {
  // One byte past the hint finds the end in the second read; one byte
  // past the cap tells a file that fits from one that does not.
  let buf = new Uint8Array(
    Math.min(Math.max(sizeHint, 8191) + 1, maxBytes + 1),
  );
  let length = 0;
  for (;;) {
    if (length === buf.length) {
      if (length > maxBytes) return null;
      const bigger = new Uint8Array(Math.min(length * 2, maxBytes + 1));
      bigger.set(buf);
      buf = bigger;
    }
    const { bytesRead } = await handle.read(
      buf,
      length,
      buf.length - length,
      null,
    );
    if (bytesRead === 0) return buf.subarray(0, length);
    length += bytesRead;
  }
}
