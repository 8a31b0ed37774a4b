/**
 * The dispatcher: the one place a raw message from any transport becomes an
 * answer. It owns size limits, parsing, the handshake and auth, ping,
 * shutdown, concurrency limits, routing to capability handlers, `req_id`
 * correlation and error mapping. Transports only move text.
 *
 * @module
 */

import { getHeapStatistics } from "node:v8";
import type { Capability, Handler } from "./capability.ts";
import { SkillboxError, toWireError } from "../protocol/errors.ts";
import { type CapabilityName, isCapabilityName } from "../protocol/codes.ts";
import {
  type AnsweredRequestType,
  encodeError,
  encodeResponse,
} from "../protocol/responses.ts";
import {
  parseMessage,
  parseValue,
  salvageId,
} from "../protocol/request_schemas.ts";
import type { Request } from "../protocol/requests.ts";
import { FairSlots, type Release, runsCode, type Semaphore } from "./slots.ts";
import { isAcceptedToken } from "./admission.ts";
import { CallRate, type TokenQuota } from "./quotas.ts";
import { CallSignal } from "./deadline.ts";
import { Session } from "./session.ts";
import { jsonLength } from "../protocol/json.ts";
import type { SessionScope } from "./capability.ts";

const TOKEN_SWITCH =
  "Cannot change the session's token: a session keeps the token it was admitted with; open a new session to use another";

/**
 * The most one session's requests waiting for its slots may weigh: the
 * host holds each whole, so a client that keeps sending calls while its
 * slots are taken would otherwise grow the host's memory without end. As
 * much as a client's unread output may reach
 * (`transports/client_bounds.ts`).
 */
const MAX_WAITING_WEIGHT = 64 * 1024 * 1024;

// What a waiting request weighs beyond its JSON (its request object,
// promise and waiter), so that many small ones are bounded too.
const WAITING_UPKEEP = 1024;

/**
 * What all sessions' calls waiting or running may weigh together by
 * default: an eighth of the host's V8 heap (512 MiB under Deno's default
 * 4 GiB), so that even twice that, as arguments held and copied while
 * they run, leaves the host room. Without it, sessions each within their
 * own 64 MiB filled the heap and V8 ended the host.
 */
function defaultMaxHeldBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 8);
}

// Four mebibytes: the default `max_message_bytes`.
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Options for {@link Dispatcher}. */
export interface DispatcherOptions {
  /** Capabilities served from the start. @default [] */
  capabilities?: readonly Capability[];
  /** Accepted auth tokens; empty means no auth. @default [] */
  tokens?: readonly string[];
  /** Largest message accepted, in UTF-8 bytes. @default 4194304 */
  maxMessageBytes?: number;
  /** Capability requests running at once across all sessions. @default 64 */
  maxParallelHost?: number;
  /**
   * What the calls of all sessions waiting or running may weigh together
   * (their JSON, plus 1 KiB each); past it, a session holding more than
   * its equal share is refused, retryable. In-process calls are not
   * counted. @default an eighth of the V8 heap limit
   */
  maxHeldBytes?: number;
  /** `performance.now()` at host start, for `uptime_seconds`. @default now */
  startedAt?: number;
  /** Quotas by token (`policy.tokens`). @default none */
  quotas?: ReadonlyMap<string, TokenQuota>;
  /**
   * Checks a handshake's token and admits its session: "" when accepted,
   * else why not (the handshake is then refused). @default accepts the
   * tokens in `tokens`
   */
  accept?: (session: Session, token: string) => string;
}

/** Options for one dispatched message. */
export interface ReceiveOptions {
  /** Cancels this request only (in-process callers). */
  signal?: AbortSignal;
  /** A value made only of what `JSON.parse` makes. @default false */
  json?: boolean;
}

/**
 * Routes messages from sessions to answers.
 *
 * @example Answer a ping on an in-memory session
 * ```ts
 * import { Dispatcher } from "./dispatcher.ts";
 * import { Session } from "./session.ts";
 * import assert from "node:assert/strict";
 * const sent: Record<string, unknown>[] = [];
 * const session = new Session({ send: (m) => sent.push(m) });
 * await new Dispatcher().receive(session, '{"type":"ping","id":"p1"}');
 * assert.equal(sent[0]?.type, "pong");
 * assert.equal(sent[0]?.req_id, "p1");
 * ```
 */
