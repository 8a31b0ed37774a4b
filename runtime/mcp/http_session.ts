/**
 * One MCP session's transport over Streamable HTTP, as its SDK `Server`
 * sees it: the SDK's session transport (`WebStandardStreamableHTTPServerTransport`,
 * SSE answers: the GET stream, DELETE, initialization, progress), plus a
 * cheaper way for the common POST: a single request that asks for no
 * progress is answered as one JSON body unless it must stream (see
 * {@link CallAnswer}), when the SDK's transport would take it as it is:
 * the server gets it straight away (see "The common POST" below). Any
 * other POST goes to the SDK's transport, which answers it as SSE or
 * refuses it, its own way.
 *
 * Every message the server sends goes to the transport its request came
 * through; messages about no request go on the session's GET stream. What
 * the session's SSE streams hold for a client that does not read is
 * bounded in bytes (see "The SSE backlog" below): notifications are dropped first,
 * then the session ends and its calls are cancelled, with the reason.
 *
 * ## One call's answer
 *
 * How one JSON-RPC request posted to `/mcp` without a `progressToken` is
 * answered: as one JSON body when its answer is the only message there is
 * to send and comes within `graceMs` (the cheap case, and the common one:
 * no SSE stream to set up or to parse); otherwise as an SSE stream, as the
 * SDK answers by default, that carries the request's notifications (log
 * messages) before its answer. A client that vanishes mid-call is seen when
 * that stream is cancelled, so at most `graceMs` late.
 *
 * The JSON body is built as the SDK's JSON response mode (its public
 * `enableJsonResponse` option) builds it (see "The common POST"); the SSE
 * events are framed as the SDK frames them.
 *
 * ## The common POST
 *
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
 * ## A client that disconnects
 *
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
 * ## The SSE backlog
 *
 * What an MCP session's SSE streams hold for a client that stops reading.
 * A response body's queue grows with every `enqueue` while the client does
 * not read, so a tool flooding progress to a stalled MCP client grew host
 * memory by gigabytes. Every SSE body the session hands out (its own call
 * answers, and the SDK's streams: the GET stream, POSTs answered as SSE)
 * is counted here in bytes, and the session applies the WebSocket path's
 * rule to the total (`../transports/client_bounds.ts`): past 8 MiB waiting,
 * notifications are dropped (final answers still go out); past 64 MiB the
 * session is ended and its calls cancelled.
 *
 * @module
 */

import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  RELATED_TASK_META_KEY,
  type RequestId,
  type RequestInfo,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { Deadlines, type Expiring } from "../deadline.ts";
