/**
 * One HTTP+SSE transport session: its A2E session plus the queue of
 * outgoing messages waiting for a stream to pull them, the ones handed to a
 * stream and kept for a `Last-Event-ID` replay, and the wake-up of the
 * stream that waits for them.
 *
 * @module
 */

import type { Session } from "../session.ts";
import { encodeError } from "../../protocol/responses.ts";

/** Delivered messages kept for `Last-Event-ID` replay, per session. */
export const REPLAY_LIMIT = 1024;

/**
 * Characters of delivered messages kept for `Last-Event-ID` replay, per
 * session: a replay only needs what a dropped connection swallowed in
 * flight, and a count alone let 1,024 large messages pin hundreds of MB.
 */
export const REPLAY_CHARS: number = 8 * 1024 * 1024;

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
  /** Characters held in `sent`. */
  sentChars = 0;
  /** The highest id dropped from `sent` to keep it bounded (0: none). */
  forgotten = 0;
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
    for (const m of batch) {
      this.sent.push(m);
      this.sentChars += m.text.length;
    }
    // Bounded by count and by characters: the oldest go first.
    let drop = 0;
    while (
      drop < this.sent.length &&
      (this.sent.length - drop > REPLAY_LIMIT || this.sentChars > REPLAY_CHARS)
    ) {
      const old = this.sent[drop++]!;
      this.sentChars -= old.text.length;
      this.forgotten = old.seq;
    }
    if (drop > 0) this.sent.splice(0, drop);
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
    this.sent = [];
    this.sentChars = 0;
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
