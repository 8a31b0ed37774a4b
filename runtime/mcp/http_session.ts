/**
 * One MCP session's transport over Streamable HTTP, as its SDK `Server`
 * sees it: the SDK's session transport (`WebStandardStreamableHTTPServerTransport`,
 * SSE answers: the GET stream, DELETE, initialization, progress), plus a
 * cheaper way for the common POST: a single request that asks for no
 * progress is answered as one JSON body unless it must stream (see
 * {@link createCallAnswer}). When the SDK's transport would take it as it
 * is, the server gets it straight away (see `json_post.ts`); otherwise it
 * goes through a stateless SDK transport of its own in JSON response mode
 * (the public `enableJsonResponse` option), which refuses what it refuses.
 *
 * Every message the server sends goes to the transport its request came
 * through; messages about no request go on the session's GET stream. What
 * the session's SSE streams hold for a client that does not read is
 * bounded in bytes (`sse_backlog.ts`): notifications are dropped first,
 * then the session ends and its calls are cancelled, with the reason.
 *
 * @module
 */

import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import {
  answerId,
  type CallAnswer,
  createCallAnswer,
  type JsonSender,
} from "./call_answer.ts";
import { Deadlines } from "../deadline.ts";
import { lazyRequestInfo, plainJsonRequest } from "./json_post.ts";
import { cancellations, requestIds, watchAnswer } from "./disconnect.ts";
import { SseBacklog } from "./sse_backlog.ts";

/** Options of {@link McpHttpSession}. */
export interface McpHttpSessionOptions {
  /** Called with the session id once the session is initialized. */
  onsessioninitialized: (id: string) => void;
  /** The largest request body, in bytes. */
  maxRequestBodySize: number;
  /**
   * How long a call's answer may take and still come as one JSON body; a
   * client that vanishes mid-call is noticed at most this late.
   * @default 1000
   */
  jsonGraceMs?: number;
  /**
   * Called once when the client stopped reading for good (its SSE streams
   * hold more than the backlog limit): the session then closes. End the
   * host session with this reason first, so that its calls say why.
   */
  onStalled?: (reason: string) => void;
  /** Receives diagnostic lines (the first dropped notification). */
  log?: (line: string) => void;
}

/**
 * A session's transport: connect its server to it, and hand it the
 * session's HTTP requests.
 *
 * @example Initialize a session, then call with a JSON answer
 * ```ts
 * import { McpHttpSession } from "./http_session.ts";
 * import { Server } from "@modelcontextprotocol/sdk/server/index.js";
 * import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
 * import assert from "node:assert/strict";
 * const session = new McpHttpSession({
 *   onsessioninitialized() {}, maxRequestBodySize: 1 << 20,
 * });
 * const server = new Server({ name: "s", version: "1" }, { capabilities: {} });
 * await server.connect(session);
 * const headers: Record<string, string> = {
 *   "content-type": "application/json",
 *   accept: "application/json, text/event-stream",
 * };
 * const init = await session.post(new Request("http://x/mcp", { method: "POST", headers }), {
 *   jsonrpc: "2.0", id: 1, method: "initialize",
 *   params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {},
 *     clientInfo: { name: "c", version: "1" } },
 * });
 * await init.body?.cancel();
 * headers["mcp-session-id"] = session.sessionId!;
 * const ping = await session.post(new Request("http://x/mcp", { method: "POST", headers }),
 *   { jsonrpc: "2.0", id: 2, method: "ping" });
 * assert.equal(ping.headers.get("content-type"), "application/json");
 * assert.deepEqual(await ping.json(), { jsonrpc: "2.0", id: 2, result: {} });
 * await server.close();
 * ```
 */
export class McpHttpSession implements Transport {
  /** Set by the server on connect. */
  onclose?: () => void;
  /** Set by the server on connect. */
  onerror?: (error: Error) => void;
  /** Set by the server on connect. */
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  readonly #sse: WebStandardStreamableHTTPServerTransport;
  readonly #calls = new Map<RequestId, CallAnswer>();
  readonly #maxBytes: number;
  readonly #graceMs: number;
  // Kept alive like the calls it serves: it is closed with the session.
  readonly #deadlines = new Deadlines({ unref: false });
  readonly #backlog = new SseBacklog();
  readonly #onStalled: ((reason: string) => void) | undefined;
  readonly #log: ((line: string) => void) | undefined;
  #dropped = 0;
  #closeReason: string | undefined;

