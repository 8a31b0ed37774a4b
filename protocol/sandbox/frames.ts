/**
 * NDJSON framing between the host and a sandbox process.
 *
 * The sandbox's stdout is shared with untrusted code (`node:fs` can write to
 * fd 1 from a worker), so every frame the sandbox writes starts with a
 * per-process random nonce that only the host and the sandbox's own main
 * thread know. Lines without it are noise: counted, never parsed. Lines are
 * bounded in length so a skill printing 100 MB without a newline cannot grow
 * host memory (the splitting itself is `protocol/lines.ts`).
 *
 * @module
 */

import { LineSplitter } from "../lines.ts";

// Bytes asked for per read of a byte stream.
const READ_CHUNK = 64 * 1024;

/**
 * Makes a fresh nonce for one sandbox process.
 *
 * @returns 32 hex characters from the CSPRNG
 * @example
 * ```ts
 * import { makeNonce } from "./frames.ts";
 * import assert from "node:assert/strict";
 * assert.match(makeNonce(), /^[0-9a-f]{32}$/);
 * ```
 */
export function makeNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Encodes one frame: the nonce, then one line of JSON.
 *
 * @param nonce the process's nonce ("" for host-to-sandbox frames)
 * @param json the message, already serialized (must not contain a newline)
 * @returns the framed line
 * @example
 * ```ts
 * import { encodeFrame } from "./frames.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeFrame("n0", '{"t":"ready"}'), 'n0{"t":"ready"}\n');
 * ```
 */
export function encodeFrame(nonce: string, json: string): string {
  return nonce + json + "\n";
}

/** Options for {@link FrameSplitter} and {@link readFrames}. */
export interface ReadFramesOptions {
  /** Only lines carrying this nonce are frames. @default "" (every line) */
  nonce?: string;
  /** Longer lines are dropped whole. @default 16 MiB */
  maxLineBytes?: number;
  /** Told about each line that is not a frame (its byte length). */
  onNoise?: (bytes: number) => void;
}

/** Options for {@link readFrames}. */
export interface ReadOptions extends ReadFramesOptions {
  /**
   * Asked after each chunk's frames are handed on, before the next read:
   * a promise holds the next read until it settles, `null` reads at once.
   * A reader that expects nothing for now (no operation in flight) holds
   * the read until it writes again or the process exits. Asking for a
   * read runs the byte-stream machinery and an op synchronously; asked for
   * at once, it ran in the turn that had just completed an answer, before
   * the answer's WebSocket frame went out (an outcome reaches the
   * transport a few promise turns after its frame: the caller, the
   * handler, the dispatcher). Held, it runs after the next write, while
   * the sandbox works. Nothing is lost meanwhile: the pipe holds what
   * comes. @default never hold
   */
  hold?: () => Promise<void> | null;
}

/**
 * Splits pushed bytes into frames: drops over-long lines, keeps only those
 * carrying the nonce, and parses the JSON after it, handing each message to
 * a callback as soon as its line is complete. A garbage prefix before the
 * nonce (a skill printing without a newline) is skipped. Pushed chunks may
 * be reused by the caller afterwards: a partial line is copied.
 *
 * @example Frames split across chunks
 * ```ts
 * import { FrameSplitter } from "./frames.ts";
 * import assert from "node:assert/strict";
 * const got: unknown[] = [];
 * const splitter = new FrameSplitter((m) => got.push(m), { nonce: "N1" });
 * const bytes = new TextEncoder().encode('hello\ngarbageN1{"t":"ok"}\n');
 * splitter.push(bytes.subarray(0, 12));
 * splitter.push(bytes.subarray(12));
 * assert.deepEqual(got, [{ t: "ok" }]);
 * ```
 */
export class FrameSplitter {
  readonly #onFrame: (message: unknown, json: string) => void;
  readonly #nonce: string;
  readonly #onNoise: ((bytes: number) => void) | undefined;
  readonly #decoder = new TextDecoder();
  readonly #lines: LineSplitter;

  /**
   * @param onFrame called with each parsed message, in order, and its JSON
   *   text (a receiver that hands the message on can pass the text)
   * @param options nonce, line bound, noise callback
   */
  constructor(
    onFrame: (message: unknown, json: string) => void,
    options: ReadFramesOptions = {},
  ) {
    this.#onFrame = onFrame;
    this.#nonce = options.nonce ?? "";
    this.#onNoise = options.onNoise;
    this.#lines = new LineSplitter((line) => this.#line(line), {
      maxLineBytes: options.maxLineBytes,
      onOversize: this.#onNoise,
    });
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk bytes; not kept after the call returns
   */
  push(chunk: Uint8Array): void {
    this.#lines.push(chunk);
  }

  /** Ends the stream: a last line without a newline still counts. */
  end(): void {
    this.#lines.end();
  }

  // One complete line: a frame when it carries the nonce and JSON after it.
  #line(line: Uint8Array): void {
    const text = this.#decoder.decode(line);
    const nonce = this.#nonce;
    const at = nonce === "" ? 0 : text.lastIndexOf(nonce);
    let message: unknown;
    let json = "";
    try {
      if (at < 0) throw new SyntaxError("No nonce");
      json = at === 0 && nonce === "" ? text : text.slice(at + nonce.length);
      message = JSON.parse(json);
    } catch {
      this.#onNoise?.(line.length);
      return;
    }
    this.#onFrame(message, json);
  }
}

/**
 * Reads frames from a byte stream with a {@link FrameSplitter}, calling
 * `onFrame` synchronously as each line completes (no async iterator between
 * the pipe and the message: fewer promise turns per frame).
 *
 * @param stream the sandbox's stdout (or the host's stdin, nonce "")
 * @param onFrame called with each parsed message, in order
 * @param options nonce, line bound, noise callback, when to hold a read
 * @returns resolves when the stream ends; rejects when it errors
 * @example Skip noise
 * ```ts
 * import { readFrames } from "./frames.ts";
 * import assert from "node:assert/strict";
 * const text = 'hello\nxx{"bad":1}\ngarbageN1{"t":"ok"}\n';
 * const got: unknown[] = [];
 * await readFrames(new Blob([text]).stream(), (m) => got.push(m), {
 *   nonce: "N1",
 * });
 * assert.deepEqual(got, [{ t: "ok" }]);
 * ```
 */
export async function readFrames(
  stream: ReadableStream<Uint8Array>,
  onFrame: (message: unknown) => void,
  options: ReadOptions = {},
): Promise<void> {
  const splitter = new FrameSplitter(onFrame, options);
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream: read chunks as the stream makes them.
  }
  if (byob === null) {
    const reader = stream.getReader();
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        splitter.push(value);
        const held = options.hold?.() ?? null;
        if (held !== null) await held;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    // One buffer for the whole stream: a default reader allocates a fresh
    // 64 KiB chunk for every read, which the GC then has to collect.
    let buffer = new Uint8Array(READ_CHUNK);
    try {
      while (true) {
        const { done, value } = await byob.read(buffer);
        if (done || value === undefined) break;
        splitter.push(value);
        buffer = new Uint8Array(value.buffer);
        const held = options.hold?.() ?? null;
        if (held !== null) await held;
      }
    } finally {
      byob.releaseLock();
    }
  }
  splitter.end();
}