export class Dispatcher {
  #capabilities: Capability[] = [];
  // Request type to the capability answering it. Its handler is read from
  // the capability on each request, so a capability may put another in its
  // place (the standard ones swap their waiting wrappers out once loaded).
  #routes = new Map<string, Capability>();
  #tokens: readonly string[];
  #maxMessageBytes: number;
  #slots: FairSlots;
  #quotas: ReadonlyMap<string, TokenQuota>;
  #rate = new CallRate();
  #accept: (session: Session, token: string) => string;
  #startedAt: number;
  #maxHeld: number;
  // What each session's calls waiting or running weigh, and their sum.
  #heldBy = new Map<Session, number>();
  #held = 0;

  /** @param options capabilities, tokens and limits */
  constructor(options: DispatcherOptions = {}) {
    this.#tokens = options.tokens ?? [];
    this.#maxMessageBytes = options.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES;
    this.#slots = new FairSlots(options.maxParallelHost ?? 64);
    this.#quotas = options.quotas ?? new Map();
    this.#accept = options.accept ??
      ((_, token) =>
        isAcceptedToken(this.#tokens, token) ? "" : "Invalid auth token");
    this.#startedAt = options.startedAt ?? performance.now();
    this.#maxHeld = options.maxHeldBytes ?? defaultMaxHeldBytes();
    for (const capability of options.capabilities ?? []) {
      this.addCapability(capability);
    }
  }

  /** The capabilities served, in registration order. */
  get capabilities(): readonly Capability[] {
    return this.#capabilities;
  }

  /** Whether sessions must present one of the configured tokens. */
  get requiresAuth(): boolean {
    return this.#tokens.length > 0;
  }

  /** The largest message accepted, in UTF-8 bytes. */
  get maxMessageBytes(): number {
    return this.#maxMessageBytes;
  }

  /**
   * Plugs a capability's handlers in. Each request reads its handler from
   * `capability.handlers` then, so one replaced in that table later is the
   * one later requests reach.
   *
   * @param capability the capability
   * @throws {TypeError} when its name is not an A2E capability name, or a
   *   request type it handles is already handled by another capability
   */
  addCapability(capability: Capability): void {
    if (!isCapabilityName(capability.name)) {
      throw new TypeError(
        `Cannot add capability "${capability.name}": not an A2E capability name`,
      );
    }
    const types = Object.keys(capability.handlers);
    for (const type of types) {
      const owner = this.#routes.get(type);
      if (owner) {
        throw new TypeError(
          `Cannot add capability "${capability.name}": "${type}" is already handled by "${owner.name}"`,
        );
      }
    }
    for (const type of types) {
      if (capability.handlers[type as AnsweredRequestType]) {
        this.#routes.set(type, capability);
      }
    }
    this.#capabilities.push(capability);
  }

  /**
   * Handles one raw message from a transport. Never throws: every failure
   * becomes an `error` sent to the session.
   *
   * @param session the session it came on
   * @param raw the message text
   * @param options per-request options
   * @returns resolves once the message is answered (or needs no answer)
   */
  receive(
    session: Session,
    raw: string,
    options?: ReceiveOptions,
  ): Promise<void> {
    // Each UTF-16 unit is at most 3 UTF-8 bytes: only measure when it matters.
    if (raw.length * 3 > this.#maxMessageBytes) {
      const bytes = raw.length > this.#maxMessageBytes
        ? raw.length
        : new TextEncoder().encode(raw).length;
      if (bytes > this.#maxMessageBytes) {
        this.rejectOversize(session, bytes, raw);
        return Promise.resolve();
      }
    }
    const parsed = parseMessage(raw);
    if (!parsed.ok) {
      session.send(encodeError(parsed.reqId, parsed));
      return Promise.resolve();
    }
    return this.#route(
      session,
      parsed.request,
      options,
      WAITING_UPKEEP + raw.length,
    );
  }

  /**
   * Handles one already-decoded message (the in-process path).
   *
   * @param session the session it came on
   * @param value the decoded message
   * @param options per-request options
   * @returns resolves once the message is answered
   */
  receiveValue(
    session: Session,
    value: unknown,
    options?: ReceiveOptions,
  ): Promise<void> {
    const parsed = parseValue(value, options?.json);
    if (!parsed.ok) {
      session.send(encodeError(parsed.reqId, parsed));
      return Promise.resolve();
    }
    // A client's value (MCP) weighs its JSON; an embedder's own calls
    // (in-process) are trusted and not counted.
    const weight = options?.json ? WAITING_UPKEEP + jsonLength(value) : 0;
    return this.#route(session, parsed.request, options, weight);
  }

  /**
   * Answers a message that exceeded `max_message_bytes` with
   * `invalid_message`; the connection stays up.
   *
   * @param session the session it came on
   * @param bytes its size, or at least how much of it was seen
   * @param head the start of the message, to salvage its `id` from
   */
  rejectOversize(session: Session, bytes: number, head = ""): void {
    session.send(encodeError(salvageId(head), {
      code: "invalid_message",
      message:
        `Cannot accept message: ${bytes} bytes exceeds the limit of ${this.#maxMessageBytes} bytes`,
    }));
  }

  /**
   * Answers a frame that is not text (a binary WebSocket frame).
   *
   * @param session the session it came on
   */
  rejectBinary(session: Session): void {
    session.send(encodeError("", {
      code: "invalid_message",
      message:
        "Cannot accept binary frame: send one JSON message per text frame",
    }));
  }

  /**
   * Closes every capability (host shutdown).
   *
   * @returns resolves when all have closed
   */
  async closeCapabilities(): Promise<void> {
    await Promise.allSettled(this.#capabilities.map((c) => c.close?.()));
  }

  // `weight`: what the request weighs while it waits or runs (0: not
  // counted), for the host's bound on what calls hold.
  #route(
    session: Session,
    request: Request,
    options: ReceiveOptions | undefined,
    weight: number,
  ): Promise<void> {
    switch (request.type) {
      case "handshake/req":
        this.#handshake(session, request);
        return Promise.resolve();
      case "ping":
        if (this.#authorized(session, request)) {
          session.send(encodeResponse("ping", request.id, {
            uptimeSeconds: uptimeSeconds(this.#startedAt),
          }));
        }
        return Promise.resolve();
      case "shutdown":
        if (!this.#authorized(session, request)) return Promise.resolve();
        // The first shutdown decides: each drain holds a waiter and a timer
        // until the session's calls settle, so a repeated one (no answer is
        // due) must not add another.
        if (session.draining) return Promise.resolve();
        return session.shutdown(
          request.timeout * 1000,
          "Shutdown requested by the agent",
        );
      default: {
        if (!this.#authorized(session, request)) return Promise.resolve();
        // In flight (for drain) until #call's last step.
        session.begin();
        return this.#call(session, request, options, weight);
      }
    }
  }

  #handshake(session: Session, request: Request<"handshake/req">): void {
    const token = request.authToken ?? "";
    let reason = "";
    if (session.auth === "accepted") {
      // An accepted session keeps its token (one the Authorization header
      // authenticated too, when the handshake presents none): what it runs
      // is counted under that token, so another one is refused and changes
      // nothing, whether that token is valid or not (so this answer tells
      // a guesser nothing). A plain comparison: the client on this session
      // knows its token already.
      if (token !== "" && token !== session.token) reason = TOKEN_SWITCH;
      this.#answerHandshake(session, request, reason);
      return;
    }
    if (this.requiresAuth) {
      if (token === "") reason = "Missing auth token: this host requires one";
      else reason = this.#accept(session, token);
    }
    session.authenticate(reason === "" ? "accepted" : "refused", token);
    this.#answerHandshake(session, request, reason);
  }

  #answerHandshake(
    session: Session,
    request: Request<"handshake/req">,
    reason: string,
  ): void {
    session.send(encodeResponse("handshake/req", request.id, {
      sessionId: session.id,
      acceptedCaps: reason === "" ? this.#acceptedCaps(request.agentCaps) : [],
      maxParallel: session.maxParallel,
      ok: reason === "",
      reason,
    }));
  }

  // The Python client's default agent_caps ("streaming", "artifacts") name no
  // capability; such a client still gets everything served.
  #acceptedCaps(asked: readonly string[]): CapabilityName[] {
    const served = [...new Set(this.#capabilities.map((c) => c.name))];
    const named = asked.filter(isCapabilityName);
    if (named.length === 0) return served;
    return served.filter((name) => named.includes(name));
  }

  #authorized(session: Session, request: Request): boolean {
    if (!this.requiresAuth || session.auth === "accepted") return true;
    const why = session.auth === "refused"
      ? "its handshake was refused"
      : "it has not completed a handshake with a valid token";
    session.send(encodeError(request.id, {
      code: "unauthorized",
      message: `Cannot handle "${request.type}": ${why}`,
    }));
    return false;
  }

  /**
   * Admits a call that a running call makes for its session (`run_code`'s
   * inner calls): counted against the token's `calls_per_minute` as a
   * `tool/call/req` is, then run in a free slot of the session
   * (`max_parallel`) and of the host (`max_parallel_host`, the token's
   * `max_parallel`) when both are free at once, or else in the slot its
   * caller holds (`lent`, one inner call at a time): an inner call never
   * waits on the slot its own caller holds, so it cannot deadlock, and no
   * more calls run than direct calls could.
   *
   * @param session the session the outer call runs for
   * @param slot the outer call's lent slot and the signal that gives up
   * @returns frees what the call took
   * @throws {SkillboxError} `runtime_error` (retryable) past the rate quota
   * @example An inner call takes a free slot
   * ```ts
   * import { Dispatcher } from "./dispatcher.ts";
   * import { Session } from "./session.ts";
   * import { Semaphore } from "./slots.ts";
   * import assert from "node:assert/strict";
   * const session = new Session({ send() {}, maxParallel: 2 });
   * const release = await new Dispatcher().admitInner(session, {
   *   lent: new Semaphore(1), signal: session.signal,
   * });
   * assert.equal(session.limiter.active, 1);
   * release();
   * assert.equal(session.limiter.active, 0);
   * ```
   */
  async admitInner(
    session: SessionScope,
    slot: { lent: Semaphore; signal: AbortSignal },
  ): Promise<Release> {
    const quota = this.#quotas.get(session.token);
    this.#rate.enforce("tool/call/req", session.token, quota);
    const limiter = session instanceof Session ? session.limiter : null;
    const own = limiter ? limiter.tryAcquire() : null;
    if (own) {
      const host = this.#slots.tryAcquire({
        session: session.id,
        token: session.token,
        tokenLimit: quota?.maxParallel,
      });
      if (host) {
        return () => {
          host();
          own();
        };
      }
      own();
    }
    return slot.lent.tryAcquire() ?? await slot.lent.acquire(slot.signal);
  }

