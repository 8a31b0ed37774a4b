/**
 * How one JSON-RPC request posted to `/mcp` without a `progressToken` is
 * answered: as one JSON body when its answer is the only message there is
 * to send and comes within `graceMs` (the cheap case, and the common one:
 * no SSE stream to set up or to parse); otherwise as an SSE stream, as the
 * SDK answers by default, that carries the request's notifications (log
 * messages) before its answer. A client that vanishes mid-call is seen when
 * that stream is cancelled, so at most `graceMs` late.
 *
 * The JSON body is built by the SDK's own transport (a stateless one made
 * for this one request with the public `enableJsonResponse` option), or,
 * for a plain request the session took itself, as that mode builds it
 * (`json_post.ts`); the SSE events are framed as the SDK frames them.
 *
 * @module
 */

import {
  armSseKeepAlive,
  DEFAULT_SSE_KEEP_ALIVE_MS,
} from "@modelcontextprotocol/sdk/server/sseKeepAlive.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { Deadlines, Expiring } from "../deadline.ts";
import { jsonAnswer } from "./json_post.ts";
import { SSE_STRATEGY, type SseBacklog, type Watched } from "./sse_backlog.ts";

/** Where an answer goes while it may still come as one JSON body. */
export interface JsonSender {
  /** Sends the answer (or an error in its place) as the HTTP response. */
  send(message: JSONRPCMessage): Promise<void>;
}

/** Options of {@link createCallAnswer}. */
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

/** One request's answer on its way: JSON, or SSE once it must stream. */
export interface CallAnswer {
  /**
   * Sends one message about the request (a notification, or its answer,
   * which ends the call).
   */
  send(message: JSONRPCMessage): Promise<void>;
  /**
   * Resolves with the SSE response once the call must stream; until then
   * the answer goes to the JSON sender, or, when there is none, resolves
   * this as one JSON body.
   */
  readonly response: Promise<Response>;
  /**
   * Ends the call without its answer (the session closed): the client gets
   * an error answer saying why, as JSON or as the stream's last event.
   */
  close(reason?: string): void;
}

const encoder = new TextEncoder();

/**
 * Whether a message is the answer to a request (a result or an error).
 *
 * @param message a JSON-RPC message
 * @returns the request id it answers, or undefined
 * @example
 * ```ts
 * import { answerId } from "./call_answer.ts";
 * import assert from "node:assert/strict";
 * assert.equal(answerId({ jsonrpc: "2.0", id: 4, result: {} }), 4);
 * assert.equal(answerId({ jsonrpc: "2.0", method: "notifications/message" }), undefined);
 * ```
 */
export function answerId(message: JSONRPCMessage): RequestId | undefined {
  return "id" in message && !("method" in message) ? message.id : undefined;
}

/**
 * Starts the answer of one request. Route every message about the request
 * to {@link CallAnswer.send}.
 *
 * @param json where the answer goes as one JSON body (the request's own SDK
 *   transport in JSON response mode); when undefined, the answer resolves
 *   {@link CallAnswer.response} as the SDK's JSON response mode would send
 *   it (a plain request the session took itself: no promise to race)
 * @param options the request id, session id, grace time and cancel hook
 * @returns the answer
 * @example An answer within the grace time is one JSON body
 * ```ts
 * import { createCallAnswer } from "./call_answer.ts";
 * import { Deadlines } from "../deadline.ts";
 * import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
 * import assert from "node:assert/strict";
 * const json = new WebStandardStreamableHTTPServerTransport({
 *   sessionIdGenerator: undefined, enableJsonResponse: true,
 * });
 * json.onmessage = () => {};
 * const taken = json.handleRequest(new Request("http://x/mcp", {
 *   method: "POST",
 *   headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
 *   body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
 * }));
 * const deadlines = new Deadlines({ unref: false });
 * const answer = createCallAnswer(json, {
 *   id: 1, graceMs: 1000, onCancel() {}, deadlines,
 * });
 * await answer.send({ jsonrpc: "2.0", id: 1, result: {} });
 * const res = await Promise.race([taken, answer.response]);
 * assert.equal(res.headers.get("content-type"), "application/json");
 * assert.deepEqual(await res.json(), { jsonrpc: "2.0", id: 1, result: {} });
 * deadlines.close();
 * ```
 */
export function createCallAnswer(
  json: JsonSender | undefined,
  options: CallAnswerOptions,
): CallAnswer {
  return new Answer(json, options);
}

// One object per call: it is its own grace deadline, so no closures.
class Answer implements CallAnswer, Expiring {
  readonly response: Promise<Response>;
  #respond: (response: Response) => void;
  #json: JsonSender | undefined;
  #options: CallAnswerOptions;
  #state: "waiting" | "streaming" | "done" = "waiting";
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #clock: Deadlines;
  #watched: Watched | undefined;

  constructor(json: JsonSender | undefined, options: CallAnswerOptions) {
    const response = Promise.withResolvers<Response>();
    this.response = response.promise;
    this.#respond = response.resolve;
    this.#json = json;
    this.#options = options;
    this.#clock = options.deadlines;
    this.#clock.add(this, options.graceMs);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#state === "done") return;
    const last = answerId(message) !== undefined;
    if (this.#state === "waiting") {
      if (last) {
        this.#end();
        return await this.#answerJson(message);
      }
      this.#stream();
    }
    this.#event(message);
    if (last) this.#end();
  }

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
    this.#answerJson(error).catch(() => {});
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

  #answerJson(message: JSONRPCMessage): Promise<void> {
    if (this.#json !== undefined) return this.#json.send(message);
    this.#respond(jsonAnswer(message, this.#options.sessionId ?? ""));
    return Promise.resolve();
  }

  #end(): void {
    this.#state = "done";
    this.#clock.remove(this);
    clearInterval(this.#keepAlive);
    this.#watched?.end();
    try {
      this.#controller?.close();
    } catch {
      // Already closed or cancelled.
    }
  }

  #stream(): void {
    this.#clock.remove(this);
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
    this.#respond(
      new Response(body, {
        status: 200,
        headers: sseHeaders(this.#options),
      }),
    );
  }
}

function sseHeaders(options: CallAnswerOptions): Record<string, string> {
  // As the SDK's SSE answers.
  return {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
    ...(options.sessionId === undefined
      ? {}
      : { "mcp-session-id": options.sessionId }),
  };
}
