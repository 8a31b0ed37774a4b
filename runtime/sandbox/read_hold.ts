/**
 * When the host's frame reader of a sandbox process asks for its next read
 * (see `hold` in `protocol/sandbox/frames.ts`): at once while an answer is
 * awaited, else only once the process is written to again or has exited.
 *
 * @module
 */

/** What a process has outstanding: maps or sets of awaited answers. */
type Awaited = { readonly size: number };

/**
 * The read hold of one sandbox process.
 *
 * @example Held while nothing is awaited, released by the next write
 * ```ts
 * import { ReadHold } from "./read_hold.ts";
 * import assert from "node:assert/strict";
 * const ops = new Map<string, unknown>();
 * const reads = new ReadHold({ isReady: true }, [ops], new Promise(() => {}));
 * const held = reads.hold();
 * assert.ok(held instanceof Promise);
 * reads.wrote();
 * await held;
 * ops.set("1", {});
 * assert.equal(reads.hold(), null);
 * ```
 */
export class ReadHold {
  readonly #process: { readonly isReady: boolean };
  readonly #awaited: readonly Awaited[];
  #release: (() => void) | null = null;
  #exited = false;

  /**
   * @param process the process (nothing is held before it is ready: its
   *   `ready` frame is awaited)
   * @param awaited what it awaits answers for (operations, aborts, stats)
   * @param exit settles when the OS process has exited: the reader reads
   *   on to the end of the pipe from then on
   */
  constructor(
    process: { readonly isReady: boolean },
    awaited: readonly Awaited[],
    exit: Promise<unknown>,
  ) {
    this.#process = process;
    this.#awaited = awaited;
    const exited = () => {
      this.#exited = true;
      this.wrote();
    };
    exit.then(exited, exited);
  }

  /**
   * The reader's `hold`: null (read at once) while an answer is awaited,
   * else a promise that settles on the next write or the exit.
   */
  readonly hold = (): Promise<void> | null => {
    if (this.#exited || !this.#process.isReady) return null;
    for (const each of this.#awaited) if (each.size > 0) return null;
    return new Promise((resolve) => this.#release = resolve);
  };

  /** The process was written to: a held read goes ahead. */
  wrote(): void {
    const release = this.#release;
    if (release === null) return;
    this.#release = null;
    release();
  }
}
