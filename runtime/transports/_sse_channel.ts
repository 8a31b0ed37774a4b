/**
 * One HTTP+SSE transport session: its A2E session plus the queue of
 * outgoing messages waiting for a stream to pull them, the ones handed to a
 * stream and kept for a `Last-Event-ID` replay, and the wake-up of the
 * stream that waits for them.
 *
 * @module
 */

import type { Session } from "../session.ts";

/** Delivered messages kept for `Last-Event-ID` replay, per session. */
export const REPLAY_LIMIT = 1024;

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
 * import { Channel } from "./_sse_channel.ts";
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
  /** Live events dropped because the client fell behind. */
  dropped = 0;
  /** Handed to a stream, kept until a `Last-Event-ID` confirms them. */
  sent: Outgoing[] = [];
  #seq = 0;
  /** When a request or a stream last touched the session (`performance.now()`). */
  lastActive: number = performance.now();
  /** The stream that currently delivers, or null. */
  attached: symbol | null = null;
  /** The A2E session ended: streams close once the queue is drained. */
  ended = false;
  #wake: (() => void) | null = null;

  /** @param session the A2E session the channel carries */
  constructor(session: Session) {
    this.session = session;
  }

  /** Queues one message and wakes the waiting stream. */
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

  /** Ends the current {@link Channel.wait}, if any. */
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
