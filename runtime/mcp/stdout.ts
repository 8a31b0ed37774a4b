/**
 * A Node-style writable over `Deno.stdout` that writes synchronously, for
 * the SDK's `StdioServerTransport`: Deno's `process.stdout` can let a later
 * message overtake an earlier one on a pipe (a result before its progress
 * notifications); synchronous writes keep the order.
 *
 * @module
 */

import { Writable } from "node:stream";

const encoder = new TextEncoder();

/**
 * Creates the writable.
 *
 * @param out where bytes go @default Deno.stdout
 * @returns a writable that writes each chunk whole, in order
 * @example
 * ```ts
 * import { orderedStdout } from "./stdout.ts";
 * import assert from "node:assert/strict";
 * const seen: number[] = [];
 * const w = orderedStdout({ writeSync: (b) => (seen.push(b.length), b.length) });
 * await new Promise((r) => w.write("abc", r));
 * assert.deepEqual(seen, [3]);
 * ```
 */
export function orderedStdout(
  out: { writeSync(bytes: Uint8Array): number } = Deno.stdout,
): Writable {
  return new Writable({
    write(chunk, encoding, done) {
      try {
        let bytes: Uint8Array = typeof chunk === "string"
          ? encoder.encode(chunk)
          : chunk;
        while (bytes.length > 0) bytes = bytes.subarray(out.writeSync(bytes));
        done();
      } catch (error) {
        done(error as Error);
      }
      void encoding;
    },
  });
}
