/**
 * Deadlines and abort plumbing written once: a wall-clock deadline that
 * aborts a signal (and follows a parent signal), a race of a promise against
 * a signal, a bounded wait, and many deadlines on one timer
 * ({@link Deadlines}: the sandbox's operations and MCP's pending answers,
 * where a `setTimeout` per call costs more than the rest of the call's
 * bookkeeping). Host code that needs "stop this after N ms or when the
 * caller cancels" uses these instead of its own timer, controller and
 * `Promise.race`.
 *
 * @module
 */

/** A running deadline; see {@link startDeadline}. */
export interface Deadline {
  /** Aborted at the deadline, when the parent aborts, or on dispose. */
  readonly signal: AbortSignal;
  /** Milliseconds left before the deadline (at least 1, for timeouts downstream). */
  remainingMs(): number;
  /** Stops the timer, forgets the parent and aborts anything still running. */
  dispose(): void;
}

/** Options for {@link startDeadline}. */
export interface DeadlineOptions {
  /** The reason the signal aborts with at the deadline. */
  onTimeout: () => unknown;
  /** A signal whose abort aborts this one too (the session, the request). */
  parent?: AbortSignal;
  /** The reason to abort with when the parent aborts. @default the parent's reason */
  onCancel?: (parentReason: unknown) => unknown;
}

/**
 * Starts a deadline `timeoutMs` from now. Call `dispose()` when the work is
 * done (in a `finally`), so the timer and the parent listener go away.
 *
 * @param timeoutMs how long the work may take, in milliseconds
 * @param options the timeout reason, and the parent signal with its reason
 * @returns the deadline
 * @example A parent that is already aborted aborts at once
 * ```ts
 * import { startDeadline } from "./deadline.ts";
 * import assert from "node:assert/strict";
 * const parent = new AbortController();
 * parent.abort("gone");
 * const deadline = startDeadline(1000, {
 *   parent: parent.signal,
 *   onTimeout: () => new Error("late"),
 *   onCancel: (why) => new Error(`cancelled: ${why}`),
 * });
 * assert.equal((deadline.signal.reason as Error).message, "cancelled: gone");
 * deadline.dispose();
 * ```
 */
export function startDeadline(
  timeoutMs: number,
  options: DeadlineOptions,
): Deadline {
  const ms = Math.max(1, Math.round(timeoutMs));
  const ends = performance.now() + ms;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(options.onTimeout()), ms);
  const parent = options.parent;
  const onCancel = () =>
    controller.abort(
      options.onCancel ? options.onCancel(parent?.reason) : parent?.reason,
    );
  if (parent?.aborted) onCancel();
  else parent?.addEventListener("abort", onCancel, { once: true });
  return {
    signal: controller.signal,
    remainingMs: () => Math.max(1, Math.round(ends - performance.now())),
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onCancel);
      controller.abort();
    },
  };
}

/**
 * Settles like `promise`, but rejects with the signal's reason as soon as
 * the signal aborts, even if `promise` never settles.
 *
 * @param promise the work
 * @param signal the signal that ends the wait
 * @returns what `promise` resolves to
 * @throws the signal's reason when it aborts first
 * @example A promise that never settles, cut by its signal
 * ```ts
 * import { raceAbort } from "./deadline.ts";
 * import assert from "node:assert/strict";
 * const controller = new AbortController();
 * const waiting = raceAbort(new Promise(() => {}), controller.signal);
 * controller.abort(new Error("stop"));
 * await assert.rejects(waiting, /stop/);
 * ```
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() =>
      signal.removeEventListener("abort", onAbort)
    );
  });
}

/**
 * Waits for `promise` to settle, but at most `ms` milliseconds.
 *
 * @param promise what to wait for (its value and failure are ignored)
 * @param ms the bound
 * @returns true when it settled within the bound
 * @example
 * ```ts
 * import { settlesWithin } from "./deadline.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await settlesWithin(Promise.resolve(1), 1000), true);
 * assert.equal(await settlesWithin(new Promise(() => {}), 1), false);
 * ```
 */
export async function settlesWithin(
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), bound]);
  } finally {
    clearTimeout(timer);
  }
}

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
 * import { Deadlines } from "./deadline.ts";
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