  // Counted in flight by #route (`session.begin`): every way out ends it.
  async #call(
    session: Session,
    request: Request<AnsweredRequestType>,
    options: ReceiveOptions | undefined,
    weight: number,
  ): Promise<void> {
    const route = this.#routes.get(request.type);
    const handler = route?.handlers[request.type] as Handler | undefined;
    if (!route || !handler) {
      session.send(encodeError(request.id, {
        code: "invalid_message",
        message: `Cannot handle "${request.type}": the "${
          capabilityFor(request.type)
        }" capability is not served by this host`,
      }));
      session.end();
      return;
    }
    const capabilityName = route.name;
    if (session.draining) {
      session.send(encodeError(request.id, {
        code: "invalid_message",
        message:
          `Cannot handle "${request.type}": the session is shutting down`,
      }, capabilityName));
      session.end();
      return;
    }
    const own = options?.signal
      ? new CallSignal(session.signal, options.signal)
      : undefined;
    const signal = own?.signal ?? session.signal;
    let releaseSession: (() => void) | undefined;
    let releaseHost: (() => void) | undefined;
    let held = 0;
    try {
      // Session slot first, so one busy session never holds host slots
      // while it waits on its own limit. A free slot is taken at once.
      if (signal.aborted) throw signal.reason;
      // Lists, searches and configuration run no code: they never queue
      // behind calls, however many calls are stuck.
      if (runsCode(request.type)) {
        const quota = this.#quotas.get(session.token);
        this.#rate.enforce(request.type, session.token, quota);
        if (weight > 0) {
          this.#hold(session, request, weight);
          held = weight;
        }
        releaseSession = session.limiter.tryAcquire() ??
          await waitForSlot(session, request, weight, signal);
        const owner = {
          session: session.id,
          token: session.token,
          tokenLimit: quota?.maxParallel,
        };
        releaseHost = this.#slots.tryAcquire(owner) ??
          await this.#slots.acquire(owner, signal);
        // A slot can be handed over in the turn the signal aborts: such a
        // call must not start, as a handler may only listen for an abort.
        if (signal.aborted) throw signal.reason;
      }
      const body = await handler({ request, session, signal });
      session.send(encodeResponse(request.type, request.id, body));
    } catch (error) {
      const wire = signal.aborted && !(error instanceof SkillboxError)
        ? {
          code: "runtime_error" as const,
          message: `Cancelled "${request.type}": ${abortReason(signal)}`,
        }
        : toWireError(error);
      session.send(encodeError(request.id, wire, capabilityName));
    } finally {
      own?.release();
      releaseHost?.();
      releaseSession?.();
      if (held > 0) this.#release(session, held);
      session.end();
    }
  }

  // Counts a call's weight as held until #release, or refuses it: past the
  // host's bound, a session may still hold up to an equal share of it, so
  // that one client's many sessions cannot keep another's small calls out,
  // and the sum stays within about twice the bound.
  #hold(session: Session, request: Request, weight: number): void {
    const mine = this.#heldBy.get(session) ?? 0;
    const holders = this.#heldBy.size + (mine === 0 ? 1 : 0);
    if (
      this.#held + weight > this.#maxHeld &&
      mine + weight > this.#maxHeld / holders
    ) {
      throw new SkillboxError(
        "runtime_error",
        `Cannot handle "${request.type}": the host holds ${
          mebibytes(this.#held)
        } MiB of calls waiting or running (at most ${
          mebibytes(this.#maxHeld)
        } MiB), ${
          mebibytes(mine)
        } MiB of them this session's; retry once some have run`,
        { retryable: true },
      );
    }
    this.#heldBy.set(session, mine + weight);
    this.#held += weight;
  }

  #release(session: Session, weight: number): void {
    const left = (this.#heldBy.get(session) ?? weight) - weight;
    if (left > 0) this.#heldBy.set(session, left);
    else this.#heldBy.delete(session);
    this.#held -= weight;
  }
}

