/**
 * Admission: which transport sessions the host holds, and which count
 * against `max_sessions`.
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

import type { Session } from "./session.ts";
import type { TokenQuota } from "./quotas.ts";

/** Options for {@link Admission}. */
export interface AdmissionOptions {
  /** Admitted sessions at once. */
  maxSessions: number;
  /** Pending sessions at once (oldest closed beyond). */
  maxPending: number;
  /** How long a session may stay pending, in ms. */
  handshakeTimeoutMs: number;
  /** Whether sessions must present a token (else none is pending). */
  requiresAuth: boolean;
  /** Quotas by token. @default none */
  quotas?: ReadonlyMap<string, TokenQuota>;
}

/** How a session is opened. */
export interface AdmitOptions {
  /** A token already verified (from a header): admit at once. */
  token?: string;
  /** Never pending (stdio: the client started the host). @default false */
  trusted?: boolean;
}

/**
 * Tracks pending and admitted sessions.
 *
 * @example A pending session does not count against max_sessions
 * ```ts
 * import { Admission } from "./admission.ts";
 * import { Session } from "./session.ts";
 * import assert from "node:assert/strict";
 * const admission = new Admission({
 *   maxSessions: 1, maxPending: 8, handshakeTimeoutMs: 10_000, requiresAuth: true,
 * });
 * const guest = new Session({ send: () => {} });
 * assert.equal(admission.open(guest), "");
 * const holder = new Session({ send: () => {} });
 * assert.equal(admission.open(holder), "");
 * assert.equal(admission.admit(holder, "t1"), "");
 * assert.deepEqual([admission.admitted, admission.pending], [1, 1]);
 * admission.leave(guest);
 * admission.leave(holder);
 * ```
 */
export class Admission {
  #options: AdmissionOptions;
  #admitted = new Map<Session, string>();
  // Insertion order is age order: the first entry is the oldest.
  #pending = new Map<Session, ReturnType<typeof setTimeout>>();
  #perToken = new Map<string, number>();

  /** @param options the limits */
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
   * Takes in a new transport session: admitted, or pending.
   *
   * @param session the new session
   * @param options a verified token, or trust
   * @returns "" when taken in, else why not
   */
  open(session: Session, options: AdmitOptions = {}): string {
    if (options.token !== undefined) return this.#admit(session, options.token);
    if (!this.#options.requiresAuth || options.trusted) {
      return this.#admit(session, "");
    }
    if (this.#pending.size >= this.#options.maxPending) {
      const [oldest] = this.#pending.keys();
      if (oldest) {
        this.leave(oldest);
        oldest.close(
          "Too many sessions waiting for a handshake: the oldest was closed",
        );
      }
    }
    const seconds = this.#options.handshakeTimeoutMs / 1000;
    const timer = setTimeout(() => {
      this.leave(session);
      session.close(`Handshake not completed within ${seconds} s`);
    }, this.#options.handshakeTimeoutMs);
    // Expiry must never keep a process alive on its own.
    Deno.unrefTimer(timer);
    this.#pending.set(session, timer);
    return "";
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
   * Forgets a session that ended.
   *
   * @param session the session
   */
  leave(session: Session): void {
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
    const moving = this.#admitted.has(session);
    if (!moving && this.#admitted.size >= this.#options.maxSessions) {
      return `the host serves at most ${this.#options.maxSessions} sessions`;
    }
    const quota = this.#options.quotas?.get(token)?.maxSessions;
    if (quota !== undefined && (this.#perToken.get(token) ?? 0) >= quota) {
      return `the token's quota of ${quota} sessions is used up`;
    }
    this.leave(session);
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
