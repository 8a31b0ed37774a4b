/**
 * The host's door for transport sessions: {@link sessionGate} opens one (or
 * says why not) and keeps the set of live sessions, which
 * {@link broadcastTo} sends push messages to.
 *
 * @module
 */

import type { OutgoingMessage } from "./capability.ts";
import type { HostConfig } from "./config_schema.ts";
import { type Admission, bearerToken } from "./admission.ts";
import { Session } from "./session.ts";
import type {
  OpenSessionOptions,
  Refusal,
} from "./transports/transport_context.ts";

/** What {@link sessionGate} admits sessions against. */
export interface Gate {
  /** The tokens and limits. */
  config: Pick<HostConfig, "tokens" | "limits">;
  /** Counts sessions against the limits and token quotas. */
  admission: Admission;
  /** The live sessions: an admitted one is added, an ended one removed. */
  sessions: Set<Session>;
  /** Ends what a session ran, when it ends. */
  endSession?: (id: string) => void;
  /** True once the host is shutting down. */
  closing: () => boolean;
}

/**
 * Opens transport sessions: refused while shutting down (503), for an
 * invalid `Authorization` token (401) or when admission refuses (503).
 * An admitted session is tracked in `sessions` until it ends.
 *
 * @param gate what sessions are admitted against
 * @returns the function transports open sessions with
 * @example A closing host refuses
 * ```ts
 * import { sessionGate } from "./session_gate.ts";
 * import { Admission } from "./admission.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const admission = new Admission({
 *   maxSessions: 1, maxPending: 1, handshakeTimeoutMs: 1000, requiresAuth: false,
 * });
 * const open = sessionGate({
 *   config: defaultConfig(), admission, sessions: new Set(), closing: () => true,
 * });
 * const refused = open({ transport: "websocket", send: () => {} });
 * assert.deepEqual(refused, { status: 503, reason: "the host is shutting down" });
 * ```
 */
export function sessionGate(
  gate: Gate,
): (open: OpenSessionOptions) => Session | Refusal {
  const { config, admission, sessions } = gate;
  return (open) => {
    if (gate.closing()) {
      return { status: 503, reason: "the host is shutting down" };
    }
    const token = bearerToken(open.authorization, config.tokens);
    if (token === null) {
      return {
        status: 401,
        reason: "the Authorization header holds no valid token",
      };
    }
    const session = new Session({
      send: open.send,
      transport: open.transport,
      maxParallel: config.limits.maxParallel,
      onEnd: (reason) => {
        sessions.delete(session);
        gate.endSession?.(session.id);
        admission.leave(session);
        open.onEnd?.(reason);
      },
    });
    const refused = admission.open(session, {
      token,
      // stdio: the client started the host. MCP: /mcp checks the bearer
      // token on every request before a session opens, and sets auth itself.
      trusted: open.transport === "stdio" || open.transport === "mcp",
    });
    if (refused !== "") return { status: 503, reason: refused };
    // A token checked in the header authenticates the session as a handshake
    // would: it may ping before one, and a handshake that presents no token
    // (the Python SDK's default auth_token is "") keeps this one.
    if (typeof token === "string") session.authenticate("accepted", token);
    sessions.add(session);
    return session;
  };
}

/**
 * Sends a push message (no `req_id`) to every live session that may have
 * it: all of them, or only the authenticated ones when the host needs auth.
 *
 * @param sessions the live sessions
 * @param message the push message
 * @param requiresAuth whether only `accepted` sessions get it
 * @returns how many sessions it was sent to
 * @example
 * ```ts
 * import { broadcastTo } from "./session_gate.ts";
 * import { Session } from "./session.ts";
 * import assert from "node:assert/strict";
 * const got: unknown[] = [];
 * const session = new Session({ send: (m) => got.push(m) });
 * const sessions = new Set([session]);
 * const message = { type: "x", id: "1", version: "1.0", ts: 0 };
 * assert.equal(broadcastTo(sessions, message, true), 0);
 * assert.equal(broadcastTo(sessions, message, false), 1);
 * assert.equal(got.length, 1);
 * ```
 */
export function broadcastTo(
  sessions: ReadonlySet<Session>,
  message: OutgoingMessage,
  requiresAuth: boolean,
): number {
  let count = 0;
  for (const session of sessions) {
    if (!requiresAuth || session.auth === "accepted") {
      session.send(message);
      count++;
    }
  }
  return count;
}
