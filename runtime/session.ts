/**
 * One A2E session: what a transport connection (a WebSocket, an HTTP+SSE
 * transport session, stdio, or the host's in-process caller) shares with the
 * dispatcher — identity, auth state, per-session state, the `max_parallel`
 * limit, in-flight calls, and the signal that cancels them when it ends.
 *
 * @module
 */

import type { OutgoingMessage, SessionScope } from "./capability.ts";
import { newId } from "../protocol/envelope.ts";
import { encodeError, isEventType } from "../protocol/responses.ts";
import { Semaphore, WaitQueue } from "./slots.ts";
import { settlesWithin } from "./deadline.ts";

/** Where a session's messages travel. */
export type TransportKind =
  | "websocket"
  | "sse"
  | "stdio"
  | "mcp"
  | "in-process";

/**
 * Where a session stands with auth: `pending` before a handshake, `accepted`
 * after a handshake the host accepted (for good: the session keeps that
 * token), `refused` after one it refused.
 */
export type AuthState = "pending" | "accepted" | "refused";

/** Options for {@link Session}. */
export interface SessionOptions {
  /** Delivers one outgoing message to the transport. */
  send: (message: OutgoingMessage) => void;
  /** How many capability requests run at once; the rest queue. @default 4 */
  maxParallel?: number;
  /** Which transport carries the session. @default "in-process" */
  transport?: TransportKind;
  /** Called once when the session ends, to release the transport. */
  onEnd?: (reason: string) => void;
  /** The client's address key, when it has one. @default none */
  client?: string;
}

/**
 * A live session.
 *
 * @example End a session and see its signal abort
 * ```ts
 * import { Session } from "./session.ts";
 * import assert from "node:assert/strict";
 * const sent: unknown[] = [];
 * const session = new Session({ send: (m) => sent.push(m) });
 * assert.match(session.id, /^[0-9a-f]{32}$/);
 * session.close("client left");
 * assert.ok(session.signal.aborted);
 * ```
 */
export class Session implements SessionScope {
  /** The handshake's session id (hex uuid). */
  readonly id: string = newId();
  /** Capability-owned state, dropped with the session. */
  readonly state: Map<string, unknown> = new Map();
  /** Limits this session's concurrent capability requests. */
  readonly limiter: Semaphore;
  /** The transport carrying this session. */
  readonly transport: TransportKind;
  /**
   * The client's address key (`clientKey` of runtime/doors/auth_throttle.ts),
   * under which its failed handshake tokens are throttled; undefined for
   * transports without an address (stdio, in-process).
   */
  readonly client: string | undefined;
  /** True once `shutdown` was received: new requests are refused. */
  draining = false;

  #auth: AuthState = "pending";
  #token = "";
  #sink: (message: OutgoingMessage) => void;
  #onEnd?: (reason: string) => void;
  #controller = new AbortController();
  // A plain flag beside the signal: reading `signal.aborted` goes through
  // WebIDL's brand check, and every answer asks.
  #closed = false;
  #inFlight = 0;
  // What the requests waiting for one of this session's slots weigh.
  #waiting = 0;
  // Woken when the last request in flight ends (see drain).
  readonly #idle = new WaitQueue();
  #maxParallel: number;

