/**
 * The host's log lines on their way to stderr: in order, written in the
 * background, and bounded.
 *
 * A reader that stops reading without closing (a paused pager, a log driver
 * that blocks while its buffer is full, as Docker's does by default) fills
 * the pipe, and a synchronous write would then stop the whole host at its
 * next line. So lines wait here, up to a bound; past it they are counted and
 * dropped, and the count is told once the reader reads again. Once nobody
 * reads (the reader exited: a supervisor, `| head`) writing fails with a
 * broken pipe, and the host serves on rather than die of a line nobody
 * would read.
 *
 * A line often quotes what others wrote (a module's error, a server's
 * message, a file name), so each is made printable first
 * (`printableLine()` in `protocol/lines.ts`).
 *
 * @module
 */

import { printableLine } from "../protocol/lines.ts";
import { settlesWithin } from "./deadline.ts";

const encoder = new TextEncoder();

/** Where lines go: `Deno.stderr`, or anything that writes like it. */
export interface LineSink {
  /** Writes some of the bytes, resolving to how many. */
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Log lines written in order in the background, at most `maxWaiting` bytes
 * of them waiting for the reader.
 *
 * @example Lines wait for a reader that is slow, and none is lost
 * ```ts
 * import { LogLines } from "./log_lines.ts";
 * import assert from "node:assert/strict";
 * const out: string[] = [];
 * const sink = {
 *   async write(bytes: Uint8Array) {
 *     await new Promise((r) => setTimeout(r, 1));
 *     out.push(new TextDecoder().decode(bytes));
 *     return bytes.length;
 *   },
 * };
 * const lines = new LogLines(sink);
 * lines.log("first");
 * lines.log("second");
 * await lines.written(1000);
 * assert.equal(out.join(""), "first\nsecond\n");
 * ```
 */
export class LogLines {
  // The platform's bounded queue: it writes one line at a time, in order,
  // and counts the bytes waiting (the one being written among them).
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #maxWaiting: number;
  #dropped = 0;
  #gone = false;
  // The last line's write, and then what it logged (the dropped count).
  #last: Promise<void> = Promise.resolve();

  /**
   * @param sink where the lines go
   * @param maxWaiting the most bytes waiting to be written; later lines are
   * dropped (and counted) until the reader catches up, and a line longer
   * than this is cut to it. @default 1 MiB
   */
  constructor(sink: LineSink, maxWaiting = 1 << 20) {
    this.#maxWaiting = maxWaiting;
    this.#writer = new WritableStream<Uint8Array>({
      async write(line) {
        for (let at = 0; at < line.length;) {
          at += await sink.write(line.subarray(at));
        }
      },
    }, new ByteLengthQueuingStrategy({ highWaterMark: maxWaiting }))
      .getWriter();
  }

  /**
   * Logs one line, made printable ({@link printableLine}), and a newline.
   * Never throws, never waits.
   *
   * @param line the text
   */
  log(line: string): void {
    if (this.#gone) return;
    const text = printableLine(line) + "\n";
    let bytes = encoder.encode(text);
    if (bytes.length > this.#maxWaiting) {
      // It would never fit, and nothing waiting would drain to say it was
      // dropped: its start goes (encodeInto writes whole characters only).
      bytes = new Uint8Array(this.#maxWaiting);
      const { written } = encoder.encodeInto(text, bytes.subarray(0, -1));
      bytes[written] = 10; // "\n"
      bytes = bytes.subarray(0, written + 1);
    }
    if (bytes.length > this.#writer.desiredSize!) {
      this.#dropped++;
      return;
    }
    this.#last = this.#writer.write(bytes).then(() => {
      // Nothing waits any more: the reader reads again.
      if (this.#dropped === 0) return;
      if (this.#writer.desiredSize !== this.#maxWaiting) return;
      const dropped = this.#dropped;
      this.#dropped = 0;
      this.log(`skillbox: ${dropped} log line(s) dropped: stderr was not read`);
      return this.#last;
    }, () => {
      // Nobody reads them.
      this.#gone = true;
    });
  }

  /**
   * Waits until every line logged so far is written (or the sink failed),
   * for at most `ms`: a reader that stays paused must not keep the process
   * from exiting.
   *
   * @param ms the most to wait
   */
  async written(ms: number): Promise<void> {
    await settlesWithin(this.#last, ms);
  }
}
