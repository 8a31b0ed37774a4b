/**
 * The event stream of one HTTP+SSE transport session (`GET /stream`): it
 * attaches to the session's {@link Channel}, replacing the stream attached
 * before (a reconnect), and hands it the queued messages only when the HTTP
 * layer pulls, so what the client never asked for stays queued for the next
 * stream. A quiet stream gets a keep-alive comment so that proxies do not
 * cut it.
 *
 * @module
 */

import type { Channel } from "./_sse_channel.ts";

/** Keep-alive comment interval, so proxies do not cut a quiet stream. */
export const KEEPALIVE_MS = 15_000;

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
 * import { attachStream } from "./_sse_stream.ts";
 * import { Channel } from "./_sse_channel.ts";
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
  channel.attached = me;
  channel.wake();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(": connected\n\n"));
    },
    pull: (controller) => pullNext(channel, me, controller, keepaliveMs),
    cancel() {
      if (channel.attached === me) {
        channel.attached = null;
        channel.lastActive = performance.now();
      }
    },
  }, { highWaterMark: 0 });
}

// One pull: the whole queue as one chunk, or a keep-alive after a quiet
// while, or the end (the stream was replaced or the session ended).
async function pullNext(
  channel: Channel,
  me: symbol,
  controller: ReadableStreamDefaultController<Uint8Array>,
  keepaliveMs: number,
): Promise<void> {
  while (true) {
    if (channel.attached !== me) return controller.close();
    if (channel.queue.length > 0) {
      // Taken only now that the HTTP layer asks for bytes: what the client
      // never asked for stays queued for the next stream.
      const batch = channel.take();
      controller.enqueue(encoder.encode(
        batch.map((m) => `id: ${m.seq}\ndata: ${m.text}\n\n`).join(""),
      ));
      return;
    }
    if (channel.ended) return controller.close();
    const before = performance.now();
    await channel.wait(keepaliveMs);
    if (
      channel.attached === me && channel.queue.length === 0 &&
      !channel.ended && performance.now() - before >= keepaliveMs
    ) {
      controller.enqueue(encoder.encode(": keepalive\n\n"));
      return;
    }
  }
}