import {
  armSseKeepAlive,
  DEFAULT_SSE_KEEP_ALIVE_MS,
} from "@modelcontextprotocol/sdk/server/sseKeepAlive.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { isPlainObject } from "../../protocol/json.ts";
import {
  type BacklogDecision,
  slowClientRule,
  unreadOutput,
} from "../transports/client_bounds.ts";

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
  // Requests posted alone through the SDK's transport, not yet answered:
  // the SSE stream of one of them is its own, to end when it is cancelled.
  readonly #alone = new Set<RequestId>();
  readonly #options: McpHttpSessionOptions;
  readonly #graceMs: number;
  // Kept alive like the calls it serves: it is closed with the session.
  readonly #deadlines = new Deadlines({ unref: false });
  readonly #backlog = new SseBacklog();
  // Counted with every connection's unread output until the session closes.
  readonly #unwatch = unreadOutput.watch(() => this.#backlog.bytes);
  // Notifications are the live events: dropped first. Past its share of
  // what all clients may leave unread, the session ends as one that
  // stopped reading.
  readonly #slowClient: (
    waiting: number,
    message: JSONRPCMessage,
  ) => BacklogDecision = slowClientRule<JSONRPCMessage>({
    client: "An MCP client",
    live: (message) => "method" in message && !("id" in message),
    dropping:
      "notifications (calls still collect their events in their results)",
    stopping: "Ending an MCP session whose client stopped reading",
    overShare: (waiting) => unreadOutput.overShare(waiting),
    log: (line) => this.#options.log?.(line),
  });
  #closeReason: string | undefined;

  /**
   * Creates the transport of one session.
   *
   * @param options the initialization hook, body limit and JSON grace time
   */
  constructor(options: McpHttpSessionOptions) {
    this.#options = options;
    this.#graceMs = options.jsonGraceMs ?? 1000;
    this.#sse = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      maxRequestBodySize: options.maxRequestBodySize,
      onsessioninitialized: options.onsessioninitialized,
    });
    this.#sse.onmessage = (
      message: JSONRPCMessage,
      extra?: MessageExtraInfo,
    ) => {
      this.onmessage?.(message, extra);
      if ("method" in message && message.method === "notifications/cancelled") {
        this.#cancelled(message.params?.requestId);
      }
    };
    this.#sse.onerror = (error: Error) => this.onerror?.(error);
    this.#sse.onclose = () => {
      this.#unwatch();
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
    const bytes = this.#backlog.bytes;
    switch (this.#slowClient(bytes, message)) {
      case "drop":
        return Promise.resolve();
      case "disconnect":
        this.#stalled(bytes);
        return Promise.resolve();
    }
    const answers = answerId(message);
    const id = answers ?? options?.relatedRequestId;
    const call = id === undefined ? undefined : this.#calls.get(id);
    if (call === undefined) {
      if (answers !== undefined) this.#alone.delete(answers);
      return this.#sse.send(message, options);
    }
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
    const ids = requestIds(parsedBody);
    const alone = ids.length === 1 && !Array.isArray(parsedBody);
    const id = ids[0]!;
    // Not before the session is initialized: the SDK says so its own way.
    if (alone && !this.#calls.has(id) && this.#sse.sessionId !== undefined) {
      const message = plainJsonRequest(request, parsedBody);
      if (message !== undefined) {
        // Its answer, JSON or SSE, is the call's response.
        const call = this.#track(id);
        this.onmessage?.(message, {
          requestInfo: new LazyRequestInfo(request),
        });
        return await call.response;
      }
    }
    // Before the SDK sees it: its answer may come before the await ends.
    if (alone) this.#alone.add(id);
    const response = await this.#sse.handleRequest(request, { parsedBody });
    if (alone && !isEventStream(response)) this.#alone.delete(id);
    if (ids.length === 0) return response;
    return watchAnswer(response, () => this.#cancel(ids), this.#backlog);
  }

  // The client stopped reading: the session ends.
  #stalled(bytes: number): void {
    this.#closeReason =
      `The MCP client stopped reading: ${bytes} bytes were waiting on its SSE streams`;
    this.#options.onStalled?.(this.#closeReason);
    this.#backlog.abort(this.#closeReason);
    this.close().catch(() => {});
  }

  // The answer of one request on its way, until it is sent or cancelled.
  #track(id: RequestId): CallAnswer {
    const call = new CallAnswer({
      id,
      // Set once the session is initialized, as it is for every call.
      sessionId: this.#sse.sessionId,
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

  // The client cancelled a request: its server sends no answer (MCP asks
  // for none), so its response ends here, empty, rather than staying open
  // (a connection, a keep-alive timer and a session never idle) until the
  // session ends.
  #cancelled(id: unknown): void {
    if (typeof id !== "string" && typeof id !== "number") return;
    const call = this.#calls.get(id);
    if (call !== undefined) {
      this.#calls.delete(id);
      return call.cancelled();
    }
    // The SDK's stream, when it carries no other request.
    if (this.#alone.delete(id)) this.#sse.closeSSEStream(id);
  }

  #cancel(ids: readonly RequestId[]): void {
    for (const id of ids) this.#alone.delete(id);
    for (const message of cancellations(ids)) this.onmessage?.(message);
  }
}

/** Options of {@link CallAnswer}. */
export interface CallAnswerOptions {
  /** The request's id. */
  id: RequestId;
  /** The MCP session's id, sent back in the `mcp-session-id` header. */
  sessionId?: string;
  /** How long the answer may take and still come as one JSON body. */
  graceMs: number;
  /** Called once when the client goes away before the answer was sent. */
  onCancel: () => void;
  /**
   * Keeps the grace time: one timer for all of a session's calls instead
   * of a timer set and cleared per call.
   */
  deadlines: Deadlines;
  /**
   * Counts what the SSE answer holds for a client that does not read (the
   * session's total decides what is dropped). @default not counted
   */
  backlog?: SseBacklog;
}

const encoder = new TextEncoder();

/**
 * Whether a message is the answer to a request (a result or an error).
 *
 * @param message a JSON-RPC message
 * @returns the request id it answers, or undefined
 * @example
 * ```ts
 * import { answerId } from "./http_session.ts";
 * import assert from "node:assert/strict";
 * assert.equal(answerId({ jsonrpc: "2.0", id: 4, result: {} }), 4);
 * assert.equal(answerId({ jsonrpc: "2.0", method: "notifications/message" }), undefined);
 * ```
 */
export function answerId(message: JSONRPCMessage): RequestId | undefined {
  return "id" in message && !("method" in message) ? message.id : undefined;
}

