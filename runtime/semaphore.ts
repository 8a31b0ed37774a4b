/**
 * A FIFO counting semaphore: the host's concurrency limits (`max_parallel`
 * per session, a host-wide cap) queue work instead of dropping it.
 *
 * @module
 */

/** Gives back the slot taken by {@link Semaphore.acquire}; idempotent. */
export type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * Lets at most `limit` holders run at once; the rest wait in arrival order.
 *
 * @example Limit to one holder at a time
 * ```ts
 * import { Semaphore } from "./semaphore.ts";
 * import assert from "node:assert/strict";
 * const gate = new Semaphore(1);
 * const first = await gate.acquire();
 * const second = gate.acquire();
 * assert.equal(gate.waiting, 1);
 * first();
 * (await second)();
 * assert.equal(gate.active, 0);
 * ```
 */
export class Semaphore {
  #limit: number;
  #active = 0;
  #queue: Waiter[] = [];

  /**
   * @param limit how many holders may run at once (at least 1)
   * @throws {RangeError} when `limit` is not a positive integer
   */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot create semaphore: limit "${limit}" is not a positive integer`,
      );
    }
    this.#limit = limit;
  }

  /** How many holders run now. */
  get active(): number {
    return this.#active;
  }

  /** How many acquirers wait for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Takes a slot if one is free and nobody waits, without waiting (the hot
   * path skips a promise and its microtask hop).
   *
   * @returns a function that frees the slot, or null when none is free
   * @example Take the only slot, then fail to take another
   * ```ts
   * import { Semaphore } from "./semaphore.ts";
   * import assert from "node:assert/strict";
   * const gate = new Semaphore(1);
   * const release = gate.tryAcquire();
   * assert.ok(release);
   * assert.equal(gate.tryAcquire(), null);
   * release();
   * assert.equal(gate.active, 0);
   * ```
   */
  tryAcquire(): Release | null {
    if (this.#active >= this.#limit) return null;
    this.#active++;
    return this.#releaser();
  }

  /**
   * Waits for a slot.
   *
   * @param signal gives up waiting (rejecting with its reason) when aborted
   * @returns a function that frees the slot
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.#limit) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#queue.push(waiter);
    });
  }

  #releaser(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#queue.shift();
      if (next) {
        // The slot passes straight to the next waiter: active stays the same.
        if (next.onAbort) {
          next.signal?.removeEventListener("abort", next.onAbort);
        }
        next.resolve(this.#releaser());
      } else {
        this.#active--;
      }
    };
  }
}