function mebibytes(bytes: number): number {
  return Math.round(bytes / 1048576);
}

// A call that finds its session's slots taken waits for one, holding room
// for its request while it waits (MAX_WAITING_WEIGHT); past that room it is
// refused at once, retryable.
// `known`: what #route weighed it (0 for an in-process call, weighed here
// only when it must wait).
async function waitForSlot(
  session: Session,
  request: Request,
  known: number,
  signal: AbortSignal,
): Promise<Release> {
  // A value the in-process transport passed that JSON cannot hold weighs
  // nothing more (that caller is trusted).
  const weight = known > 0 ? known : WAITING_UPKEEP + jsonLength(request);
  if (!session.holdWaiting(weight, MAX_WAITING_WEIGHT)) {
    throw new SkillboxError(
      "runtime_error",
      `Cannot handle "${request.type}": this session's calls waiting for a slot hold ${
        Math.round(session.waitingWeight / 1048576)
      } MiB; at most ${
        MAX_WAITING_WEIGHT / 1048576
      } MiB may wait, retry once some have run`,
      {
        retryable: true,
        detail: { waiting_calls: session.limiter.waiting },
      },
    );
  }
  try {
    return await session.limiter.acquire(signal);
  } finally {
    session.releaseWaiting(weight);
  }
}

function uptimeSeconds(startedAt: number): number {
  // JSON drops ".0": keep a fractional part so Python reads a float.
  const seconds = (performance.now() - startedAt) / 1000;
  return Number.isInteger(seconds) ? seconds + 1e-6 : seconds;
}

function capabilityFor(type: string): string {
  if (type.startsWith("toolkit/")) return "toolkits";
  if (type.startsWith("tool/")) return "tools";
  if (type.startsWith("skill/")) return "skill";
  return type.split("/")[0] ?? type;
}

function abortReason(signal: AbortSignal): string {
  const reason = signal.reason;
  // An in-process caller's reason may be anything, even a value String()
  // refuses: that must not turn the answer into a rejection of receive().
  try {
    return reason instanceof Error ? reason.message : String(reason);
  } catch {
    return "aborted by its caller";
  }
}
