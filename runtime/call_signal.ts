/**
 * One call's signal when its caller brings a signal of its own (an MCP
 * request's, an in-process caller's): it aborts when the session's signal
 * or the caller's does, and lets go of both once the call is over.
 *
 * `AbortSignal.any([session, caller])` did this before, but Deno keeps a
 * dependent signal that has an `abort` listener (the sandbox puts one on
 * every call's signal) alive from its sources until it aborts: a session's
 * signal held every call it ever saw, a leak of over a kilobyte per call,
 * and each call grew slower as the session aged (tens of µs per MCP call).
 * A follower is dropped by both signals when released.
 *
 * @module
 */

import { type Cancellable, unwatchAbort, watchAbort } from "./abort_watch.ts";

/**
 * A call's own signal, following the session's and the caller's until
 * released.
 *
 * @example The call ends: the session's end no longer reaches it
 * ```ts
 * import { CallSignal } from "./call_signal.ts";
 * import assert from "node:assert/strict";
 * const session = new AbortController();
 * const caller = new AbortController();
 * const done = new CallSignal(session.signal, caller.signal);
 * done.release();
 * const running = new CallSignal(session.signal, caller.signal);
 * session.abort(new Error("session ended"));
 * assert.equal(done.signal.aborted, false);
 * assert.equal(running.signal.reason.message, "session ended");
 * ```
 */
export class CallSignal implements Cancellable {
  readonly #controller = new AbortController();
  readonly #session: AbortSignal;
  readonly #caller: AbortSignal;

  /**
   * Follows both signals; one already aborted aborts this one at once (the
   * session's reason first, as `AbortSignal.any` would).
   *
   * @param session the session's signal
   * @param caller the caller's signal for this call
   */
  constructor(session: AbortSignal, caller: AbortSignal) {
    this.#session = session;
    this.#caller = caller;
    if (session.aborted) this.#controller.abort(session.reason);
    else if (caller.aborted) this.#controller.abort(caller.reason);
    else {
      watchAbort(session, this);
      watchAbort(caller, this);
    }
  }

  /** Aborts when either signal does, until released. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Aborts this call's signal (either signal aborted).
   *
   * @param reason the signal's reason
   */
  cancel(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /** Stops following both signals (the call is over). Idempotent. */
  release(): void {
    unwatchAbort(this.#session, this);
    unwatchAbort(this.#caller, this);
  }
}
