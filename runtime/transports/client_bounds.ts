/**
 * What a client may cost the host, bounded for every transport (and the
 * MCP endpoint and the console, which face clients too): output waiting for
 * a client that stops reading must not grow host memory without bound, and
 * a huge request body costs no more memory than the limit.
 *
 * @module
 */

// Output waiting for a slow client.

import type { OutgoingMessage } from "../capability.ts";

/**
 * Past this much waiting output, live events are dropped. They are not lost
 * to the caller: every call also collects its events into its result
 * (bounded), and final answers are always sent.
 */
export const EVENT_BACKLOG_BYTES: number = 8 * 1024 * 1024;

/** Past this much waiting output the client is disconnected. */
export const MAX_BACKLOG_BYTES: number = 64 * 1024 * 1024;

/** What to do with one outgoing message. */
export type BacklogDecision = "send" | "drop" | "disconnect";

/**
 * Decides what to do with a message given how much output already waits.
 *
 * @param backlogBytes output queued for the client and not yet taken
 * @param message the message to send
 * @returns `send`, `drop` (a live event for a slow client), or `disconnect`
 * @example A slow client loses live events, never answers
 * ```ts
 * import { backlogDecision, EVENT_BACKLOG_BYTES } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const event = { type: "tool/event", id: "e", version: "1.0", ts: 0 };
 * const answer = { type: "tool/call/resp", id: "r", version: "1.0", ts: 0 };
 * assert.equal(backlogDecision(0, event), "send");
 * assert.equal(backlogDecision(EVENT_BACKLOG_BYTES + 1, event), "drop");
 * assert.equal(backlogDecision(EVENT_BACKLOG_BYTES + 1, answer), "send");
 * ```
 */
export function backlogDecision(
  backlogBytes: number,
  message: OutgoingMessage,
): BacklogDecision {
  return backlogAction(backlogBytes, message.type.endsWith("/event"));
}

/**
 * The same rule for any transport's messages (MCP's notifications are its
 * live events): past {@link EVENT_BACKLOG_BYTES} live messages are dropped,
 * past {@link MAX_BACKLOG_BYTES} the client is disconnected.
 *
 * @param backlogBytes output queued for the client and not yet taken
 * @param live whether the message is a live event (may be dropped)
 * @returns `send`, `drop` or `disconnect`
 * @example An answer is never dropped
 * ```ts
 * import { backlogAction, MAX_BACKLOG_BYTES } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES, false), "send");
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES, true), "drop");
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES + 1, false), "disconnect");
 * ```
 */
export function backlogAction(
  backlogBytes: number,
  live: boolean,
): BacklogDecision {
  if (backlogBytes > MAX_BACKLOG_BYTES) return "disconnect";
  if (backlogBytes > EVENT_BACKLOG_BYTES && live) return "drop";
  return "send";
}

// Request bodies read up to a cap.

/** A body read up to a cap. */
export interface CappedBody {
  /** The text: all of it, or (over the cap) the start, to salvage an id. */
  text: string;
  /** How many bytes the body had. */
  bytes: number;
  /** Whether it was over the cap. */
  over: boolean;
}

/** How much of an oversize body is kept to find the request's id in. */
export const SALVAGE_BYTES = 4096;

/**
 * Reads a body, keeping at most `max` bytes; on overflow the start is kept
 * to salvage the request's id. By default it reads to the end even past
 * the limit: cutting the upload short would make many clients report a
 * reset instead of reading the answer. With `stopAtCap` it stops reading
 * there (`bytes` then counts what was read): for a form nobody needs an
 * answer to beyond "too large", where reading on only costs the host.
 *
 * @param body the request's body, or null
 * @param max the cap in bytes
 * @param options `stopAtCap`: cancel the body once it is over the cap
 * @returns the text, its size, and whether it was over the cap
 * @example Under and over the cap
 * ```ts
 * import { readCapped } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const body = (s: string) => new Response(s).body;
 * assert.deepEqual(await readCapped(body("hello"), 10), { text: "hello", bytes: 5, over: false });
 * assert.equal((await readCapped(body("hello"), 4)).over, true);
 * ```
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  options: { stopAtCap?: boolean } = {},
): Promise<CappedBody> {
  if (!body) return { text: "", bytes: 0, over: false };
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let over = false;
  // Breaking out of the loop cancels the body.
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    // Past the limit, keep reading but discard (or stop).
    if (bytes > max) {
      over = true;
      if (options.stopAtCap) break;
    } else chunks.push(chunk);
  }
  if (over) {
    const first = chunks[0]?.slice(0, SALVAGE_BYTES) ?? new Uint8Array();
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
