/**
 * Admission: the transport sessions the host holds, and which of them count
 * against `max_sessions`. {@link Admission.open} opens a session (or says
 * why not) and holds it until it ends; {@link Admission.broadcast} sends
 * push messages to the live ones.
 *
 * When the host requires a token, a new transport session is *pending* until
 * its handshake is accepted: pending sessions are capped on their own
 * (`max_pending_sessions`; when full, the oldest pending one is closed to
 * make room) and each is closed if it has not been admitted within
 * `handshake_timeout_seconds`. Only admitted sessions count against
 * `max_sessions` and a token's `max_sessions` quota, so clients without a
 * token can never fill the host for a token holder. A session opened with a
 * valid `Authorization: Bearer` header is admitted at once.
 *
 * Without tokens every session is admitted when it opens, as nothing tells
 * a client from another.
 *
 * @module
 */

import type { OutgoingMessage } from "./capability.ts";
import type { HostConfig } from "./config_schema.ts";
import type { TokenQuota } from "./quotas.ts";
import { Session } from "./session.ts";
import type {
  OpenSessionOptions,
  Refusal,
} from "./transports/transport_context.ts";

/** Options for {@link Admission}. */
export interface AdmissionOptions {
  /** The accepted tokens (none: no auth) and the session limits. */
  config: Pick<HostConfig, "tokens" | "limits">;
  /** Quotas by token. @default none */
  quotas?: ReadonlyMap<string, TokenQuota>;
  /** Ends what a session ran, when it ends. @default nothing */
  endSession?: (id: string) => void;
  /** True once the host is shutting down. @default never */
  closing?: () => boolean;
}

/**
 * Opens transport sessions and holds the live ones, pending or admitted.
 *
 * @example A pending session does not count against max_sessions
 * ```ts
 * import { Admission } from "./admission.ts";
 * import { Session } from "./session.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = { ...defaultConfig(), tokens: ["t1"] };
 * config.limits.maxSessions = 1;
 * const admission = new Admission({ config });
 * const guest = admission.open({ transport: "websocket", send() {} });
 * const holder = admission.open({ transport: "websocket", send() {} });
 * assert.ok(guest instanceof Session && holder instanceof Session);
 * assert.equal(admission.admit(holder, "t1"), "");
 * assert.deepEqual([admission.admitted, admission.pending], [1, 1]);
 * assert.equal(admission.sessions.size, 2);
 * guest.close();
 * holder.close();
 * assert.equal(admission.sessions.size, 0);
 * ```
 * @example A closing host refuses
 * ```ts
 * import { Admission } from "./admission.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const admission = new Admission({
 *   config: defaultConfig(), closing: () => true,
 * });
 * const refused = admission.open({ transport: "websocket", send: () => {} });
 * assert.deepEqual(refused, { status: 503, reason: "the host is shutting down" });
 * ```
 */
export class Admission {
  /** The live sessions: an opened one is added, an ended one removed. */
  readonly sessions: Set<Session> = new Set();
  #options: AdmissionOptions;
  #admitted = new Map<Session, string>();
  // Insertion order is age order: the first entry is the oldest.
  #pending = new Map<Session, ReturnType<typeof setTimeout>>();
  #perToken = new Map<string, number>();

  /** @param options the tokens, limits and quotas, and the host's state */
  constructor(options: AdmissionOptions) {
    this.#options = options;
  }

  /** Sessions counted against `max_sessions`. */
  get admitted(): number {
    return this.#admitted.size;
  }

  /** Sessions waiting for an accepted handshake. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Opens a transport session: refused while shutting down (503), for an
   * invalid `Authorization` token (401) or past the limits (503). It is
   * admitted at once (a valid `Authorization` token, a trusted transport,
   * a host without tokens) or else pending; either way held in
   * {@link sessions} until it ends.
   *
   * @param open the transport's side of the session
   * @returns the session, or why not
   */
  open(open: OpenSessionOptions): Session | Refusal {
    if (this.#options.closing?.()) {
      return { status: 503, reason: "the host is shutting down" };
    }
    const { tokens, limits } = this.#options.config;
    const token = bearerToken(open.authorization, tokens);
    if (token === null) {
      return {
        status: 401,
        reason: "the Authorization header holds no valid token",
      };
    }
    const session = new Session({
      send: open.send,
      transport: open.transport,
      client: open.client,
      maxParallel: limits.maxParallel,
      onEnd: (reason) => {
        this.sessions.delete(session);
        this.#options.endSession?.(session.id);
        this.#leave(session);
        open.onEnd?.(reason);
      },
    });
    // stdio: the client started the host. MCP: /mcp checks the bearer
    // token on every request before a session opens, and sets auth itself.
    const trusted = open.transport === "stdio" || open.transport === "mcp";
    if (token !== undefined || tokens.length === 0 || trusted) {
      const refused = this.#admit(session, token ?? "");
      if (refused !== "") return { status: 503, reason: refused };
    } else this.#hold(session);
    // A token checked in the header authenticates the session as a handshake
    // would: it may ping before one, and a handshake that presents no token
    // (the Python SDK's default auth_token is "") keeps this one.
    if (token !== undefined) session.authenticate("accepted", token);
    this.sessions.add(session);
    return session;
  }

