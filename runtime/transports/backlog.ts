/**
 * What a transport does when a client stops reading: output waiting for it
 * must not grow host memory without bound.
 *
 * @module
 */

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
 * import { backlogDecision, EVENT_BACKLOG_BYTES } from "./backlog.ts";
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
 * import { backlogAction, MAX_BACKLOG_BYTES } from "./backlog.ts";
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
