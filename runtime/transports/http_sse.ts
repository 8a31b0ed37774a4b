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
 * missed, so those in-flight bytes are the one thing it may lose. A transport session with no
 * stream attached and no request for `sse_idle_seconds` expires, which ends
 * its A2E session and cancels its calls.
 *
 * @module
 */

import { Hono } from "hono";
import { Session } from "../session.ts";
import type { TransportContext } from "./_context.ts";
import { backlogDecision } from "./_backlog.ts";

/** Keep-alive comment interval, so proxies do not cut a quiet stream. */
const KEEPALIVE_MS = 15_000;

/** Delivered messages kept for `Last-Event-ID` replay, per session. */
const REPLAY_LIMIT = 1024;

/** One outgoing message and its SSE event id. */
interface Outgoing {
  seq: number;
  text: string;
}

const encoder = new TextEncoder();

/** One transport session: an A2E session plus its outgoing queue. */
class Channel {
  readonly session: Session;
  /** Not yet handed to a stream. */
  queue: Outgoing[] = [];
  /** Characters waiting in `queue`: how far behind the client is. */
  backlog = 0;
  /** Live events dropped because the client fell behind. */
  dropped = 0;
  /** Handed to a stream, kept until a `Last-Event-ID` confirms them. */
  sent: Outgoing[] = [];
  #seq = 0;
  lastActive: number = performance.now();
  /** The stream that currently delivers, or null. */
  attached: symbol | null = null;
  ended = false;
  #wake: (() => void) | null = null;

  constructor(session: Session) {
    this.session = session;
  }

  push(text: string): void {
    this.queue.push({ seq: ++this.#seq, text });
    this.backlog += text.length;
    this.wake();
  }

  /** Moves the whole queue to `sent` and returns it. */
  take(): Outgoing[] {
    const batch = this.queue;
    this.queue = [];
    this.backlog = 0;
    this.sent.push(...batch);
    if (this.sent.length > REPLAY_LIMIT) {
      this.sent.splice(0, this.sent.length - REPLAY_LIMIT);
    }
    return batch;
  }

  /**
   * A stream reconnected saying it saw everything up to `lastSeen`: what
   * was handed to the old stream after that (lost with the connection) goes
   * back in front of the queue.
   */
  resume(lastSeen: number): void {
    const lost = this.sent.filter((m) => m.seq > lastSeen);
    this.sent = [];
    this.queue = [...lost, ...this.queue];
    for (const m of lost) this.backlog += m.text.length;
  }

  wake(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Resolves when there is something to do, or after `ms`. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** The HTTP+SSE transport: a Hono app plus the timer that expires sessions. */
export interface SseTransport {
  /** The routes, to mount under `/a2e`. */
  readonly app: Hono;
  /** How many transport sessions exist. */
  readonly size: number;
  /** Ends every transport session's streams and stops the expiry timer. */
  close(): void;
}

/**
 * Builds the HTTP+SSE transport.
 *
 * @param context the host as transports see it
 * @returns the routes and a `close()` for host shutdown
 * @example Mount it under /a2e
 * ```ts ignore
 * import { Hono } from "hono";
 * import { createSseTransport } from "./http_sse.ts";
 * declare const context: import("./_context.ts").TransportContext;
 * const sse = createSseTransport(context);
 * new Hono().route("/a2e", sse.app);
 * ```
 */
export function createSseTransport(context: TransportContext): SseTransport {
  const channels = new Map<string, Channel>();
  const idleMs = context.limits.sseIdleSeconds * 1000;

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, channel] of channels) {
      if (channel.attached === null && now - channel.lastActive > idleMs) {
        channels.delete(id);
        channel.session.close("HTTP+SSE transport session expired");
      }
    }
  }, Math.max(10, Math.min(idleMs / 2, 30_000)));
  // Expiry must never keep a process alive on its own.
  Deno.unrefTimer(sweep);

  const app = new Hono();

  app.get("/health", (c) => c.json({ status: "ok" }));

