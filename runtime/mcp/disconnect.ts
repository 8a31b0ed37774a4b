/**
 * A Streamable HTTP client that vanishes mid-call: the SSE response stream
 * that was to carry the answers of its JSON-RPC requests is cancelled (Deno
 * cancels a response body when the client has gone). Nothing else will ever
 * read the answers, so the calls are cancelled at once, as a
 * `notifications/cancelled` from the client would, rather than running on
 * until the session expires.
 *
 * `request.signal` is not used: on Deno it also aborts after every
 * successful response (the legacy behaviour, which warns), and watching the
 * response stream sees the same disconnects.
 *
 * @module
 */

import type {
  JSONRPCMessage,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { SseBacklog } from "./sse_backlog.ts";

/**
 * The ids of the JSON-RPC requests (not notifications or responses) in a
 * parsed POST body.
 *
 * @param body the parsed body: one message or a batch
 * @returns the request ids, in order
 * @example
 * ```ts
 * import { requestIds } from "./disconnect.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(requestIds([
 *   { jsonrpc: "2.0", id: 3, method: "tools/call" },
 *   { jsonrpc: "2.0", method: "notifications/initialized" },
 * ]), [3]);
 * ```
 */
export function requestIds(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== "object" || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method !== "string") continue;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
  }
  return ids;
}

/**
 * The `notifications/cancelled` a client would send for each request.
 *
 * @param ids the requests to cancel
 * @returns one notification per id
 * @example
 * ```ts
 * import { cancellations } from "./disconnect.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(cancellations([7]), [{ jsonrpc: "2.0",
 *   method: "notifications/cancelled",
 *   params: { requestId: 7, reason: "The client disconnected" } }]);
 * ```
 */
export function cancellations(ids: readonly RequestId[]): JSONRPCMessage[] {
  return ids.map((requestId) => ({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId, reason: "The client disconnected" },
  }));
}

/**
 * Watches an SSE answer for its client going away: when its stream is
 * cancelled, or fails, before it was read to its end, `onGone` is called
 * (once). Its bytes waiting for the client count in the session's
 * {@link SseBacklog}. Any other answer (JSON, an error, 202) is returned as
 * it is.
 *
 * @param response the SDK's answer to a POST that carried requests
 * @param onGone cancels the requests
 * @param backlog the session's SSE backlog @default a backlog of its own
 * @returns the response to hand out
 * @example A cancelled stream cancels the calls
 * ```ts
 * import { watchAnswer } from "./disconnect.ts";
 * import assert from "node:assert/strict";
 * let gone = 0;
 * const res = watchAnswer(new Response(new ReadableStream(),
 *   { headers: { "content-type": "text/event-stream" } }), () => gone++);
 * await res.body!.cancel();
 * assert.equal(gone, 1);
 * ```
 */
export function watchAnswer(
  response: Response,
  onGone: () => void,
  backlog: SseBacklog = new SseBacklog(),
): Response {
  const body = response.body;
  const streaming = response.headers.get("content-type")?.startsWith(
    "text/event-stream",
  );
  if (body === null || !streaming) return response;
  return new Response(backlog.meter(body, onGone), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
