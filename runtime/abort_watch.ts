/**
 * Many short-lived things cancelled by one long-lived signal (a session's),
 * with one `abort` listener per signal however many come and go. Adding and
 * removing a listener per call cost two WebIDL option conversions, and a
 * listener never removed (as the MCP SDK's) piles up on the signal.
 *
 * @module
 */

/** Something a signal's abort cancels. */
export interface Cancellable {
  /** Called once when the signal aborts (unless unwatched before). */
  cancel(reason: unknown): void;
}

const watched = new WeakMap<AbortSignal, Set<Cancellable>>();

/**
 * Cancels `item` when `signal` aborts, until {@link unwatchAbort}. The
 * caller checks `signal.aborted` first: an aborted signal fires no more.
 *
 * @param signal the long-lived signal
 * @param item what it cancels
 * @example
 * ```ts
 * import { unwatchAbort, watchAbort } from "./abort_watch.ts";
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
  let items = watched.get(signal);
  if (items === undefined) {
    const set = new Set<Cancellable>();
    items = set;
    watched.set(signal, set);
    signal.addEventListener("abort", () => {
      const all = [...set];
      set.clear();
      for (const each of all) each.cancel(signal.reason);
    }, { once: true });
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
 * import { unwatchAbort } from "./abort_watch.ts";
 * unwatchAbort(new AbortController().signal, { cancel() {} });
 * ```
 */
export function unwatchAbort(signal: AbortSignal, item: Cancellable): void {
  watched.get(signal)?.delete(item);
}