/**
 * One request's answer on its way: JSON, or SSE once it must stream. Route
 * every message about the request to {@link CallAnswer.send}. One object
 * per call: it is its own grace deadline, so no closures.
 *
 * @example An answer within the grace time is one JSON body
 * ```ts
 * import { CallAnswer } from "./http_session.ts";
 * import { Deadlines } from "../deadline.ts";
 * import assert from "node:assert/strict";
 * const deadlines = new Deadlines({ unref: false });
 * const answer = new CallAnswer({
 *   id: 1, sessionId: "s1", graceMs: 1000, onCancel() {}, deadlines,
 * });
 * await answer.send({ jsonrpc: "2.0", id: 1, result: {} });
 * const res = await answer.response;
 * assert.equal(res.headers.get("content-type"), "application/json");
 * assert.equal(res.headers.get("mcp-session-id"), "s1");
 * assert.deepEqual(await res.json(), { jsonrpc: "2.0", id: 1, result: {} });
 * deadlines.close();
 * ```
 */
export class CallAnswer implements Expiring {
  /**
   * Resolves with the SSE response once the call must stream; until then
   * with its answer as one JSON body, as the SDK's JSON response mode
   * sends it.
   */
  readonly response: Promise<Response>;
  #respond: (response: Response) => void;
  #options: CallAnswerOptions;
  #state: "waiting" | "streaming" | "done" = "waiting";
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #watched: Watched | undefined;

  /**
   * Starts the answer of one request.
   *
   * @param options the request id, session id, grace time and cancel hook
   */
  constructor(options: CallAnswerOptions) {
    const response = Promise.withResolvers<Response>();
    this.response = response.promise;
    this.#respond = response.resolve;
    this.#options = options;
    options.deadlines.add(this, options.graceMs);
  }

  /**
   * Sends one message about the request (a notification, or its answer,
   * which ends the call).
   *
   * @param message the message
   */
  send(message: JSONRPCMessage): Promise<void> {
    const last = answerId(message) !== undefined;
    if (this.#state === "waiting" && last) {
      this.#end();
      this.#answerJson(message);
    } else if (this.#state !== "done") {
      if (this.#state === "waiting") this.#stream();
      this.#event(message);
      if (last) this.#end();
    }
    return Promise.resolve();
  }

  /**
   * Ends the call without its answer (the session closed): the client gets
   * an error answer saying why, as JSON or as the stream's last event.
   *
   * @param reason why
   */
  close(reason = "The MCP session closed"): void {
    if (this.#state === "done") return;
    // The client gets an error rather than a request that never ends.
    const error: JSONRPCMessage = {
      jsonrpc: "2.0",
      id: this.#options.id,
      error: { code: ErrorCode.ConnectionClosed, message: reason },
    };
    if (this.#state === "streaming") {
      this.#event(error);
      return this.#end();
    }
    this.#end();
    this.#answerJson(error);
  }

  /**
   * The client cancelled the request: its answer will not come. The
   * response ends with no answer (an empty SSE stream when none was sent
   * yet).
   */
  cancelled(): void {
    if (this.#state === "done") return;
    if (this.#state === "waiting") this.#stream();
    this.#end();
  }

  /** The grace time passed: the answer streams from now on. */
  expire(): void {
    if (this.#state === "waiting") this.#stream();
  }

  #event(message: JSONRPCMessage): void {
    try {
      this.#controller?.enqueue(
        encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
      );
    } catch {
      // The client cancelled the stream.
    }
  }

  // As the SDK's JSON response mode sends it: 200, `application/json`,
  // and the session's id.
  #answerJson(message: JSONRPCMessage): void {
    const headers = { "mcp-session-id": this.#options.sessionId ?? "" };
    this.#respond(Response.json(message, { headers }));
  }

  #end(): void {
    this.#state = "done";
    this.#options.deadlines.remove(this);
    clearInterval(this.#keepAlive);
    this.#watched?.end();
    try {
      this.#controller?.close();
    } catch {
      // Already closed or cancelled.
    }
  }

  #stream(): void {
    this.#options.deadlines.remove(this);
    this.#state = "streaming";
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.#controller = c;
        this.#watched = this.#options.backlog?.watch(c);
      },
      cancel: () => {
        this.#watched?.end();
        if (this.#state === "done") return;
        this.#end();
        this.#options.onCancel();
      },
    }, SSE_STRATEGY);
    this.#keepAlive = armSseKeepAlive(DEFAULT_SSE_KEEP_ALIVE_MS, () => {
      try {
        this.#controller?.enqueue(encoder.encode(": keepalive\n\n"));
      } catch {
        clearInterval(this.#keepAlive);
      }
    });
    const sessionId = this.#options.sessionId;
    // As the SDK's SSE answers.
    const headers: Record<string, string> = {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
    };
    this.#respond(new Response(body, { status: 200, headers }));
  }
}

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
 * import { plainJsonRequest } from "./http_session.ts";
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
      if (meta[RELATED_TASK_META_KEY] !== undefined) return undefined;
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
 * What the SDK tells request handlers of the HTTP request, made only when a
 * handler reads it. A class, not an object literal with getters: those cost
 * an accessor pair and two closures per call, about 1.5 us.
 *
 * @example
 * ```ts
 * import { LazyRequestInfo } from "./http_session.ts";
 * import assert from "node:assert/strict";
 * const info = new LazyRequestInfo(
 *   new Request("http://x/mcp", { headers: { "x-a": "1" } }),
 * );
 * assert.equal(info.headers["x-a"], "1");
 * assert.equal(info.url?.pathname, "/mcp");
 * ```
 */