  app.post("/session", (c) => {
    // The session's sink needs the channel, and the channel the session.
    const box: { channel?: Channel } = {};
    const id = crypto.randomUUID().replaceAll("-", "");
    const session = context.admitSession({
      transport: "sse",
      authorization: c.req.header("authorization"),
      send: (message) => {
        const channel = box.channel;
        if (!channel) return;
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
      },
      onEnd: () => {
        const channel = box.channel;
        if (!channel) return;
        channel.ended = true;
        channels.delete(id);
        channel.wake();
      },
    });
    if (!(session instanceof Session)) {
      return c.json({ error: session.reason }, session.status);
    }
    box.channel = new Channel(session);
    channels.set(id, box.channel);
    return c.json({ session_id: id });
  });

  app.post("/send", async (c) => {
    const found = findChannel(channels, c.req.header("x-session-id"));
    if (typeof found === "number") {
      return c.json({
        error: found === 400
          ? 'Cannot send: missing header "X-Session-Id"'
          : `Cannot send: unknown session "${c.req.header("x-session-id")}"`,
      }, found);
    }
    found.lastActive = performance.now();
    const body = await readCapped(
      c.req.raw.body,
      context.dispatcher.maxMessageBytes,
    );
    if (body.over) {
      context.dispatcher.rejectOversize(found.session, body.bytes, body.text);
    } else {
      // The answer travels on the stream; /send only acknowledges receipt.
      context.dispatcher.receive(found.session, body.text);
    }
    return c.json({ ok: true });
  });

  app.get("/stream", (c) => {
    const found = findChannel(channels, c.req.header("x-session-id"));
    if (typeof found === "number") {
      return c.json({
        error: found === 400
          ? 'Cannot stream: missing header "X-Session-Id"'
          : `Cannot stream: unknown session "${c.req.header("x-session-id")}"`,
      }, found);
    }
    const channel = found;
    const lastEventId = c.req.header("last-event-id");
    if (lastEventId && /^\d+$/.test(lastEventId)) {
      channel.resume(Number(lastEventId));
    }
    // A reconnect replaces the old stream; its pending pull sees it is no
    // longer attached and ends without taking a message.
    const me = Symbol("stream");
    channel.attached = me;
    channel.wake();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(": connected\n\n"));
      },
      async pull(controller) {
        while (true) {
          if (channel.attached !== me) return controller.close();
          if (channel.queue.length > 0) {
            // Taken only now that the HTTP layer asks for bytes: what the
            // client never asked for stays queued for the next stream.
            const batch = channel.take();
            controller.enqueue(encoder.encode(
              batch.map((m) => `id: ${m.seq}\ndata: ${m.text}\n\n`).join(""),
            ));
            return;
          }
          if (channel.ended) return controller.close();
          const before = performance.now();
          await channel.wait(KEEPALIVE_MS);
          if (
            channel.attached === me && channel.queue.length === 0 &&
            !channel.ended && performance.now() - before >= KEEPALIVE_MS
          ) {
            controller.enqueue(encoder.encode(": keepalive\n\n"));
            return;
          }
        }
      },
      cancel() {
        if (channel.attached === me) {
          channel.attached = null;
          channel.lastActive = performance.now();
        }
      },
    }, { highWaterMark: 0 });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    });
  });

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

function findChannel(
  channels: Map<string, Channel>,
  id: string | undefined,
): Channel | 400 | 404 {
  if (!id) return 400;
  return channels.get(id) ?? 404;
}

interface CappedBody {
  text: string;
  bytes: number;
  over: boolean;
}

// Keeps at most `max` bytes, so a huge body costs no more memory than the
// limit; on overflow the start is kept to salvage the request's id.
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<CappedBody> {
  if (!body) return { text: "", bytes: 0, over: false };
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let over = false;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    // Past the limit, keep reading but discard: cutting the upload short
    // would make many clients report a reset instead of reading our answer.
    if (bytes > max) over = true;
    else chunks.push(chunk);
  }
  if (over) {
    const first = chunks[0]?.slice(0, 4096) ?? new Uint8Array();
    return { text: new TextDecoder().decode(first), bytes, over };
  }
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return { text: new TextDecoder().decode(all), bytes, over: false };
}
