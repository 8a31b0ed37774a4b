/**
 * A signal for one request that follows a longer-lived one (a session's)
 * only while the request runs.
 *
 * The SDK's `Protocol.request` adds an `abort` listener to the signal it is
 * given and never removes it. Given a session's signal, every call of the
 * session left one behind: they piled up (each `addEventListener` walks the
 * list, so calls grew slower with the session's age), and when the session
 * ended, every one of them fired and sent the server a
 * `notifications/cancelled` for a request long answered. Each request gets
 * a signal of its own instead, dropped by the long-lived one once released;
 * a long-lived signal has one listener of ours, however many calls it saw.
 *
 * @module
 */

import { unwatchAbort, watchAbort } from "../abort_watch.ts";

/** A request's own signal, following a longer-lived one until released. */
export interface Follower {
  /** Aborts when the longer-lived signal does, until released. */
  readonly signal: AbortSignal;
  /** Stops following (the request is over). Idempotent. */
  release(): void;
}

/**
 * Makes a signal that aborts with `outer` until it is released.
 *
 * @param outer the longer-lived signal (a session's)
 * @returns the follower; release it when the request is over
 * @example A released follower is not aborted with the session
 * ```ts
 * import { followSignal } from "./follow_signal.ts";
 * import assert from "node:assert/strict";
 * const session = new AbortController();
 * const done = followSignal(session.signal);
 * done.release();
 * const running = followSignal(session.signal);
 * session.abort(new Error("session ended"));
 * assert.equal(done.signal.aborted, false);
 * assert.equal(running.signal.aborted, true);
 * ```
 */
export function followSignal(outer: AbortSignal): Follower {
  const controller = new AbortController();
  if (outer.aborted) {
    controller.abort(outer.reason);
    return { signal: controller.signal, release() {} };
  }
  const follower = {
    signal: controller.signal,
    cancel: (reason: unknown) => controller.abort(reason),
    release: () => unwatchAbort(outer, follower),
  };
  watchAbort(outer, follower);
  return follower;
}
