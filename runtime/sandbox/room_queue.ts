/**
 * Calls waiting for room under the sandbox process cap: first come first
 * served (a woken call that still finds no room keeps its place at the
 * front), each with its own deadline.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";

/**
 * The line of calls waiting for room.
 *
 * @example Wait, then be woken
 * ```ts
 * import { RoomQueue } from "./room_queue.ts";
 * import assert from "node:assert/strict";
 * const queue = new RoomQueue(4);
 * const waiting = queue.wait(undefined, false);
 * assert.equal(queue.length, 1);
 * queue.wake(1);
 * await waiting;
 * assert.equal(queue.length, 0);
 * ```
 */
export class RoomQueue {
  readonly #waiters: (() => void)[] = [];
  readonly #max: number;

  /** @param max the process cap (named in the timeout's message) */
  constructor(max: number) {
    this.#max = max;
  }

  /** Calls waiting. */
  get length(): number {
    return this.#waiters.length;
  }

  /**
   * Waits to be woken.
   *
   * @param deadline `performance.now()` after which the wait fails
   * @param front whether to wait at the front (woken before, found no room)
   * @throws {SkillboxError} (rejects) `timeout` past the deadline
   */
  wait(deadline: number | undefined, front: boolean): Promise<void> {
    const started = performance.now();
    return new Promise<void>((resolve, reject) => {
      const expire = () => {
        const at = this.#waiters.indexOf(wake);
        if (at >= 0) this.#waiters.splice(at, 1);
        const waited = Math.round(performance.now() - started);
        reject(
          new SkillboxError(
            "timeout",
            `Cannot start a sandbox process: all ${this.#max} sandbox processes stayed busy for ${waited} ms`,
            { retryable: true },
          ),
        );
      };
      const timer = deadline === undefined
        ? undefined
        : setTimeout(expire, Math.max(0, deadline - performance.now()));
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      if (front) this.#waiters.unshift(wake);
      else this.#waiters.push(wake);
    });
  }

  /**
   * Wakes up to `room` waiting calls, oldest first.
   *
   * @param room how many may go (all of them when omitted)
   */
  wake(room: number = Infinity): void {
    while (room-- > 0 && this.#waiters.length > 0) this.#waiters.shift()!();
  }
}