  /**
   * Creates the transport of one session.
   *
   * @param options the initialization hook, body limit and JSON grace time
   */
  constructor(options: McpHttpSessionOptions) {
    this.#maxBytes = options.maxRequestBodySize;
    this.#graceMs = options.jsonGraceMs ?? 1000;
    this.#onStalled = options.onStalled;
    this.#log = options.log;
    this.#sse = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      maxRequestBodySize: options.maxRequestBodySize,
      onsessioninitialized: options.onsessioninitialized,
    });
    this.#sse.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) =>
      this.onmessage?.(message, extra);
    this.#sse.onerror = (error: Error) => this.onerror?.(error);
    this.#sse.onclose = () => {
      this.#deadlines.close();
      for (const call of this.#calls.values()) call.close(this.#closeReason);
      this.#calls.clear();
      this.onclose?.();
    };
  }

  /** The session id, once initialized. */
  get sessionId(): string | undefined {
    return this.#sse.sessionId;
  }

  /** Starts the transport (the server does this on connect). */
  start(): Promise<void> {
    return this.#sse.start();
  }

  /** Bytes waiting in the session's SSE streams for the client to read. */
  get backlogBytes(): number {
    return this.#backlog.bytes;
  }

  /** Whether an SSE stream of the session is open (its GET stream, say). */
  get streaming(): boolean {
    return this.#backlog.open > 0;
  }

  /** Closes the session: its streams end, calls waiting for JSON get an error. */
  close(): Promise<void> {
    return this.#sse.close();
  }

  /**
   * Sends a message of the server to the request it belongs to.
   *
   * @param message the message
   * @param options the request it relates to
   */
  send(
    message: JSONRPCMessage,
    options?: TransportSendOptions,
  ): Promise<void> {
    if (this.#closeReason !== undefined) return Promise.resolve();
    // Notifications are the live events: dropped first.
    const decision = this.#backlog.decide(
      "method" in message && !("id" in message),
    );
    if (decision !== "send") {
      this.#overflow(decision);
      return Promise.resolve();
    }
    const answers = answerId(message);
    const id = answers ?? options?.relatedRequestId;
    const call = id === undefined ? undefined : this.#calls.get(id);
    if (call === undefined) return this.#sse.send(message, options);
    if (answers !== undefined) this.#calls.delete(answers);
    return call.send(message);
  }

  /**
   * Handles a GET or DELETE of the session.
   *
   * @param request the HTTP request
   * @returns the SDK's response
   */
  async handleRequest(request: Request): Promise<Response> {
    const response = await this.#sse.handleRequest(request);
    // The GET stream counts like the others.
    return request.method === "GET"
      ? watchAnswer(response, () => {}, this.#backlog)
      : response;
  }

  /**
   * Handles a POST whose body was read and parsed already. A client that
   * goes away before its answers were sent has its calls cancelled.
   *
   * @param request the HTTP request (its body is not read again)
   * @param parsedBody the parsed body
   * @returns JSON, SSE, 202 or an error
   */
  async post(request: Request, parsedBody: unknown): Promise<Response> {
    const id = quickRequestId(parsedBody);
    if (id !== undefined && !this.#calls.has(id)) {
      return await this.#quick(request, parsedBody, id);
    }
    const ids = requestIds(parsedBody);
    const response = await this.#sse.handleRequest(request, { parsedBody });
    if (ids.length === 0) return response;
    return watchAnswer(response, () => this.#cancel(ids), this.#backlog);
  }

  // The client fell behind: drop a notification, or end the session.
  #overflow(decision: "drop" | "disconnect"): void {
    if (decision === "drop") {
      if (this.#dropped++ === 0) {
        this.#log?.(
          "An MCP client is not keeping up: dropping notifications (calls still collect their events in their results)",
        );
      }
      return;
    }
    const bytes = this.#backlog.bytes;
    this.#closeReason =
      `The MCP client stopped reading: ${bytes} bytes were waiting on its SSE streams`;
    this.#log?.(
      `Ending an MCP session whose client stopped reading (${bytes} bytes waiting)`,
    );
    this.#onStalled?.(this.#closeReason);
    this.#backlog.abort(this.#closeReason);
    this.close().catch(() => {});
  }

  async #quick(
    request: Request,
    parsedBody: unknown,
    id: RequestId,
  ): Promise<Response> {
    const sessionId = this.#sse.sessionId;
    if (sessionId === undefined) {
      // Not initialized: the session transport says so its own way.
      return await this.#sse.handleRequest(request, { parsedBody });
    }
    const message = plainJsonRequest(request, parsedBody);
    if (message === undefined) {
      return await this.#viaSdk(request, parsedBody, id, sessionId);
    }
    // Its answer, JSON or SSE, is the call's response: no promise to race.
    const call = this.#track(id, sessionId, undefined);
    this.onmessage?.(message, { requestInfo: lazyRequestInfo(request) });
    return await call.response;
  }

  // A POST the SDK must look at: a stateless SDK transport of its own in
  // JSON response mode, which refuses what it would refuse.
  async #viaSdk(
    request: Request,
    parsedBody: unknown,
    id: RequestId,
    sessionId: string,
  ): Promise<Response> {
    const json = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: this.#maxBytes,
    });
    let call: CallAnswer | undefined;
    json.onerror = (error: Error) => this.onerror?.(error);
    // Called only once the SDK has accepted the request.
    json.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      call = this.#track(id, sessionId, json);
      this.onmessage?.(message, extra);
    };
    const answered = json.handleRequest(request, { parsedBody });
    return await (call ? Promise.race([answered, call.response]) : answered);
  }

  // The answer of one request on its way, until it is sent or cancelled.
  #track(
    id: RequestId,
    sessionId: string,
    json: JsonSender | undefined,
  ): CallAnswer {
    const call = createCallAnswer(json, {
      id,
      sessionId,
      graceMs: this.#graceMs,
      deadlines: this.#deadlines,
      backlog: this.#backlog,
      onCancel: () => {
        this.#calls.delete(id);
        this.#cancel([id]);
      },
    });
    this.#calls.set(id, call);
    return call;
  }

  #cancel(ids: readonly RequestId[]): void {
    for (const message of cancellations(ids)) this.onmessage?.(message);
  }
}

// The id of a body that is one request (not initialize) asking for no
// progress: those may be answered as JSON.
function quickRequestId(body: unknown): RequestId | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return undefined;
  }
  const { id, method, params } = body as {
    id?: unknown;
    method?: unknown;
    params?: { _meta?: { progressToken?: unknown } };
  };
  if (typeof method !== "string" || method === "initialize") return undefined;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const token = typeof params === "object" && params !== null
    ? params._meta?.progressToken
    : undefined;
  return token === undefined ? id : undefined;
}