  /** @param options the transport sink and limits */
  constructor(options: SessionOptions) {
    this.#sink = options.send;
    this.#onEnd = options.onEnd;
    this.#maxParallel = options.maxParallel ?? 4;
    this.limiter = new Semaphore(this.#maxParallel);
    this.transport = options.transport ?? "in-process";
    this.client = options.client;
  }

  /** Where the session stands with auth. */
  get auth(): AuthState {
    return this.#auth;
  }

  /**
   * The token the session presented in its handshake ("" when none). Once
   * the session is accepted it never changes: its calls, slots and quotas
   * are counted under it.
   */
  get token(): string {
    return this.#token;
  }

  /** The `max_parallel` this session was promised. */
  get maxParallel(): number {
    return this.#maxParallel;
  }

  /** Aborted when the session ends. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the session has ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** How many capability requests are running or queued. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Records the outcome of a handshake. An accepted session keeps its
   * token: what it runs is counted under that token (its quotas, its host
   * slots, its runs), and a switch would leave some of it counted under the
   * other.
   *
   * @param auth whether the host accepted it
   * @param token the token presented
   * @throws {TypeError} when the session was accepted and this would change
   *   its token or its state
   * @example A session accepted with one token cannot take another
   * ```ts
   * import { Session } from "./session.ts";
   * import assert from "node:assert/strict";
   * const session = new Session({ send() {} });
   * session.authenticate("accepted", "t1");
   * session.authenticate("accepted", "t1");
   * assert.throws(() => session.authenticate("accepted", "t2"), TypeError);
   * assert.equal(session.token, "t1");
   * ```
   */
  authenticate(auth: AuthState, token: string): void {
    if (
      this.#auth === "accepted" &&
      (auth !== "accepted" || token !== this.#token)
    ) {
      throw new TypeError(
        "Cannot change the session's token: it keeps the one it was accepted with",
      );
    }
    this.#auth = auth;
    this.#token = token;
  }

  /**
   * Sends a message; dropped once the session has ended, since its transport
   * is gone and a late event must not crash the handler that sent it.
   *
   * @param message a complete outgoing message
   */
  send(message: OutgoingMessage): void {
    if (this.closed) return;
    try {
      this.#sink(message);
    } catch (error) {
      // Either the transport failed under us (socket half-closed: the
      // session's close event follows, which aborts the calls), or the
      // message could not be encoded (a cycle, a BigInt). A request still
      // gets an answer; if the transport is gone, that fails quietly too.
      const { type, req_id: reqId } = message;
      if (
        typeof reqId !== "string" || type === "error" || isEventType(type)
      ) return;
      try {
        this.#sink(encodeError(reqId, {
          code: "runtime_error",
          message: `Cannot encode the answer to "${type}": ${
            error instanceof Error ? error.message : String(error)
          }`,
        }));
      } catch {
        // The transport is gone.
      }
    }
  }

  /**
   * Counts a capability request as in flight until {@link end}, so that
   * {@link drain} can wait for it. A counter, not a set of promises: no
   * callback is made per request.
   */
  begin(): void {
    this.#inFlight++;
  }

  /** A request counted by {@link begin} has settled. */
  end(): void {
    if (--this.#inFlight === 0) this.#idle.wake();
  }

  /** What the requests waiting for a slot of this session weigh (see {@link holdWaiting}). */
  get waitingWeight(): number {
    return this.#waiting;
  }

  /**
   * Makes room for a request that waits for one of this session's slots:
   * the host holds each waiting request whole, so what one session has
   * waiting is bounded. The first waiter always gets room.
   *
   * @param weight what the request weighs (its size and upkeep)
   * @param limit the most all waiting requests may weigh
   * @returns false, holding nothing, when there is no room
   */
  holdWaiting(weight: number, limit: number): boolean {
    if (this.#waiting > 0 && this.#waiting + weight > limit) return false;
    this.#waiting += weight;
    return true;
  }

  /**
   * Gives back the room a request held while it waited.
   *
   * @param weight what {@link holdWaiting} took
   */
  releaseWaiting(weight: number): void {
    this.#waiting -= weight;
  }

  /**
   * Waits for in-flight requests to settle, up to a bound.
   *
   * @param timeoutMs how long to wait at most
   * @returns true when everything settled in time
   */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return settlesWithin(this.#idle.wait(), timeoutMs);
  }

  /**
   * Shuts the session down: refuses new requests (`draining`), lets those
   * in flight end for up to `timeoutMs`, then closes it, cancelling what
   * is left.
   *
   * @param timeoutMs how long in-flight requests may take
   * @param reason why it ends, as in {@link close}
   */
  async shutdown(timeoutMs: number, reason: string): Promise<void> {
    this.draining = true;
    await this.drain(timeoutMs);
    this.close(reason);
  }

  /**
   * Ends the session: aborts its signal (cancelling in-flight calls) and
   * releases the transport. Idempotent.
   *
   * @param reason why it ended, for logs and the abort reason
   */
  close(reason = "Session ended"): void {
    if (this.closed) return;
    this.#closed = true;
    this.#controller.abort(new DOMException(reason, "AbortError"));
    this.state.clear();
    this.#onEnd?.(reason);
  }
}
