/**
 * A Streamable HTTP client that vanishes mid-call: the HTTP request that
 * carried its JSON-RPC requests is aborted (or the SSE response stream it
 * was reading is cancelled). Nothing else will ever read the answers, so
 * the calls are cancelled at once, as a `notifications/cancelled` from the
 * client would, rather than running on until the session expires.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

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
export function requestIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== "object" || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method !== "string") continue;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
  }
  return ids;
}

/** Watches one HTTP request for its client going away. */
export interface DisconnectWatch {
  /**
   * Takes the transport's answer: a whole (JSON) answer ends the watch, an
   * SSE stream is watched until read to its end.
   *
   * @returns the response to hand out
   */
  answer(response: Response): Response;
}

/**
 * Cancels `ids` on `transport`'s server when the client goes away before
 * their answers were read: when `request.signal` aborts while the answer is
 * awaited or its SSE stream is still open, or when that stream is
 * cancelled. Start it before handing the request to the transport.
 *
 * Deno also aborts `request.signal` once a response has been sent; by then
 * the watch has ended, and a cancellation for a request already answered is
 * a no-op in the SDK anyway.
 *
 * @param request the HTTP request that carried the ids
 * @param ids the JSON-RPC request ids it carried
 * @param transport the session's transport (its `onmessage` is the server's)
 * @returns the watch
 * @example
 * ```ts
 * import { watchDisconnect } from "./disconnect.ts";
 * import assert from "node:assert/strict";
 * const seen: unknown[] = [];
 * const transport = {
 *   onmessage: (m: unknown) => seen.push(m),
 *   start: () => Promise.resolve(), send: () => Promise.resolve(),
 *   close: () => Promise.resolve(),
 * };
 * const controller = new AbortController();
 * const request = new Request("http://x/mcp", { signal: controller.signal });
 * const watch = watchDisconnect(request, [7], transport);
 * watch.answer(new Response(new ReadableStream(),
 *   { headers: { "content-type": "text/event-stream" } }));
 * controller.abort();
 * assert.deepEqual(seen, [{ jsonrpc: "2.0", method: "notifications/cancelled",
 *   params: { requestId: 7, reason: "The client disconnected" } }]);
 * ```
 */
export function watchDisconnect(
  request: Request,
  ids: readonly (string | number)[],
  transport: Transport,
): DisconnectWatch {
  let settled = false;
  const end = () => {
    settled = true;
    request.signal.removeEventListener("abort", cancel);
  };
  const cancel = () => {
    if (settled) return;
    end();
    for (const requestId of ids) {
      transport.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId, reason: "The client disconnected" },
      });
    }
  };
  if (request.signal.aborted) cancel();
  else request.signal.addEventListener("abort", cancel);
  return {
    answer(response) {
      const body = response.body;
      const streaming = response.headers.get("content-type")?.startsWith(
        "text/event-stream",
      );
      if (settled || body === null || !streaming) {
        end();
        return response;
      }
      return new Response(watchBody(body, end, cancel), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    },
  };
}

function watchBody(
  body: ReadableStream<Uint8Array>,
  done: () => void,
  cancel: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        cancel();
        controller.error(error);
      }
    },
    cancel(reason) {
      cancel();
      return reader.cancel(reason);
    },
  });
}
