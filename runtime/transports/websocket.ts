/**
 * The WebSocket transport at `GET /a2e`: one session per connection, one JSON
 * message per text frame. Closing the socket ends the session, which aborts
 * its in-flight calls.
 *
 * @module
 */

import type { Context, Handler } from "hono";
import type { TransportContext } from "./transport_context.ts";
import { slowClientRule, unreadOutput } from "./client_bounds.ts";
import { Session } from "../session.ts";
import { clientKey } from "../doors/auth_throttle.ts";

/**
 * Builds the Hono handler that upgrades `GET /a2e` to an A2E session.
 *
 * @param context the host as transports see it
 * @returns a Hono handler answering 426 to non-upgrade requests, 400 to
 *   a malformed upgrade, 401 to an invalid `Authorization` header and 503
 *   when no session can be opened
 * @example Mount it on a Hono app
 * ```ts ignore
 * import { Hono } from "hono";
 * import { websocketHandler } from "./websocket.ts";
 * declare const context: import("./transport_context.ts").TransportContext;
 * new Hono().get("/a2e", websocketHandler(context));
 * ```
 */
export function websocketHandler(
  context: TransportContext,
): Handler {
  return (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      return c.json({
        error: "Cannot serve A2E on this request: expected a WebSocket upgrade",
      }, 426);
    }
    // The socket exists only once open; nothing is sent to a session before
    // its first message, so the sink can be bound late.
    let socket: WebSocket | undefined;
    const decide = slowClientRule({
      client: "A WebSocket client",
      stopping: "Closing a WebSocket client that stopped reading",
      overShare: (waiting) => unreadOutput.overShare(waiting),
      log: (line) => context.log(line),
    });
    // A client that stops reading never answers the close handshake: end
    // its session at once rather than when the socket finally closes.
    const opened: { session?: { close(reason: string): void } } = {};
    const session = context.admitSession({
      transport: "websocket",
      authorization: c.req.header("authorization"),
      client: clientKey(c.env), // the listener's connection info
      send: (message) => {
        if (socket?.readyState !== WebSocket.OPEN) return;
        switch (decide(socket.bufferedAmount, message)) {
          case "send":
            socket.send(JSON.stringify(message));
            return;
          case "disconnect":
            socket.close(1008, closeReason("Client is not reading"));
            opened.session?.close("The client stopped reading");
        }
      },
      onEnd: (reason) => {
        if (socket && socket.readyState <= WebSocket.OPEN) {
          // The reason tells the client why (e.g. no handshake in time).
          socket.close(1000, closeReason(reason));
        }
      },
    });
    if (!(session instanceof Session)) {
      return c.json({ error: session.reason }, session.status);
    }
    opened.session = session;
    let upgraded: { socket: WebSocket; response: Response };
    try {
      upgraded = Deno.upgradeWebSocket(c.req.raw, upgradeOptions(c));
    } catch (error) {
      session.close("WebSocket upgrade failed");
      // Deno refuses a malformed upgrade (a missing Sec-WebSocket-Key,
      // no "Upgrade" in Connection): the client's error, not the host's.
      if (!(error instanceof TypeError)) throw error;
      return c.json({
        error: `Cannot upgrade to a WebSocket: ${error.message}`,
      }, 400);
    }
    const ws = upgraded.socket;
    const unwatch = unreadOutput.watch(() => ws.bufferedAmount);
    ws.onopen = () => {
      socket = ws;
      if (session.closed) ws.close(1001, closeReason("Session ended"));
    };
    ws.onmessage = (event) => {
      const data = event.data;
      if (typeof data === "string") {
        context.dispatcher.receive(session, data);
      } else {
        context.dispatcher.rejectBinary(session);
      }
    };
    ws.onclose = () => {
      unwatch();
      session.close("WebSocket closed");
    };
    ws.onerror = () => {
      unwatch();
      session.close("WebSocket failed");
    };
    return upgraded.response;
  };
}

// The client's first subprotocol is accepted, as Hono's helper did: a
// browser fails a connection whose offered protocol the server ignores.
function upgradeOptions(c: Context): Deno.UpgradeWebSocketOptions {
  const protocol = c.req.header("sec-websocket-protocol")?.split(",")[0]
    ?.trim();
  return protocol ? { protocol } : {};
}

// Room for a close reason's UTF-8 (RFC 6455 5.5: 125-byte control frames,
// two of them the code).
const REASON_BYTES = new Uint8Array(123);
const encoder = new TextEncoder();

/**
 * A WebSocket close reason cut to what `close()` accepts: at most 123 bytes
 * of UTF-8, whole characters only. A longer reason makes `close()` throw a
 * `SyntaxError`; counting UTF-16 units instead of bytes lets any non-ASCII
 * reason through too long.
 *
 * @param text why the socket closes
 * @returns its longest prefix that fits
 * @example A reason of two-byte characters is cut at 61 of them
 * ```ts
 * import { closeReason } from "./websocket.ts";
 * import assert from "node:assert/strict";
 * assert.equal(closeReason("Host closing"), "Host closing");
 * assert.equal(closeReason("é".repeat(100)), "é".repeat(61));
 * ```
 */
export function closeReason(text: string): string {
  // A UTF-16 unit takes at most three bytes.
  if (text.length <= REASON_BYTES.length / 3) return text;
  // encodeInto writes whole characters only, and `read` counts the units
  // they took (a surrogate pair is never split).
  const { read } = encoder.encodeInto(text, REASON_BYTES);
  return read === text.length ? text : text.slice(0, read);
}
