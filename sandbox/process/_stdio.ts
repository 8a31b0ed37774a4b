/**
 * The pipe ends of a sandbox process's main thread (call or discovery
 * process): the one writer of its stdout, and the reader of the host's
 * frames.
 *
 * @module
 */

import type { FrameSplitter } from "../../protocol/sandbox/pipe.ts";

const encoder = new TextEncoder();
// Lines are encoded into this one buffer when they fit (a UTF-16 unit is at
// most 3 UTF-8 bytes): no fresh array per answer. Longer ones get their own.
const OUT = new Uint8Array(64 * 1024);

/**
 * Writes lines to stdout, whole, synchronously: an async write runs on a
 * blocking-pool thread, one more thread hop on every answer. The host
 * always drains the pipe, so a full pipe stalls this thread only briefly,
 * and that stall is the back-pressure on an event flood. Exits the process
 * when the host closed the pipe: it is gone.
 *
 * @param lines nonce-framed lines, each ending in a newline
 * @example Nothing to write
 * ```ts
 * import { writeOut } from "./_stdio.ts";
 * writeOut("");
 * ```
 */
export function writeOut(lines: string): void {
  const bytes = lines.length * 3 <= OUT.length
    ? OUT.subarray(0, encoder.encodeInto(lines, OUT).written)
    : encoder.encode(lines);
  let at = 0;
  try {
    while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
  } catch {
    Deno.exit(0);
  }
}

/** Where frames are read from: stdin or the control socket. */
export interface FrameSource {
  /** Reads into `buffer`: how many bytes, or null at the end. */
  read(buffer: Uint8Array): Promise<number | null>;
}

/**
 * Pushes what a source holds into a frame splitter, read straight into one
 * buffer: no stream, no async iterator, one promise per chunk.
 *
 * @param source stdin or the control socket
 * @param splitter where the bytes go
 * @param enough asked before each read: stop once it says so
 * @returns resolves at the end of the source, or once `enough` says so
 * @example Stop after the first frame
 * ```ts
 * import { readFrom } from "./_stdio.ts";
 * import { FrameSplitter } from "../../protocol/sandbox/pipe.ts";
 * import assert from "node:assert/strict";
 * const chunks = ['{"t":"a"}\n', '{"t":"b"}\n'].map((s) => new TextEncoder().encode(s));
 * const source = {
 *   read: (buffer: Uint8Array) => {
 *     const chunk = chunks.shift();
 *     if (chunk === undefined) return Promise.resolve(null);
 *     buffer.set(chunk);
 *     return Promise.resolve(chunk.length);
 *   },
 * };
 * const got: unknown[] = [];
 * await readFrom(source, new FrameSplitter((m) => got.push(m)), () => got.length > 0);
 * assert.deepEqual(got, [{ t: "a" }]);
 * ```
 */
export async function readFrom(
  source: FrameSource,
  splitter: FrameSplitter,
  enough: () => boolean = () => false,
): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  while (!enough()) {
    const n = await source.read(buffer);
    if (n === null) return;
    splitter.push(buffer.subarray(0, n));
  }
}
