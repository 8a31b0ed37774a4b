/**
 * What an MCP session's SSE streams hold for a client that stops reading.
 * A response body's queue grows with every `enqueue` while the client does
 * not read, so a tool flooding progress to a stalled MCP client grew host
 * memory by gigabytes. Every SSE body the session hands out (its own call
 * answers, and the SDK's streams: the GET stream, POSTs answered as SSE)
 * is counted here in bytes, and the session applies the WebSocket path's
 * rule to the total (`../transports/backlog.ts`): past 8 MiB waiting,
 * notifications are dropped (final answers still go out); past 64 MiB the
 * session is ended and its calls cancelled.
 *
 * @module
 */

import { backlogAction, type BacklogDecision } from "../transports/backlog.ts";

/**
 * The queuing strategy of a counted SSE body: its queue is measured in
 * bytes, and nothing is pulled ahead of the reader.
 */
export const SSE_STRATEGY: QueuingStrategy<Uint8Array> = {
  highWaterMark: 0,
  size: (chunk) => chunk.byteLength,
};

/** A watched body: call `end()` once it is closed, cancelled or failed. */
export interface Watched {
  /** The body will get no more bytes; it counts until its queue is read. */
  end(): void;
}

interface Entry {
  controller: ReadableStreamDefaultController<Uint8Array>;
  ended: boolean;
}

/**
 * The bytes waiting in one MCP session's SSE bodies.
 *
 * @example A body nobody reads counts; once read, it does not
 * ```ts
 * import { SseBacklog } from "./sse_backlog.ts";
 * import assert from "node:assert/strict";
 * const backlog = new SseBacklog();
 * const body = backlog.meter(ReadableStream.from([new Uint8Array(10)]));
 * await Promise.resolve();
 * const reader = body.getReader();
 * assert.equal((await reader.read()).value?.byteLength, 10);
 * assert.equal(backlog.bytes, 0);
 * assert.equal(backlog.decide(true), "send");
 * ```
 */
export class SseBacklog {
  #entries = new Set<Entry>();

  /** Bytes enqueued in the session's SSE bodies and not yet read. */
  get bytes(): number {
    let total = 0;
    for (const entry of this.#entries) {
      // Past `close()` a queue still counts until it is read; a failed or
      // cancelled body holds nothing.
      const size = entry.controller.desiredSize;
      const waiting = size === null ? 0 : -size;
      if (entry.ended && waiting <= 0) this.#entries.delete(entry);
      else total += waiting;
    }
    return total;
  }

  /**
   * How many of the session's SSE bodies are still open (their source has
   * not ended and the client has not gone): a client listening on its GET
   * stream is not idle even when it sends nothing.
   */
  get open(): number {
    let count = 0;
    for (const entry of this.#entries) if (!entry.ended) count++;
    return count;
  }

  /**
   * What to do with the next message, given the bytes waiting now.
   *
   * @param live whether it is a notification (dropped first)
   * @returns `send`, `drop` or `disconnect`
   */
  decide(live: boolean): BacklogDecision {
    return backlogAction(this.bytes, live);
  }

  /**
   * Fails every body still counted, dropping what waits in it: the client
   * was cut off, and its connections must not keep the bytes alive.
   *
   * @param reason why, as the bodies' error
   */
  abort(reason: string): void {
    for (const entry of this.#entries) {
      try {
        entry.controller.error(new Error(reason));
      } catch {
        // Already closed and read.
      }
    }
    this.#entries.clear();
  }

  /**
   * Counts the queue of a body built with {@link SSE_STRATEGY}.
   *
   * @param controller the body's controller
   * @returns the handle to end the watch
   */
  watch(controller: ReadableStreamDefaultController<Uint8Array>): Watched {
    const entry: Entry = { controller, ended: false };
    this.#entries.add(entry);
    return {
      end() {
        entry.ended = true;
      },
    };
  }

  /**
   * Counts a body built elsewhere (the SDK's): it is read as fast as it is
   * written, into a counted queue that the client drains.
   *
   * @param body the SSE body
   * @param onGone called once when the client cancels it, or it fails,
   *   before it was read to its end
   * @returns the counted body to hand out
   */
  meter(
    body: ReadableStream<Uint8Array>,
    onGone?: () => void,
  ): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    let watched: Watched | undefined;
    let settled = false;
    const gone = () => {
      watched?.end();
      if (settled) return;
      settled = true;
      onGone?.();
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        watched = this.watch(controller);
        drain(reader, controller).then(() => {
          settled = true;
          watched?.end();
        }, gone);
      },
      cancel(reason) {
        gone();
        return reader.cancel(reason);
      },
    }, SSE_STRATEGY);
  }
}

// Moves every chunk of `reader` to `controller` as it comes.
async function drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  controller: ReadableStreamDefaultController<Uint8Array>,
): Promise<void> {
  while (true) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (error) {
      try {
        controller.error(error);
      } catch {
        // Cancelled meanwhile.
      }
      throw error;
    }
    try {
      if (chunk.done) return controller.close();
      controller.enqueue(chunk.value);
    } catch {
      return; // The client cancelled: `cancel` saw it.
    }
  }
}