  /**
   * Admits a session whose handshake was accepted with `token`.
   *
   * @param session the session
   * @param token the token its handshake presented
   * @returns "" when admitted, else why not (it then stays pending)
   */
  admit(session: Session, token: string): string {
    const held = this.#admitted.get(session);
    if (held === token) return "";
    if (held === undefined && !this.#pending.has(session)) return "";
    return this.#admit(session, token);
  }

  /**
   * Sends a push message (no `req_id`) to every live session that may have
   * it: all of them, or only the authenticated ones when the host needs auth.
   *
   * @param message the push message
   * @returns how many sessions it was sent to
   * @example
   * ```ts
   * import { Admission } from "./admission.ts";
   * import { defaultConfig } from "./config.ts";
   * import assert from "node:assert/strict";
   * const got: unknown[] = [];
   * const admission = new Admission({ config: defaultConfig() });
   * admission.open({ transport: "websocket", send: (m) => got.push(m) });
   * const message = { type: "x", id: "1", version: "1.0", ts: 0 };
   * assert.equal(admission.broadcast(message), 1);
   * assert.equal(got.length, 1);
   * ```
   */
  broadcast(message: OutgoingMessage): number {
    const requiresAuth = this.#options.config.tokens.length > 0;
    let count = 0;
    for (const session of this.sessions) {
      if (!requiresAuth || session.auth === "accepted") {
        session.send(message);
        count++;
      }
    }
    return count;
  }

  // Holds a session pending until a handshake admits it, or it expires.
  #hold(session: Session): void {
    const limits = this.#options.config.limits;
    if (this.#pending.size >= limits.maxPendingSessions) {
      const [oldest] = this.#pending.keys();
      oldest?.close(
        "Too many sessions waiting for a handshake: the oldest was closed",
      );
    }
    const seconds = limits.handshakeTimeoutSeconds;
    const timer = setTimeout(() => {
      session.close(`Handshake not completed within ${seconds} s`);
    }, seconds * 1000);
    // Expiry must never keep a process alive on its own.
    Deno.unrefTimer(timer);
    this.#pending.set(session, timer);
  }

  // Forgets a session that ended (or moves to admitted).
  #leave(session: Session): void {
    const timer = this.#pending.get(session);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.#pending.delete(session);
    }
    const token = this.#admitted.get(session);
    if (token !== undefined) {
      this.#admitted.delete(session);
      this.#count(token, -1);
    }
  }

  #admit(session: Session, token: string): string {
    const { limits } = this.#options.config;
    const moving = this.#admitted.has(session);
    if (!moving && this.#admitted.size >= limits.maxSessions) {
      return `the host serves at most ${limits.maxSessions} sessions`;
    }
    const quota = this.#options.quotas?.get(token)?.maxSessions;
    if (quota !== undefined && (this.#perToken.get(token) ?? 0) >= quota) {
      return `the token's quota of ${quota} sessions is used up`;
    }
    this.#leave(session);
    this.#admitted.set(session, token);
    this.#count(token, 1);
    return "";
  }

  #count(token: string, by: number): void {
    const next = (this.#perToken.get(token) ?? 0) + by;
    if (next === 0) this.#perToken.delete(token);
    else this.#perToken.set(token, next);
  }
}

/**
 * Whether `given` is one of `tokens`, compared in time independent of where
 * the strings differ.
 *
 * @param tokens the accepted tokens
 * @param given the token presented
 * @returns true when it is one of them
 * @example
 * ```ts
 * import { isAcceptedToken } from "./admission.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isAcceptedToken(["a1"], "a1"), true);
 * assert.equal(isAcceptedToken(["a1"], "a2"), false);
 * ```
 */
export function isAcceptedToken(
  tokens: readonly string[],
  given: string,
): boolean {
  let found = false;
  for (const token of tokens) found = sameString(token, given) || found;
  return found;
}

/**
 * Reads an `Authorization` header against the accepted tokens.
 *
 * @param header the header's value, if any
 * @param tokens the accepted tokens
 * @returns the token when it is a valid `Bearer` token, undefined when there
 *   is no header (or no tokens are configured), null when it is not valid
 * @example
 * ```ts
 * import { bearerToken } from "./admission.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bearerToken("Bearer a1", ["a1"]), "a1");
 * assert.equal(bearerToken(undefined, ["a1"]), undefined);
 * assert.equal(bearerToken("Bearer a2", ["a1"]), null);
 * ```
 */
export function bearerToken(
  header: string | undefined,
  tokens: readonly string[],
): string | null | undefined {
  if (header === undefined || tokens.length === 0) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || !isAcceptedToken(tokens, match[1]!)) return null;
  return match[1]!;
}

function sameString(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  }
  return diff === 0;
}
