/**
 * Lines of text, in and out.
 *
 * The one size-capped line splitter: NDJSON from a client on stdio and
 * framed lines between the host and a sandbox process both go through it.
 * A line longer than the cap is never held in memory: its bytes are counted
 * and it is reported whole as oversize once its newline arrives.
 *
 * The one escaper for text another party wrote that ends up in a line
 * someone reads (a log line, an error message): {@link printableLine}. It
 * lives here, beside the wire, because the client and the host both show
 * such text.
 *
 * @module
 */

const NEWLINE = 0x0a;
const EMPTY = new Uint8Array(0);

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
  // The line so far when it spans chunks: its first `#size` bytes, in one
  // buffer grown by doubling. A writer that trickles a byte a chunk then
  // costs its bytes, not a copy (~200 bytes of heap) per chunk.
  #held: Uint8Array = EMPTY;
  // Bytes of the line so far, held or (past the cap) only counted.
  #size = 0;
  #dropping = false;
  #head: Uint8Array = EMPTY;

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
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (!this.#dropping) {
        if (this.#size + piece.length > this.#max) {
          // Keep counting but stop holding bytes: the line is dropped anyway.
          this.#dropping = true;
          this.#head = this.#headOf(piece);
          this.#held = EMPTY;
        } else if (nl < 0) this.#hold(piece);
      }
      this.#size += piece.length;
      if (nl < 0) return;
      this.#line(piece);
      start = nl + 1;
    }
  }

  /**
   * Ends the stream: a last line without a newline still counts (and one
   * over the cap is reported as oversize).
   */
  end(): void {
    if (this.#size > 0) this.#line(EMPTY);
  }

  // Appends `piece` to the held bytes of the line.
  #hold(piece: Uint8Array): void {
    const size = this.#size + piece.length;
    if (size > this.#held.length) {
      const grown = new Uint8Array(
        Math.min(Math.max(size, 2 * this.#held.length), this.#max),
      );
      grown.set(this.#held.subarray(0, this.#size));
      this.#held = grown;
    }
    this.#held.set(piece, this.#size);
  }

  // The first bytes of the line being dropped: what was held, then `piece`.
  #headOf(piece: Uint8Array): Uint8Array {
    const held = this.#held.subarray(0, Math.min(this.#size, this.#headBytes));
    const head = new Uint8Array(
      Math.min(this.#size + piece.length, this.#headBytes),
    );
    head.set(held);
    head.set(piece.subarray(0, head.length - held.length), held.length);
    return head;
  }

  // Completes the current line, whose last bytes are `tail`.
  #line(tail: Uint8Array): void {
    const size = this.#size;
    const held = this.#held.subarray(0, size - tail.length);
    const dropping = this.#dropping;
    this.#held = EMPTY;
    this.#size = 0;
    this.#dropping = false;
    if (dropping) {
      const head = this.#head;
      this.#head = EMPTY;
      this.#onOversize?.(size, head);
      return;
    }
    if (held.length === 0) {
      this.#onLine(tail);
      return;
    }
    const line = new Uint8Array(size);
    line.set(held);
    line.set(tail, held.length);
    this.#onLine(line);
  }
}

// What a terminal acts on or a log reader splits at: C0 controls but tab,
// DEL, C1 controls (U+009B starts an escape sequence on some terminals),
// the Unicode line and paragraph separators, and the bidirectional
// overrides and isolates that can make a line read as another.
const UNPRINTABLE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * One log line as it may be shown: every character a terminal would act on
 * or a log reader would split at is written as its `\uXXXX` escape. A
 * hostile module's error cannot then recolour or clear the operator's
 * terminal, nor start a line of its own that passes for the host's.
 *
 * @param line any text
 * @returns the text, one printable line (the same string when it was)
 * @example A forged second line and an escape sequence
 * ```ts
 * import { printableLine } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   printableLine("boom\nskillbox: forged\u001b[2J"),
 *   "boom\\u000askillbox: forged\\u001b[2J",
 * );
 * assert.equal(printableLine("tab\tkept"), "tab\tkept");
 * ```
 */
export function printableLine(line: string): string {
  return line.replace(
    UNPRINTABLE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
