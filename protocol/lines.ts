/**
 * The one size-capped line splitter: NDJSON from a client on stdio and
 * framed lines between the host and a sandbox process both go through it.
 * A line longer than the cap is never held in memory: its bytes are counted
 * and it is reported whole as oversize once its newline arrives.
 *
 * @module
 */

const NEWLINE = 0x0a;

/** Options for {@link LineSplitter}. */
export interface LineSplitterOptions {
  /** Longer lines are dropped whole and reported. @default 16 MiB */
  maxLineBytes?: number;
  /** Told about each dropped line: its byte length and its first bytes. */
  onOversize?: (bytes: number, head: Uint8Array) => void;
  /** How many first bytes of a dropped line to keep for `onOversize`. @default 0 */
  headBytes?: number;
}

/**
 * Splits pushed bytes into lines (without the newline), handing each to a
 * callback as soon as it is complete. Pushed chunks may be reused by the
 * caller afterwards: only a partial line is copied, and a line that lies
 * inside one chunk is passed as a view of it (valid during the callback).
 *
 * @example Lines split across chunks, one over the cap
 * ```ts
 * import { LineSplitter } from "./lines.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const dropped: number[] = [];
 * const splitter = new LineSplitter(
 *   (line) => lines.push(new TextDecoder().decode(line)),
 *   { maxLineBytes: 4, onOversize: (bytes) => dropped.push(bytes) },
 * );
 * const bytes = new TextEncoder().encode("ab\ncd\ntoo long\nef");
 * splitter.push(bytes.subarray(0, 4));
 * splitter.push(bytes.subarray(4));
 * splitter.end();
 * assert.deepEqual(lines, ["ab", "cd", "ef"]);
 * assert.deepEqual(dropped, [8]);
 * ```
 */
export class LineSplitter {
  readonly #onLine: (line: Uint8Array) => void;
  readonly #max: number;
  readonly #onOversize: ((bytes: number, head: Uint8Array) => void) | undefined;
  readonly #headBytes: number;
  #parts: Uint8Array[] = [];
  #size = 0;
  #dropping = false;
  #head: Uint8Array = new Uint8Array(0);

  /**
   * @param onLine called with each complete line, in order
   * @param options line cap, oversize callback
   */
  constructor(
    onLine: (line: Uint8Array) => void,
    options: LineSplitterOptions = {},
  ) {
    this.#onLine = onLine;
    this.#max = options.maxLineBytes ?? 16 * 1024 * 1024;
    this.#onOversize = options.onOversize;
    this.#headBytes = options.headBytes ?? 0;
  }

  /**
   * True while the line under way is past the cap (it will be dropped,
   * and reported when it ends): a reader that stops such a writer at once
   * need not wait for a newline that may never come.
   *
   * @example A line past the cap, before its newline
   * ```ts
   * import { LineSplitter } from "./lines.ts";
   * import assert from "node:assert/strict";
   * const splitter = new LineSplitter(() => {}, { maxLineBytes: 4 });
   * splitter.push(new TextEncoder().encode("abcdef"));
   * assert.equal(splitter.overflowing, true);
   * splitter.push(new TextEncoder().encode("\n"));
   * assert.equal(splitter.overflowing, false);
   * ```
   */
  get overflowing(): boolean {
    return this.#dropping;
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk bytes; not kept after the call returns
   */
  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.#dropping) {
        if (this.#size + (end - start) > this.#max) {
          // Keep counting but stop holding bytes: the line is dropped anyway.
          this.#dropping = true;
          this.#head = this.#headOf(chunk.subarray(start, end));
          this.#parts = [];
        } else if (nl < 0) this.#parts.push(chunk.slice(start, end));
      }
      this.#size += end - start;
      if (nl < 0) return;
      this.#line(chunk.subarray(start, end));
      start = nl + 1;
    }
  }

  /**
   * Ends the stream: a last line without a newline still counts (and one
   * over the cap is reported as oversize).
   */
  end(): void {
    if (this.#size > 0) this.#line(new Uint8Array(0));
  }

  // The first bytes of the line being dropped: what was held, then `piece`.
  #headOf(piece: Uint8Array): Uint8Array {
    if (this.#headBytes === 0) return new Uint8Array(0);
    const size = Math.min(this.#size + piece.length, this.#headBytes);
    const head = new Uint8Array(size);
    let at = 0;
    for (const part of [...this.#parts, piece]) {
      if (at >= size) break;
      const take = part.subarray(0, size - at);
      head.set(take, at);
      at += take.length;
    }
    return head;
  }

  // Completes the current line, whose last bytes are `tail`.
  #line(tail: Uint8Array): void {
    const size = this.#size;
    const dropping = this.#dropping;
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    this.#dropping = false;
    if (dropping) {
      const head = this.#head;
      this.#head = new Uint8Array(0);
      this.#onOversize?.(size, head);
      return;
    }
    if (parts.length === 0) {
      this.#onLine(tail);
      return;
    }
    parts.push(tail);
    this.#onLine(concat(parts, size));
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
