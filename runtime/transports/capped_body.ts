/**
 * Reading a request body up to a size cap, so that a huge body costs no
 * more memory than the limit.
 *
 * @module
 */

/** A body read up to a cap. */
export interface CappedBody {
  /** The text: all of it, or (over the cap) the start, to salvage an id. */
  text: string;
  /** How many bytes the body had. */
  bytes: number;
  /** Whether it was over the cap. */
  over: boolean;
}

/** How much of an oversize body is kept to find the request's id in. */
export const SALVAGE_BYTES = 4096;

/**
 * Reads a body, keeping at most `max` bytes; on overflow the start is kept
 * to salvage the request's id. By default it reads to the end even past
 * the limit: cutting the upload short would make many clients report a
 * reset instead of reading the answer. With `stopAtCap` it stops reading
 * there (`bytes` then counts what was read): for a form nobody needs an
 * answer to beyond "too large", where reading on only costs the host.
 *
 * @param body the request's body, or null
 * @param max the cap in bytes
 * @param options `stopAtCap`: cancel the body once it is over the cap
 * @returns the text, its size, and whether it was over the cap
 * @example Under and over the cap
 * ```ts
 * import { readCapped } from "./capped_body.ts";
 * import assert from "node:assert/strict";
 * const body = (s: string) => new Response(s).body;
 * assert.deepEqual(await readCapped(body("hello"), 10), { text: "hello", bytes: 5, over: false });
 * assert.equal((await readCapped(body("hello"), 4)).over, true);
 * ```
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  options: { stopAtCap?: boolean } = {},
): Promise<CappedBody> {
  if (!body) return { text: "", bytes: 0, over: false };
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let over = false;
  // Breaking out of the loop cancels the body.
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    // Past the limit, keep reading but discard (or stop).
    if (bytes > max) {
      over = true;
      if (options.stopAtCap) break;
    } else chunks.push(chunk);
  }
  if (over) {
    const first = chunks[0]?.slice(0, SALVAGE_BYTES) ?? new Uint8Array();
    return { text: new TextDecoder().decode(first), bytes, over };
  }
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return { text: new TextDecoder().decode(all), bytes, over: false };
}
