/**
 * The HTTP+SSE transport the A2E Python SDK's `HTTPTransport` speaks
 * (A2E-WIRE.md §7), mounted under `/a2e`: `POST /session`, `POST /send`,
 * `GET /stream`, `GET /health`.
 *
 * Outgoing messages wait in a per-session queue and leave it only when the
 * attached stream pulls them, so nothing is lost before the client first
 * connects the stream or while it is disconnected. Each event carries an
 * SSE `id:`; a stream that reconnects with `Last-Event-ID` (as a browser's
 * `EventSource` does) also gets again what the dropped connection swallowed
 * in flight. A client that sends no `Last-Event-ID` cannot say what it
 * missed, so those in-flight bytes are the one thing it may lose. What is
 * kept for a replay is bounded (`REPLAY_LIMIT` messages, `REPLAY_CHARS`
 * characters); a replay that asks for more gets an A2E `error` naming the
 * ids that are gone. A transport session with no
 * stream attached and no request for `sse_idle_seconds` expires, which ends
 * its A2E session and cancels its calls.
 *
 * The queue is `_sse_channel.ts`, the stream `_sse_stream.ts`, the capped
 * body read `capped_body.ts`; this module holds the routes.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import { clientKey } from "../doors/auth_throttle.ts";
import { Session } from "../session.ts";
import type { OutgoingMessage } from "../capability.ts";
import type { Refusal, TransportContext } from "./transport_context.ts";
import { backlogDecision } from "./backlog.ts";
import { Channel } from "./_sse_channel.ts";
import { attachStream } from "./_sse_stream.ts";
import { readCapped } from "./capped_body.ts";

/** The HTTP+SSE transport: a Hono app plus the timer that expires sessions. */
export interface SseTransport {
  /** The routes, to mount under `/a2e`. */
  readonly app: Hono;
  /** How many transport sessions exist. */
  readonly size: number;
  /** Ends every transport session's streams and stops the expiry timer. */
  close(): void;
}

/** The transport sessions by their id (the `X-Session-Id` header). */
type Channels = Map<string, Channel>;

/**
 * Builds the HTTP+SSE transport.
 *
 * @param context the host as transports see it
 * @returns the routes and a `close()` for host shutdown
 * @example Mount it under /a2e
 * ```ts ignore
 * import { Hono } from "hono";
 * import { createSseTransport } from "./http_sse.ts";
 * declare const context: import("./transport_context.ts").TransportContext;
 * const sse = createSseTransport(context);
 * new Hono().route("/a2e", sse.app);
 * ```
 */
export function createSseTransport(context: TransportContext): SseTransport {
  const channels: Channels = new Map();
  const sweep = startExpiry(channels, context.limits.sseIdleSeconds * 1000);
  const app = new Hono();
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.post("/session", (c) => {
    const opened = openChannel(
      context,
      channels,
      c.req.header("authorization"),
      clientKey(c.env),
    );
    if (typeof opened !== "string") {
      return c.json({ error: opened.reason }, opened.status);
    }
    // In a header too: a load balancer sticks the session to this host by
    // headers, never by reading JSON bodies (deploy/haproxy.cfg).
    c.header("X-Session-Id", opened);
    return c.json({ session_id: opened });
  });
  app.post("/send", (c) => receive(context, channels, c));
  app.get("/stream", (c) => stream(channels, c));
  return {
    app,
    get size() {
      return channels.size;
    },
    close() {
      clearInterval(sweep);
      for (const channel of channels.values()) {
        channel.session.close("Host closing");
      }
      channels.clear();
    },
  };
}

// Expires sessions with no stream attached and no request for `idleMs`;
// the timer never keeps a process alive on its own.
function startExpiry(
  channels: Channels,
  idleMs: number,
): ReturnType<typeof setInterval> {
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, channel] of channels) {
      if (channel.attached === null && now - channel.lastActive > idleMs) {
        channels.delete(id);
        channel.session.close("HTTP+SSE transport session expired");
      }
    }
  }, Math.max(10, Math.min(idleMs / 2, 30_000)));
  Deno.unrefTimer(sweep);
  return sweep;
}

// `POST /session`: a new A2E session and its channel; the id, or why not.
function openChannel(
  context: TransportContext,
  channels: Channels,
  authorization: string | undefined,
  client: string,
): string | Refusal {
  // The session's sink needs the channel, and the channel the session.
  const box: { channel?: Channel } = {};
  const id = crypto.randomUUID().replaceAll("-", "");
  const session = context.admitSession({
    transport: "sse",
    authorization,
    client,
    send: (message) => {
      if (box.channel) deliver(context, box.channel, message);
    },
    onEnd: () => {
      const channel = box.channel;
      if (!channel) return;
      channel.ended = true;
      channels.delete(id);
      channel.wake();
    },
  });
  if (!(session instanceof Session)) return session;
  box.channel = new Channel(session);
  channels.set(id, box.channel);
  return id;
}

// Queues one outgoing message, unless the client fell too far behind.
function deliver(
  context: TransportContext,
  channel: Channel,
  message: OutgoingMessage,
): void {
  switch (backlogDecision(channel.backlog, message)) {
    case "send":
      channel.push(JSON.stringify(message));
      return;
    case "drop":
      if (channel.dropped++ === 0) {
        context.log(
          "An SSE client is not keeping up: dropping live events (calls still collect them in their results)",
        );
      }
      return;
    case "disconnect":
      context.log(
        `Ending an SSE session whose client stopped reading (${channel.backlog} characters waiting)`,
      );
      channel.session.close("The client stopped reading");
  }
}

// `POST /send`: one message in; the answer travels on the stream, so this
// only acknowledges receipt.
async function receive(
  context: TransportContext,
  channels: Channels,
  c: Context,
): Promise<Response> {
  const found = findChannel(channels, c.req.header("x-session-id"));
  if (typeof found === "number") return noChannel(c, found, "send");
  found.lastActive = performance.now();
  const body = await readCapped(
    c.req.raw.body,
    context.dispatcher.maxMessageBytes,
  );
  if (body.over) {
    context.dispatcher.rejectOversize(found.session, body.bytes, body.text);
  } else {
    context.dispatcher.receive(found.session, body.text);
  }
  return c.json({ ok: true });
}

// `GET /stream`: the session's event stream.
function stream(channels: Channels, c: Context): Response {
  const found = findChannel(channels, c.req.header("x-session-id"));
  if (typeof found === "number") return noChannel(c, found, "stream");
  return new Response(attachStream(found, c.req.header("last-event-id")), {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

function findChannel(
  channels: Channels,
  id: string | undefined,
): Channel | 400 | 404 {
  if (!id) return 400;
  return channels.get(id) ?? 404;
}

function noChannel(c: Context, status: 400 | 404, verb: string): Response {
  return c.json({
    error: status === 400
      ? `Cannot ${verb}: missing header "X-Session-Id"`
      : `Cannot ${verb}: unknown session "${c.req.header("x-session-id")}"`,
  }, status);
}