export class LazyRequestInfo implements RequestInfo {
  #request: Request;
  #headers: Record<string, string> | undefined;
  #url: URL | undefined;

  /** @param request the HTTP request */
  constructor(request: Request) {
    this.#request = request;
  }

  /** Its headers, as one object, made on first read. */
  get headers(): Record<string, string> {
    return this.#headers ??= Object.fromEntries(this.#request.headers);
  }

  /** Its URL, parsed on first read. */
  get url(): URL {
    return this.#url ??= new URL(this.#request.url);
  }
}

/**
 * The ids of the JSON-RPC requests (not notifications or responses) in a
 * parsed POST body.
 *
 * @param body the parsed body: one message or a batch
 * @returns the request ids, in order
 * @example
 * ```ts
 * import { requestIds } from "./http_session.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(requestIds([
 *   { jsonrpc: "2.0", id: 3, method: "tools/call" },
 *   { jsonrpc: "2.0", method: "notifications/initialized" },
 * ]), [3]);
 * ```
 */
export function requestIds(body: unknown): RequestId[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.filter(isRequest).map((request) => request.id);
}

/**
 * Whether a parsed message is a JSON-RPC request, one that gets an answer:
 * a string `method` and a string or number `id` (a notification has no id,
 * a response no method).
 *
 * @param message a parsed message, valid or not
 * @returns whether it is a request
 * @example
 * ```ts
 * import { isRequest } from "./http_session.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isRequest({ jsonrpc: "2.0", id: 3, method: "tools/call" }), true);
 * assert.equal(isRequest({ jsonrpc: "2.0", method: "notifications/initialized" }), false);
 * assert.equal(isRequest({ jsonrpc: "2.0", id: 3, result: {} }), false);
 * ```
 */
export function isRequest(
  message: unknown,
): message is { id: RequestId; method: string } {
  if (!isPlainObject(message)) return false;
  const { id, method } = message;
  return typeof method === "string" &&
    (typeof id === "string" || typeof id === "number");
}

/**
 * The `notifications/cancelled` a client would send for each request.
 *
 * @param ids the requests to cancel
 * @returns one notification per id
 * @example
 * ```ts
 * import { cancellations } from "./http_session.ts";
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
 * import { watchAnswer } from "./http_session.ts";
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
  if (body === null || !isEventStream(response)) return response;
  // A Response is a ResponseInit: its status, text and headers carry over.
  return new Response(backlog.meter(body, onGone), response);
}

// Whether a response is an SSE stream.
function isEventStream(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith(
    "text/event-stream",
  ) ?? false;
}

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
 * import { SseBacklog } from "./http_session.ts";
 * import assert from "node:assert/strict";
 * const backlog = new SseBacklog();
 * const body = backlog.meter(ReadableStream.from([new Uint8Array(10)]));
 * await Promise.resolve();
 * const reader = body.getReader();
 * assert.equal((await reader.read()).value?.byteLength, 10);
 * assert.equal(backlog.bytes, 0);
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
    const stop = new AbortController();
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
        // The sink takes each chunk at once: the pipe never waits on it.
        body.pipeTo(
          new WritableStream({
            write: (chunk) => controller.enqueue(chunk),
            close: () => controller.close(),
          }),
          { signal: stop.signal },
        ).then(() => {
          settled = true;
          watched?.end();
        }, (error) => {
          // A body that failed fails the counted one (a no-op once cancelled).
          controller.error(error);
          gone();
        });
      },
      cancel(reason) {
        gone();
        stop.abort(reason);
      },
    }, SSE_STRATEGY);
  }
}
