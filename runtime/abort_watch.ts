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
 * import { unwatchAbort } from "./abort_watch.ts";
 * unwatchAbort(new AbortController().signal, { cancel() {} });
 * ```
 */
export function unwatchAbort(signal: AbortSignal, item: Cancellable): void {
  (signal as AbortSignal & Watched)[WATCHERS]?.delete(item);
}
