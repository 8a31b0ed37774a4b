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
 * ids that are gone. What all sessions keep, and what their clients have
 * not pulled yet, is bounded together too ({@link HeldOutput}). A transport
 * session with no stream attached and no request for `sse_idle_seconds`
 * expires, which ends its A2E session and cancels its calls.
 *
 * This module holds the routes, then one transport session's queue
 * ({@link Channel}), then its event stream ({@link attachStream}).
 *
 * @module
 */

import { getHeapStatistics } from "node:v8";
import { type Context, Hono } from "hono";
import { bearerToken } from "../admission.ts";
import { clientKey } from "../doors/auth_throttle.ts";
import { Session } from "../session.ts";
import { settlesWithin } from "../deadline.ts";
import { encodeError } from "../../protocol/responses.ts";
import type { Refusal, TransportContext } from "./transport_context.ts";
import {
  bodyRefusal,
  bodyTimeoutMs,
  readCapped,
  slowClientRule,
  UnreadOutput,
  unreadOutput,
} from "./client_bounds.ts";

/** The HTTP+SSE transport: a Hono app plus the timer that expires sessions. */
export interface SseTransport {
  /** The routes, to mount under `/a2e`. */
  readonly app: Hono;
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
  const held = new HeldOutput(undefined, unreadOutput);
  const sweep = startExpiry(channels, context.limits.sseIdleSeconds * 1000);
  const app = new Hono();
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.post("/session", (c) => {
    const opened = openChannel(context, channels, held, c);
    if (typeof opened !== "string") {
      return c.json({ error: opened.reason }, opened.status);
    }
    // In a header too: a load balancer sticks the session to this host by
    // headers, never by reading JSON bodies (deploy/haproxy.cfg).
    c.header("X-Session-Id", opened);
    return c.json({ session_id: opened });
  });
  app.post("/send", (c) => receive(context, channels, c));
  app.get("/stream", (c) => stream(context, channels, c));
  return {
    app,
    close() {
      clearInterval(sweep);
      // Each session's end takes its channel out (openChannel's onEnd).
      for (const channel of channels.values()) {
        channel.session.close("Host closing");
      }
    },
  };
}

