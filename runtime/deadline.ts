/**
 * Deadlines and abort plumbing written once, so that host code needing "stop
 * this after N ms or when the caller cancels" uses these instead of its own
 * timer, controller and `Promise.race`:
 *
 * - {@link startDeadline}: a wall-clock deadline that aborts a signal and
 *   follows a parent signal; {@link raceAbort}: a promise raced against a
 *   signal; {@link settlesWithin}: a bounded wait.
 * - {@link Deadlines}: many deadlines on one timer (the sandbox's operations
 *   and MCP's pending answers, where a `setTimeout` per call costs more than
 *   the rest of the call's bookkeeping).
 * - {@link watchAbort}: many short-lived things cancelled by one long-lived
 *   signal (a session's) through one `abort` listener, and
 *   {@link CallSignal}: a call's own signal, following the session's (and
 *   its caller's) only while the call runs.
 *
 * @module
 */

// Deno cuts a timer longer than this to 1 ms: a longer wait is capped here
// (about 24.8 days) rather than ended at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  const ms = Math.min(MAX_TIMER_MS, Math.max(1, Math.round(timeoutMs)));
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
  if (signal.aborted) {
    // The work was started already and will fail on the same signal: its
    // rejection, left unhandled, would end the process.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
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
    timer = setTimeout(() => resolve(false), Math.min(ms, MAX_TIMER_MS));
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

/** Something a signal's abort cancels; see {@link watchAbort}. */
export interface Cancellable {
  /** Called once when the signal aborts (unless unwatched before). */
  cancel(reason: unknown): void;
}

// A signal's watchers are kept on the signal itself: a WeakMap entry per
// short-lived signal (a call's own) cost more than all the rest of watching.
const WATCHERS = Symbol("watchers");

interface Watched {
  [WATCHERS]?: Watchers;
}

// The one listener of a signal, and what it cancels: an object listener,
// so no closure per signal.
class Watchers extends Set<Cancellable> {
  handleEvent(event: Event): void {
    const reason = (event.target as AbortSignal).reason;
    const all = [...this];
    this.clear();
    for (const each of all) each.cancel(reason);
  }
}

/**
 * Cancels `item` when `signal` aborts, until {@link unwatchAbort}. The
 * caller checks `signal.aborted` first: an aborted signal fires no more.
 * However many come and go, a signal gets one `abort` listener: adding and
 * removing a listener per call cost two WebIDL option conversions, and a
 * listener never removed (as the MCP SDK's) piles up on the signal.
 *
 * @param signal the long-lived signal
 * @param item what it cancels
 * @example
 * ```ts
 * import { unwatchAbort, watchAbort } from "./deadline.ts";
 * import assert from "node:assert/strict";
 * const session = new AbortController();
 * const cancelled: string[] = [];
 * const a = { cancel: () => cancelled.push("a") };
 * const b = { cancel: () => cancelled.push("b") };
 * watchAbort(session.signal, a);
 * watchAbort(session.signal, b);
 * unwatchAbort(session.signal, a);
 * session.abort();
 * assert.deepEqual(cancelled, ["b"]);
 * ```
 */
export function watchAbort(signal: AbortSignal, item: Cancellable): void {
  const watched = signal as AbortSignal & Watched;
  let items = watched[WATCHERS];
  if (items === undefined) {
    items = new Watchers();
    watched[WATCHERS] = items;
    signal.addEventListener("abort", items, { once: true });
  }
  items.add(item);
}

/**
 * Stops `signal` from cancelling `item` (it is over).
 *
 * @param signal the signal it was watched on
 * @param item what it would have cancelled
 * @example
 * ```ts
 * import { unwatchAbort } from "./deadline.ts";
 * unwatchAbort(new AbortController().signal, { cancel() {} });
 * ```
 */
export function unwatchAbort(signal: AbortSignal, item: Cancellable): void {
  (signal as AbortSignal & Watched)[WATCHERS]?.delete(item);
}

/**
 * A call's own signal: it aborts when the session's signal does (or the
 * caller's, when the caller brings one: an MCP request's, an in-process
 * caller's), and lets go of both once the call is over.
 *
 * `AbortSignal.any([session, caller])` did this before, but Deno keeps a
 * dependent signal that has an `abort` listener (the sandbox puts one on
 * every call's signal) alive from its sources until it aborts: a session's
 * signal held every call it ever saw, a leak of over a kilobyte per call,
 * and each call grew slower as the session aged (tens of µs per MCP call).
 * The MCP SDK's `Protocol.request` likewise adds an `abort` listener to the
 * signal it is given and never removes it: given a session's signal, every
 * call left one behind, and when the session ended each of them sent the
 * server a `notifications/cancelled` for a request long answered. A call
 * signal is dropped by the signals it follows when released.
 *
 * @example The call ends: the session's end no longer reaches it
 * ```ts
 * import { CallSignal } from "./deadline.ts";
 * import assert from "node:assert/strict";
 * const session = new AbortController();
 * const caller = new AbortController();
 * const done = new CallSignal(session.signal, caller.signal);
 * done.release();
 * const running = new CallSignal(session.signal);
 * session.abort(new Error("session ended"));
 * assert.equal(done.signal.aborted, false);
 * assert.equal(running.signal.reason.message, "session ended");
 * ```
 */
export class CallSignal implements Cancellable {
  readonly #controller = new AbortController();
  readonly #session: AbortSignal;
  readonly #caller: AbortSignal | undefined;

  /**
   * Follows the signals; one already aborted aborts this one at once (the
   * session's reason first, as `AbortSignal.any` would).
   *
   * @param session the session's signal (or another longer-lived one)
   * @param caller the caller's signal for this call, if it brings one
   */
  constructor(session: AbortSignal, caller?: AbortSignal) {
    this.#session = session;
    this.#caller = caller;
    if (session.aborted) this.#controller.abort(session.reason);
    else if (caller?.aborted) this.#controller.abort(caller.reason);
    else {
      watchAbort(session, this);
      if (caller) watchAbort(caller, this);
    }
  }

  /** Aborts when a followed signal does, until released. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Aborts this call's signal (a followed signal aborted).
   *
   * @param reason the signal's reason
   */
  cancel(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /** Stops following the signals (the call is over). Idempotent. */
  release(): void {
    unwatchAbort(this.#session, this);
    if (this.#caller) unwatchAbort(this.#caller, this);
  }
}
