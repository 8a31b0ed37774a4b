/**
 * The types every part of the client shares: a {@link Call} in flight, the
 * options of a request, raw wire messages and how the socket closed.
 *
 * @module
 */

import type { CallEvent } from "../protocol/tool.ts";

/**
 * One request in flight: a promise (usable wherever one is) of the final
 * answer. Await it for the answer; iterate
 * {@link Call.events} with `for await` for the `*\/event` messages the host
 * streams meanwhile. Events are buffered from the start, so iterating late
 * (or twice) still yields every event; iteration ends when the call settles,
 * and throws the call's error if it failed.
 *
 * @typeParam T the final answer
 * @example Stream events, then read the result
 * ```ts
 * import type { Call } from "./types.ts";
 * import type { ToolOutcome } from "../protocol/tool.ts";
 *
 * async function finish(call: Call<ToolOutcome>): Promise<ToolOutcome> {
 *   const progress: unknown[] = [];
 *   for await (const event of call.events) {
 *     if (event.kind === "progress") progress.push(event.data.pct);
 *   }
 *   return await call;
 * }
 * ```
 */
export interface Call<T> extends Promise<T> {
  /** The request's message `id`; the host's answers carry it as `req_id`. */
  readonly id: string;
  /**
   * The call's events in `seq` order as they arrive, replayed from the
   * start; of a call that sends more than 10,000 events or 16 MiB of them,
   * a late or slow iterator gets the newest that many.
   */
  readonly events: AsyncIterable<CallEvent>;
}

/**
 * Options every request takes.
 *
 * @example Give up on a request after a deadline, or on cancel
 * ```ts
 * import { type Client, TimeoutError } from "./mod.ts";
 * import type { Tool } from "../protocol/tool.ts";
 *
 * async function toolsOrNothing(
 *   client: Client,
 *   signal: AbortSignal,
 * ): Promise<Tool[]> {
 *   try {
 *     // Rejects with a TimeoutError after 2 s, or with `signal.reason`.
 *     return await client.tools.list({ timeout: 2_000, signal });
 *   } catch (error) {
 *     if (error instanceof TimeoutError) return [];
 *     throw error;
 *   }
 * }
 * ```
 */
export interface RequestOptions {
  /**
   * How long to wait for the answer, in milliseconds, before failing with a
   * `TimeoutError`. The host is not told; a late answer is dropped.
   * @default the `timeout` given to `connect()` (10 000 ms)
   */
  timeout?: number;
  /** Aborting it fails the call at once with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Options of requests that stream events.
 *
 * @example Show a tool's progress as it arrives
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { ToolOutcome } from "../protocol/tool.ts";
 *
 * async function reindex(
 *   client: Client,
 *   show: (pct: number) => void,
 * ): Promise<ToolOutcome> {
 *   return await client.tools.call("reindex", {}, {
 *     onEvent: (event) => {
 *       if (event.kind === "progress") show(Number(event.data.pct));
 *     },
 *   });
 * }
 * ```
 */
export interface StreamingRequestOptions extends RequestOptions {
  /**
   * Called synchronously with each event as it arrives. If it throws, the
   * call fails with that error.
   */
  onEvent?: (event: CallEvent) => void;
}

/**
 * One A2E message as it is on the wire: the envelope plus the type's own
 * snake_case fields (A2E-WIRE.md). Incoming messages are not validated
 * beyond being JSON objects, so read their fields defensively.
 *
 * @example Send a raw ping and read the pong
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { WireMessage } from "./types.ts";
 *
 * async function uptime(client: Client): Promise<number> {
 *   const pong: WireMessage = await client.request("ping");
 *   return typeof pong.uptime_seconds === "number" ? pong.uptime_seconds : 0;
 * }
 * ```
 */
export interface WireMessage {
  /** The message type, e.g. `"invoke/event"`. */
  type: string;
  /** The message's own id (32 hex chars). */
  id: string;
  /** `"1.0"`. */
  version?: string;
  /** Unix time in seconds, as a float. */
  ts?: number;
  /** The type's own fields, snake_case. */
  [field: string]: unknown;
}

/**
 * Called with each message that answers no pending request, e.g. an
 * `invoke/event` of kind `tools.changed`, or an `error` whose `req_id` could
 * not be read.
 *
 * @example Hear when the host's tools change
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { PushHandler } from "./types.ts";
 *
 * function watchTools(client: Client, refresh: () => void): () => void {
 *   const onPush: PushHandler = (message) => {
 *     if (message.type !== "invoke/event") return;
 *     if (message.kind === "tools.changed") refresh();
 *   };
 *   return client.onPush(onPush); // call it to unsubscribe
 * }
 * ```
 */
export type PushHandler = (message: WireMessage) => void;

/**
 * How the WebSocket closed.
 *
 * @example Tell why the host went away
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { CloseInfo } from "./types.ts";
 *
 * async function whyClosed(client: Client): Promise<string> {
 *   const { code, reason }: CloseInfo = await client.closed;
 *   if (code === 1000) return "closed cleanly";
 *   return `closed (${code}): ${reason || "no reason given"}`;
 * }
 * ```
 */
export interface CloseInfo {
  /** The WebSocket close code (1000 for a clean close, 1006 when dropped). */
  code: number;
  /** The WebSocket close reason, often `""`. */
  reason: string;
}
