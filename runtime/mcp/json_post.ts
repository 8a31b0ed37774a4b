/**
 * The common MCP POST, answered without building an SDK transport for it:
 * one JSON-RPC request, on an initialized session, that the SDK's
 * `WebStandardStreamableHTTPServerTransport` would accept as it is (its
 * `Accept`, `Content-Type` and `MCP-Protocol-Version` checks, and the
 * SDK's own `JSONRPCRequestSchema`, strict), answered by the SDK's `Server`
 * as one JSON body with the headers the SDK's JSON response mode sends.
 *
 * Anything else (a batch, a notification, a header or shape the SDK would
 * refuse) goes to the SDK's transport, which answers it its own way: this
 * module only decides when that detour changes nothing. Building the
 * SDK's transport per POST, copying every header into an object and
 * parsing the message with zod three times cost about a fifth of the
 * host's CPU per MCP call.
 *
 * @module
 */

import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestInfo,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject } from "../../protocol/json.ts";

const RELATED_TASK = "io.modelcontextprotocol/related-task";
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/**
 * Tells whether a POST holds one request the SDK would take as it is, with
 * no progress asked for, so that it may be answered as plain JSON.
 *
 * @param request the HTTP request (its headers are read, not its body)
 * @param body its parsed body
 * @returns the request, or undefined when the SDK's transport must see it
 * @example
 * ```ts
 * import { plainJsonRequest } from "./json_post.ts";
 * import assert from "node:assert/strict";
 * const post = new Request("http://x/mcp", {
 *   method: "POST",
 *   headers: {
 *     accept: "application/json, text/event-stream",
 *     "content-type": "application/json",
 *   },
 * });
 * const call = { jsonrpc: "2.0", id: 7, method: "tools/list" };
 * assert.equal(plainJsonRequest(post, call), call);
 * assert.equal(plainJsonRequest(post, [call]), undefined);
 * assert.equal(plainJsonRequest(post, { ...call, extra: 1 }), undefined);
 * ```
 */
export function plainJsonRequest(
  request: Request,
  body: unknown,
): JSONRPCRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== "2.0" || typeof method !== "string") return undefined;
  if (method === "initialize") return undefined;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return undefined;
  if (params !== undefined) {
    if (!isPlainObject(params)) return undefined;
    const meta = params._meta;
    if (meta !== undefined) {
      if (!isPlainObject(meta)) return undefined;
      // Progress streams (SSE); a task link is for the SDK to check.
      if (meta.progressToken !== undefined) return undefined;
      if (meta[RELATED_TASK] !== undefined) return undefined;
    }
  }
  const headers = request.headers;
  const accept = headers.get("accept");
  if (
    !accept?.includes("application/json") ||
    !accept.includes("text/event-stream")
  ) return undefined;
  if (!isJsonContentType(headers.get("content-type"))) return undefined;
  const version = headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return undefined;
  }
  return body as unknown as JSONRPCRequest;
}

/**
 * The JSON answer to a request, as the SDK's JSON response mode sends it.
 *
 * @param message the server's answer
 * @param sessionId the MCP session's id
 * @returns a 200 `application/json` response with the `mcp-session-id` header
 * @example
 * ```ts
 * import { jsonAnswer } from "./json_post.ts";
 * import assert from "node:assert/strict";
 * const response = jsonAnswer({ jsonrpc: "2.0", id: 1, result: {} }, "s1");
 * assert.equal(response.headers.get("mcp-session-id"), "s1");
 * assert.deepEqual(await response.json(), { jsonrpc: "2.0", id: 1, result: {} });
 * ```
 */
export function jsonAnswer(
  message: JSONRPCMessage,
  sessionId: string,
): Response {
  return new Response(JSON.stringify(message), {
    status: 200,
    headers: {
      "content-type": "application/json",
      "mcp-session-id": sessionId,
    },
  });
}

/**
 * What the SDK tells request handlers of the HTTP request, made only when a
 * handler reads it.
 *
 * @param request the HTTP request
 * @returns its headers (as one object) and URL, on first read
 * @example
 * ```ts
 * import { lazyRequestInfo } from "./json_post.ts";
 * import assert from "node:assert/strict";
 * const info = lazyRequestInfo(
 *   new Request("http://x/mcp", { headers: { "x-a": "1" } }),
 * );
 * assert.equal(info.headers["x-a"], "1");
 * assert.equal(info.url?.pathname, "/mcp");
 * ```
 */
export function lazyRequestInfo(request: Request): RequestInfo {
  return new LazyRequestInfo(request);
}

// A class, not an object literal with getters: those cost an accessor pair
// and two closures per call, about 1.5 us.
class LazyRequestInfo implements RequestInfo {
  #request: Request;
  #headers: Record<string, string> | undefined;
  #url: URL | undefined;

  constructor(request: Request) {
    this.#request = request;
  }

  get headers(): Record<string, string> {
    return this.#headers ??= Object.fromEntries(this.#request.headers);
  }

  get url(): URL {
    return this.#url ??= new URL(this.#request.url);
  }
}
