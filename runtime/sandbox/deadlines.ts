/**
 * Deadlines of many operations on one timer. A `setTimeout` and its
 * `clearTimeout` per tool call cost more than the rest of the host's
 * bookkeeping for it; here adding and removing a deadline is a map
 * operation, and one timer is armed for the earliest.
 *
 * @module
 */

/** Something that expires. */
export interface Expiring {
  /** Called once when its deadline passes (unless removed before). */
  expire(): void;
}

/**
 * A set of deadlines served by one timer.
 *
 * @example The deadline removed in time never expires
 * ```ts
 * import { Deadlines } from "./deadlines.ts";
 * import assert from "node:assert/strict";
 * // By default the timer keeps nothing alive (an idle pool must not keep
 * // the host running); here nothing else would wait for it.
 * const deadlines = new Deadlines({ unref: false });
 * const { promise, resolve } = Promise.withResolvers<string>();
 * deadlines.add({ expire: () => resolve("late") }, 5);
 * const kept = { expire: () => resolve("removed, never called") };
 * deadlines.add(kept, 1);
 * deadlines.remove(kept);
 * assert.equal(await promise, "late");
 * deadlines.close();
 * ```
 */
export class Deadlines {
  readonly #due = new Map<Expiring, number>();
  readonly #unref: boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedAt = Infinity;

  /**
   * @param options `unref: false` when a pending deadline must keep the
   *   process alive (by default the timer does not)
   */
  constructor(options: { unref?: boolean } = {}) {
    this.#unref = options.unref ?? true;
  }

  /**
   * Adds a deadline `ms` from now.
   *
   * @param item what expires
   * @param ms milliseconds from now
   */
  add(item: Expiring, ms: number): void {
    const at = performance.now() + ms;
    this.#due.set(item, at);
    if (at < this.#armedAt) this.#arm(at);
  }

  /**
   * Removes a deadline (the operation ended in time). The timer stays armed
   * even with nothing due: the next operation most likely reuses it.
   */
  remove(item: Expiring): void {
    this.#due.delete(item);
  }

  /** Drops every deadline and the timer. */
  close(): void {
    this.#due.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Infinity;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(this.#fire, Math.max(0, at - performance.now()));
    // An idle pool's timer must not keep the host alive.
    if (this.#unref) Deno.unrefTimer(this.#timer);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    const expired: Expiring[] = [];
    for (const [item, at] of this.#due) {
      if (at <= now + 1) expired.push(item);
      else if (at < next) next = at;
    }
    for (const item of expired) this.#due.delete(item);
    if (next !== Infinity) this.#arm(next);
    for (const item of expired) item.expire();
  };
}