// Expires sessions with no stream attached and no request for `idleMs`
// (a session's end takes its channel out); the timer never keeps a process
// alive on its own.
function startExpiry(
  channels: Channels,
  idleMs: number,
): ReturnType<typeof setInterval> {
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const channel of channels.values()) {
      if (channel.attached === null && now - channel.lastActive > idleMs) {
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
  held: HeldOutput,
  c: Context,
): string | Refusal {
  const authorization = c.req.header("authorization");
  // The session's sink needs the channel, and the channel the session.
  const box: { channel?: Channel } = {};
  const id = crypto.randomUUID().replaceAll("-", "");
  const decide = slowClientRule({
    client: "An SSE client",
    stopping: "Ending an SSE session whose client stopped reading",
    unit: "characters",
    overShare: () => box.channel?.overShare() ?? false,
    log: (line) => context.log(line),
  });
  const session = context.admitSession({
    transport: "sse",
    authorization,
    client: clientKey(c.env), // the listener's connection info
    send: (message) => {
      const channel = box.channel;
      if (!channel) return;
      switch (decide(channel.backlog, message)) {
        case "send":
          channel.push(JSON.stringify(message));
          return;
        case "disconnect":
          channel.session.close("The client stopped reading");
      }
    },
    // The one place a channel ends: the session's end, whatever ended it
    // (the client, expiry, host shutdown).
    onEnd: () => {
      const channel = box.channel;
      if (!channel) return;
      channel.ended = true;
      channels.delete(id);
      channel.release();
      channel.wake();
    },
  });
  if (!(session instanceof Session)) return session;
  box.channel = new Channel(session, held);
  // Admitted by its header: every request must show that token again.
  if (authorization !== undefined && session.auth === "accepted") {
    box.channel.bearer = session.token;
  }
  channels.set(id, box.channel);
  return id;
}

// `POST /send`: one message in; the answer travels on the stream, so this
// only acknowledges receipt.
async function receive(
  context: TransportContext,
  channels: Channels,
  c: Context,
): Promise<Response> {
  const found = findChannel(context, channels, c, "send");
  if (found instanceof Response) return found;
  found.lastActive = performance.now();
  const max = context.dispatcher.maxMessageBytes;
  const timeoutMs = bodyTimeoutMs(context.limits);
  const body = await readCapped(c.req.raw.body, max, { timeoutMs });
  const refusal = bodyRefusal(body, timeoutMs);
  if (refusal) return refusal;
  if (!body.over) {
    context.dispatcher.receive(found.session, body.text);
    return c.json({ ok: true });
  }
  // The stream says so too, to the request's id when it could be read.
  context.dispatcher.rejectOversize(found.session, body.bytes, body.text);
  if (!body.cut) return c.json({ ok: true });
  return c.json({
    error:
      `Cannot accept message: over ${body.bytes} bytes exceeds the limit of ${max} bytes`,
  }, 413);
}

// `GET /stream`: the session's event stream.
function stream(
  context: TransportContext,
  channels: Channels,
  c: Context,
): Response {
  const found = findChannel(context, channels, c, "stream");
  if (found instanceof Response) return found;
  if (found.streams >= MAX_OPEN_STREAMS) {
    return c.json({
      error:
        `Cannot stream: the session already has ${found.streams} stream connections open (at most ${MAX_OPEN_STREAMS}): close one first`,
    }, 429);
  }
  return new Response(attachStream(found, c.req.header("last-event-id")), {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

// The request's transport session, or the answer that it has none. Another
// token's session is as good as unknown (as on MCP's `/mcp`), so a request
// can neither read nor drive a session whose token it does not show.
function findChannel(
  context: TransportContext,
  channels: Channels,
  c: Context,
  verb: string,
): Channel | Response {
  const id = c.req.header("x-session-id");
  const channel = id ? channels.get(id) : undefined;
  if (
    channel !== undefined && (!context.dispatcher.requiresAuth ||
      showsToken(channel, c.req.header("authorization")))
  ) return channel;
  return id
    ? c.json({ error: `Cannot ${verb}: unknown session "${id}"` }, 404)
    : c.json({ error: `Cannot ${verb}: missing header "X-Session-Id"` }, 400);
}

/**
 * Whether a request may use a transport session, by its `Authorization`
 * header, on a host with tokens. A session bound to a token (opened with
 * it in the header, or admitted and then shown it) answers only requests
 * that show that token. Until it is admitted, the handshake decides; and
 * a client that presents its token only in the handshake, never in a
 * header, has its session id as its one credential.
 *
 * @param channel the transport session
 * @param authorization the request's `Authorization` header
 * @returns whether the request may use it
 * @example A session bound to a token refuses another, and none
 * ```ts
 * import { Channel, showsToken } from "./http_sse.ts";
 * import type { Session } from "../session.ts";
 * import assert from "node:assert/strict";
 * const channel = new Channel({ auth: "accepted", token: "a" } as Session);
 * assert.equal(showsToken(channel, undefined), true);
 * assert.equal(showsToken(channel, "Bearer a"), true); // binds it
 * assert.equal(showsToken(channel, undefined), false);
 * assert.equal(showsToken(channel, "Bearer b"), false);
 * ```
 */
export function showsToken(
  channel: Channel,
  authorization: string | undefined,
): boolean {
  if (channel.bearer !== null) {
    return typeof bearerToken(authorization, [channel.bearer]) === "string";
  }
  const session = channel.session;
  if (session.auth !== "accepted") return true;
  const shown = bearerToken(authorization, [session.token]);
  if (shown === null) return false;
  if (shown !== undefined) channel.bearer = session.token;
  return true;
}

// One transport session: its A2E session plus the queue of outgoing
// messages waiting for a stream to pull them, the ones handed to a stream
// and kept for a `Last-Event-ID` replay, and the wake-up of the stream that
// waits for them.

/** Delivered messages kept for `Last-Event-ID` replay, per session. */
export const REPLAY_LIMIT = 1024;

/**
 * Characters of delivered messages kept for `Last-Event-ID` replay, per
 * session: a replay only needs what a dropped connection swallowed in
 * flight, and a count alone let 1,024 large messages pin hundreds of MB.
 */
export const REPLAY_CHARS: number = 8 * 1024 * 1024;

/**
 * What all of the transport's sessions hold for their clients: kept for a
 * replay, and queued but not yet pulled. Each session's own bounds
 * ({@link REPLAY_CHARS}; 64 MiB unread before it is ended) times the
 * sessions a host admits would pass its heap, and V8 would end the host.
 * Past `maxChars` kept in all, replay buffers over an equal share are cut
 * to it (a replay past what is kept gets the gap's error). What waits
 * unread is counted with every other connection's ({@link UnreadOutput}):
 * a session over its share of that is ended as one that stopped reading.
 *
 * @example Two sessions keep an equal share of a small bound
 * ```ts
 * import { Channel, HeldOutput } from "./http_sse.ts";
 * import type { Session } from "../session.ts";
 * import assert from "node:assert/strict";
 * const held = new HeldOutput(100);
 * const a = new Channel({} as Session, held);
 * const b = new Channel({} as Session, held);
 * a.push("x".repeat(60));
 * a.take();
 * b.push("y".repeat(60));
 * b.take();
 * assert.equal(held.kept, 0); // each kept 60 > 50: both forgotten
 * assert.equal(a.forgotten, 1);
 * ```
 */
export class HeldOutput {
  /**
   * The bound of what replays keep, in characters. @default a sixteenth
   * of the V8 heap limit (256 Mi characters under Deno's default 4 GiB)
   */
  readonly maxChars: number;
  /** Characters kept for replays. */
  kept = 0;
  /** The sessions counted. */
  readonly channels: Set<Channel> = new Set();
  /** Where the sessions' unread messages are counted. */
  readonly unread: UnreadOutput;

  /**
   * @param maxChars the bound of what replays keep, in characters
   * @param unread where unread messages are counted @default a bound of
   *   its own
   */
  constructor(
    maxChars: number = Math.floor(getHeapStatistics().heap_size_limit / 16),
    unread: UnreadOutput = new UnreadOutput(),
  ) {
    this.maxChars = maxChars;
    this.unread = unread;
  }

  /** Past the bound, cuts every replay buffer over an equal share to it. */
  trimKept(): void {
    if (this.kept <= this.maxChars) return;
    const share = this.maxChars / Math.max(1, this.channels.size);
    for (const channel of this.channels) {
      if (channel.sentChars > share) channel.forget(share);
    }
  }
}

/** One outgoing message and its SSE event id. */
export interface Outgoing {
  /** The SSE `id:`, counting from 1 per session. */
  seq: number;
  /** The message's JSON. */
  text: string;
}

/**
 * One transport session: an A2E session plus its outgoing queue.
 *
 * @example Queue, take, and replay after a reconnect
 * ```ts
 * import { Channel } from "./http_sse.ts";
 * import type { Session } from "../session.ts";
 * import assert from "node:assert/strict";
 * const channel = new Channel({} as Session);
 * channel.push('{"a":1}');
 * channel.push('{"b":2}');
 * assert.deepEqual(channel.take().map((m) => m.seq), [1, 2]);
 * channel.resume(1); // the stream saw 1; 2 was lost in flight
 * assert.deepEqual(channel.queue.map((m) => m.seq), [2]);
 * ```
 */
export class Channel {
  /** The A2E session. */
  readonly session: Session;
  /** Not yet handed to a stream. */
  queue: Outgoing[] = [];
  /** Characters waiting in `queue`: how far behind the client is. */
  backlog = 0;
  /** Handed to a stream, kept until a `Last-Event-ID` confirms them. */
  sent: Outgoing[] = [];
  /** Characters held in `sent`. */
  sentChars = 0;
  /** The highest id dropped from `sent` to keep it bounded (0: none). */
  forgotten = 0;
  #seq = 0;
  // What the transport's sessions hold together; null once released.
  #held: HeldOutput | null;
  readonly #unwatch: () => void;
  /** When a request or a stream last touched the session (`performance.now()`). */
  lastActive: number = performance.now();
  /** The stream that currently delivers, or null. */
  attached: symbol | null = null;
  /** Lets go of what the attached stream has not handed out yet. */
  dropUnsent: (() => void) | null = null;
  /**
   * The token every request on this session must show in its
   * `Authorization` header, once bound (see {@link showsToken}); null
   * before.
   */
  bearer: string | null = null;
  /**
   * Streams whose connection is still open: the attached one, and those it
   * replaced that were not pulled since (a client that stops reading
   * leaves them so until it closes the connection).
   */
  streams = 0;
  /** The A2E session ended: streams close once the queue is drained. */
  ended = false;
  #wake: (() => void) | null = null;

  /**
   * @param session the A2E session the channel carries
   * @param held what the transport's sessions hold together, counted in
   *   until {@link release} @default a bound of its own
   */
  constructor(session: Session, held: HeldOutput = new HeldOutput()) {
    this.session = session;
    this.#held = held;
    held.channels.add(this);
    this.#unwatch = held.unread.watch(() => this.backlog);
  }

  /** Stops counting this session in what the transport's sessions hold. */
  release(): void {
    const held = this.#held;
    if (held === null) return;
    this.#held = null;
    this.#unwatch();
    held.channels.delete(this);
    held.kept -= this.sentChars;
  }

  /**
   * Whether this session is over its share of what all clients leave
   * unread while together they pass their bound: it is ended as a client
   * that stopped reading would be.
   */
  overShare(): boolean {
    return this.#held !== null && this.#held.unread.overShare(this.backlog);
  }

  /** Queues one message and wakes the waiting stream. */
  push(text: string): void {
    this.queue.push({ seq: ++this.#seq, text });
    this.backlog += text.length;
    this.wake();
  }

  #kept(chars: number): void {
    this.sentChars += chars;
    if (this.#held) this.#held.kept += chars;
  }

  /**
   * Forgets the oldest messages kept for a replay until at most `maxCount`
   * and `maxChars` are (a replay past them gets the gap's error).
   *
   * @param maxChars characters to keep at most
   * @param maxCount messages to keep at most
   */
  forget(maxChars: number, maxCount: number = REPLAY_LIMIT): void {
    let drop = 0;
    let chars = 0;
    while (
      drop < this.sent.length &&
      (this.sent.length - drop > maxCount || this.sentChars - chars > maxChars)
    ) {
      const old = this.sent[drop++]!;
      chars += old.text.length;
      this.forgotten = old.seq;
    }
    if (drop === 0) return;
    this.sent.splice(0, drop);
    this.#kept(-chars);
  }

  /**
   * Moves the queue to `sent` and returns what was moved: the whole queue,
   * or its first messages up to `maxChars` characters (at least one).
   */
  take(maxChars: number = Infinity): Outgoing[] {
    let count = 0;
    let chars = 0;
    for (const m of this.queue) {
      if (count > 0 && chars + m.text.length > maxChars) break;
      chars += m.text.length;
      count++;
    }
    const batch = this.queue.splice(0, count);
    for (const m of batch) this.sent.push(m);
    this.backlog -= chars;
    this.#kept(chars);
    // Bounded by count and by characters: the oldest go first.
    this.forget(REPLAY_CHARS);
    this.#held?.trimKept();
    return batch;
  }

  /**
   * A stream reconnected saying it saw everything up to `lastSeen`: what
   * was handed to the old stream after that (lost with the connection) goes
   * back in front of the queue. When some of it is no longer kept (the
   * replay buffer is bounded), an A2E `error` says which ids are gone,
   * ahead of what could be kept: the client learns of the gap rather than
   * silently missing messages.
   */
  resume(lastSeen: number): void {
    const gone = this.forgotten > lastSeen
      ? [this.#gap(lastSeen, this.forgotten)]
      : [];
    const after = Math.max(lastSeen, this.forgotten);
    const lost = this.sent.filter((m) => m.seq > after);
    this.#kept(-this.sentChars);
    this.sent = [];
    this.queue = [...gone, ...lost, ...this.queue];
    for (const m of [...gone, ...lost]) this.backlog += m.text.length;
  }

  // The error that stands for messages `after + 1` to `upTo`, no longer
  // kept. It takes the id `upTo`, so ids stay in order on the stream and a
  // client that saw it resumes after the gap.
  #gap(after: number, upTo: number): Outgoing {
    const message = encodeError("", {
      code: "runtime_error",
      message: `Cannot replay the events after id "${after}": ids ${
        after + 1
      } to ${upTo} are no longer kept (the replay buffer keeps at most ${REPLAY_LIMIT} messages and ${REPLAY_CHARS} characters)`,
      detail: { last_event_id: after, first_replayed_id: upTo + 1 },
    });
    return { seq: upTo, text: JSON.stringify(message) };
  }

  /** Ends the current {@link Channel.wait}, if any. */
  wake(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /**
   * Resolves when there is something to do, or after `ms`.
   *
   * @returns true when `ms` passed with nothing to do
   */
  async wait(ms: number): Promise<boolean> {
    const woken = Promise.withResolvers<void>();
    this.#wake = woken.resolve;
    return !await settlesWithin(woken.promise, ms);
  }
}

// The event stream of one transport session (`GET /stream`): it attaches
// to the session's Channel, replacing the stream attached before (a
// reconnect), and hands it the queued messages only when the HTTP layer
// pulls, so what the client never asked for stays queued for the next
// stream. A quiet stream gets a keep-alive comment so that proxies do not
// cut it.

/**
 * Most streams of one session whose connections are open at once. A new
 * stream replaces the attached one, which ends at its next pull; but one
 * whose client stopped reading is never pulled again, and holds its
 * connection and its last chunk until the client closes it. Past this
 * many, a new stream is refused (429), so one session cannot pile them
 * up.
 */
export const MAX_OPEN_STREAMS = 8;

/** Keep-alive comment interval, so proxies do not cut a quiet stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Most bytes one pull hands the HTTP layer. A client that stops reading
 * leaves its stream holding the last chunk it was handed for as long as
 * its connection stays open, replaced or not: so a chunk is small, and
 * what is not yet handed out stays queued (counted in the backlog) or, for
 * the rest of one large message, is let go when the stream is replaced.
 *
 * @example A large message leaves in chunks
 * ```ts
 * import { attachStream, Channel, STREAM_CHUNK_BYTES } from "./http_sse.ts";
 * import type { Session } from "../session.ts";
 * import assert from "node:assert/strict";
 * const channel = new Channel({} as Session);
 * channel.push(JSON.stringify("x".repeat(2 * STREAM_CHUNK_BYTES)));
 * const reader = attachStream(channel, undefined).getReader();
 * await reader.read(); // ": connected"
 * assert.equal((await reader.read()).value?.length, STREAM_CHUNK_BYTES);
 * await reader.cancel();
 * ```
 */
export const STREAM_CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * Attaches a new stream to a channel. A `Last-Event-ID` (digits) puts back
 * in front of the queue what the dropped stream was handed after that id.
 *
 * @param channel the transport session
 * @param lastEventId the request's `Last-Event-ID` header, if any
 * @param keepaliveMs how long a stream stays quiet before a keep-alive
 * @returns the SSE body: a `: connected` comment, then `id:`/`data:` events
 * @example The queued message is the first event
 * ```ts
 * import { attachStream } from "./http_sse.ts";
 * import { Channel } from "./http_sse.ts";
 * import type { Session } from "../session.ts";
 * import assert from "node:assert/strict";
 * const channel = new Channel({} as Session);
 * channel.push('{"type":"pong"}');
 * const reader = attachStream(channel, undefined).getReader();
 * const text = new TextDecoder();
 * assert.equal(text.decode((await reader.read()).value), ": connected\n\n");
 * assert.equal(text.decode((await reader.read()).value), 'id: 1\ndata: {"type":"pong"}\n\n');
 * await reader.cancel();
 * ```
 */
export function attachStream(
  channel: Channel,
  lastEventId: string | undefined,
  keepaliveMs: number = KEEPALIVE_MS,
): ReadableStream<Uint8Array> {
  if (lastEventId && /^\d+$/.test(lastEventId)) {
    channel.resume(Number(lastEventId));
  }
  // A reconnect replaces the old stream; its pending pull sees it is no
  // longer attached and ends without taking a message.
  const me = Symbol("stream");
  // A replaced stream whose client stopped reading is never pulled again,
  // and lives as long as its connection: it must not keep what it holds.
  channel.dropUnsent?.();
  channel.attached = me;
  channel.streams++;
  let open = true;
  channel.wake();
  // The encoded batch being handed out, one chunk a pull.
  let out = new Uint8Array(0);
  let at = 0;
  const dropUnsent = () => {
    out = new Uint8Array(0);
    at = 0;
  };
  channel.dropUnsent = dropUnsent;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(": connected\n\n"));
    },
    // One pull: the next chunk of the batch, or a keep-alive after a quiet
    // while, or the end (the stream was replaced or the session ended).
    async pull(controller) {
      while (channel.attached === me) {
        if (at === out.length && channel.queue.length > 0) {
          // Taken only now that the HTTP layer asks for bytes: what the
          // client never asked for stays queued for the next stream.
          const batch = channel.take(STREAM_CHUNK_BYTES);
          out = encoder.encode(
            batch.map((m) => `id: ${m.seq}\ndata: ${m.text}\n\n`).join(""),
          );
          at = 0;
        }
        if (at < out.length) {
          // A copy, so that a stalled connection holding the chunk pins
          // that chunk, not the whole batch.
          const end = Math.min(at + STREAM_CHUNK_BYTES, out.length);
          controller.enqueue(
            at === 0 && end === out.length ? out : out.slice(at, end),
          );
          at = end;
          if (at === out.length) dropUnsent(); // all handed out: let it go
          return;
        }
        if (channel.ended) break;
        // Quiet all along: nothing pushed, no reconnect, no end (each wakes).
        if (await channel.wait(keepaliveMs) && channel.attached === me) {
          controller.enqueue(encoder.encode(": keepalive\n\n"));
          return;
        }
      }
      if (open) channel.streams--;
      open = false;
      controller.close();
    },
    cancel() {
      if (open) channel.streams--;
      open = false;
      if (channel.attached === me) {
        channel.attached = null;
        channel.dropUnsent = null;
        channel.lastActive = performance.now();
      }
    },
  }, { highWaterMark: 0 });
}
