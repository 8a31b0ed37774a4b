/**
 * A Node-style readable over `Deno.stdin`, for the SDK's
 * `StdioServerTransport`: Deno's `process.stdin` allocates and zero-fills a
 * fresh 64 KiB `Buffer` for every read of a pipe (a message's worth of work
 * for the allocator and the GC, per message); this one reads into one
 * reused buffer and hands on a copy of just the bytes read.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Readable } from "node:stream";

/** What is read from: `Deno.stdin`, or a stand-in. */
export interface ByteSource {
  /** Reads into `buffer`; null at the end. */
  read(buffer: Uint8Array): Promise<number | null>;
}

/**
 * Creates the readable.
 *
 * @param input where bytes come from @default Deno.stdin
 * @param size the read buffer's size in bytes @default 65536
 * @returns a readable that ends when `input` does
 * @example Read two chunks, then the end
 * ```ts
 * import { stdinReadable } from "./stdin.ts";
 * import assert from "node:assert/strict";
 * const chunks = [new TextEncoder().encode("a\n"), new TextEncoder().encode("b\n")];
 * const input = {
 *   read(buffer: Uint8Array) {
 *     const next = chunks.shift();
 *     if (!next) return Promise.resolve(null);
 *     buffer.set(next);
 *     return Promise.resolve(next.length);
 *   },
 * };
 * let text = "";
 * for await (const chunk of stdinReadable(input)) text += String(chunk);
 * assert.equal(text, "a\nb\n");
 * ```
 */
export function stdinReadable(
  input: ByteSource = Deno.stdin,
  size = 64 * 1024,
): Readable {
  const buffer = new Uint8Array(size);
  return new Readable({
    read() {
      input.read(buffer).then((n) => {
        // A copy: the SDK keeps a chunk until its line is complete.
        this.push(n === null ? null : Buffer.from(buffer.subarray(0, n)));
      }, (error: Error) => this.destroy(error));
    },
  });
}
