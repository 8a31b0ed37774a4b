/**
 * MCP over Streamable HTTP at `/mcp`: one official-SDK server per MCP
 * session on an {@link McpHttpSession} (the SDK's Streamable HTTP
 * transport, with quick calls answered as JSON), each backed by its own
 * host session. With tokens configured every request
 * needs `Authorization: Bearer <token>` (401 otherwise), and a session
 * answers only the token that opened it. Idle sessions expire.
 *
 * ## The request guard
 *
 * What every request to `/mcp` must pass before it reaches a session: the
 * bearer token when tokens are configured (401 otherwise). `Host` and
 * `Origin` were checked at the host's door (`runtime/doors/guard.ts`), in
 * front of every route.
 *
 * @module
 */

import { requestBodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";
import {
  ErrorCode,
  InitializeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { isPlainObject } from "../../protocol/json.ts";
import { describeZodError } from "../../protocol/request_schemas.ts";
import { bearerToken, isAcceptedToken } from "../admission.ts";
import { jsonError } from "../doors/guard.ts";
import {
  bodiesBusyMessage,
  bodyTimedOut,
  bodyTimeoutMs,
  readRequestText,
} from "../transports/client_bounds.ts";
import { McpHttpSession } from "./http_session.ts";
import { ReadsInFlight } from "./reads_in_flight.ts";
import type { TransportContext } from "../transports/transport_context.ts";
import { type A2eLink, openA2eLink } from "./a2e_link.ts";
import { createMcpServer, type McpServerOptions } from "./server.ts";
import { requestId } from "./stdio.ts";

/** Options of {@link createMcpHttp}. */
export interface McpHttpOptions extends McpServerOptions {
  /** Accepted bearer tokens; empty means no auth. @default [] */
  tokens?: readonly string[];
}

interface Entry {
  transport: McpHttpSession;
  link: A2eLink;
  token: string;
  lastSeen: number;
  close(): Promise<void>;
}

/**
 * Creates the `/mcp` endpoint.
 *
 * @param context the host as transports see it
 * @param options tokens, tool facts
 * @returns the endpoint
 * @example Refuse a request without the bearer token
 * ```ts
 * import { createMcpHttp } from "./http.ts";
 * import { Dispatcher } from "../dispatcher.ts";
 * import { defaultConfig } from "../config.ts";
 * import assert from "node:assert/strict";
 * const mcp = createMcpHttp({
 *   dispatcher: new Dispatcher(), limits: defaultConfig().limits,
 *   admitSession: () => ({ status: 503, reason: "closed" }), log() {},
 * }, { tokens: ["t"] });
 * const res = await mcp.handle(new Request("http://x/mcp", { method: "POST", body: "{}" }));
 * assert.equal(res.status, 401);
 * await res.body?.cancel();
 * await mcp.close();
 * ```
 */
export function createMcpHttp(
  context: TransportContext,
  options: McpHttpOptions = {},
): McpHttp {
  return new McpHttp(context, options);
}

/**
 * The `/mcp` endpoint: its MCP sessions, each with its host session.
 *
 * @example No session is open before the first request
 * ```ts
 * import { McpHttp } from "./http.ts";
 * import { Dispatcher } from "../dispatcher.ts";
 * import { defaultConfig } from "../config.ts";
 * import assert from "node:assert/strict";
 * const mcp = new McpHttp({
 *   dispatcher: new Dispatcher(), limits: defaultConfig().limits,
 *   admitSession: () => ({ status: 503, reason: "closed" }), log() {},
 * }, {});
 * assert.equal(mcp.size, 0);
 * await mcp.close();
 * ```
 */
export class McpHttp {
  #context: TransportContext;
  #options: McpHttpOptions;
  #tokens: readonly string[];
  #sessions = new Map<string, Entry>();
  #body: BodyBounds;
  // Across every session and connection of a token.
  #reads: ReadsInFlight;
  #sweep: ReturnType<typeof setInterval>;

  /**
   * @param context the host as transports see it
   * @param options tokens and tool facts
   */
  constructor(context: TransportContext, options: McpHttpOptions) {
    this.#context = context;
    this.#options = options;
    this.#tokens = options.tokens ?? [];
    this.#body = {
      maxBytes: context.dispatcher.maxMessageBytes,
      timeoutMs: bodyTimeoutMs(context.limits),
    };
    this.#reads = new ReadsInFlight(context.limits.mcpReadsPerToken);
    // As long as an A2E HTTP+SSE session may sit unused.
    const idleMs = context.limits.sseIdleSeconds * 1000;
    this.#sweep = setInterval(
      () => closeIdle(this.#sessions, idleMs),
      Math.max(1000, Math.min(idleMs / 4, 30_000)),
    );
    Deno.unrefTimer(this.#sweep);
  }

  /** How many MCP sessions are open. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Handles one request to `/mcp`.
   *
   * @param request the request
   * @returns the response
   */
  async handle(request: Request): Promise<Response> {
    const token = guardRequest(request, this.#tokens);
    if (typeof token !== "string") return token;
    const id = request.headers.get("mcp-session-id");
    if (id === null) {
      if (request.method !== "POST") {
        return jsonError(400, "Missing Mcp-Session-Id header");
      }
      return await this.#open(request, token);
    }
    const entry = this.#sessions.get(id);
    // Another token's session is as good as unknown.
    if (!entry || !isAcceptedToken([entry.token], token)) {
      return jsonError(404, "Unknown MCP session");
    }
    entry.lastSeen = Date.now();
    if (request.method === "DELETE") {
      const response = await entry.transport.handleRequest(request);
      await entry.close();
      return response;
    }
    if (request.method !== "POST") {
      return await entry.transport.handleRequest(request);
    }
    return await this.#post(entry.transport, request, entry.token);
  }

  /** Closes every MCP session. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await Promise.allSettled(
      [...this.#sessions.values()].map((e) => e.close()),
    );
    this.#sessions.clear();
  }

  // A request without a session id: an initialize request opens one.
  async #open(request: Request, token: string): Promise<Response> {
    const sessions = this.#sessions;
    const link = openA2eLink(this.#context, { token });
    if (typeof link === "string") {
      return jsonError(503, `Cannot open an MCP session: ${link}`);
    }
    const server = createMcpServer(link, this.#options);
    const transport = new McpHttpSession({
      maxRequestBodySize: this.#body.maxBytes,
      // Its calls are cancelled saying why, before the session closes.
      onStalled: (reason) => link.close(reason),
      log: (line) => this.#context.log(line),
      onsessioninitialized: (id: string) => {
        sessions.set(id, entry);
      },
    });
    const entry: Entry = {
      transport,
      link,
      token,
      lastSeen: Date.now(),
      async close() {
        if (transport.sessionId) sessions.delete(transport.sessionId);
        link.close("MCP session closed");
        await server.close().catch(() => {});
      },
    };
    const close = entry.close;
    server.onclose = () => {
      close().catch(() => {});
    };
    await server.connect(transport);
    try {
      // Its body is read here, under the same bounds as any POST's.
      return await this.#post(transport, request, token);
    } finally {
      // Not an initialize request, or a body that never came whole (the
      // client went away): nothing to keep, and its host session is freed.
      if (transport.sessionId === undefined) await close();
    }
  }

  // Reads the body here to learn what it holds (see McpHttpSession.post),
  // and what it asks of the principal's reads in flight (a POST that opens
  // a session asks nothing).
  async #post(
    transport: McpHttpSession,
    request: Request,
    principal: string,
  ): Promise<Response> {
    const bounds = this.#body;
    const body = await readRequestText(request, bounds);
    if (body.refused !== undefined) {
      const message = body.refused === 408
        ? bodyTimedOut(bounds.timeoutMs)
        : body.refused === 503
        ? bodiesBusyMessage()
        : requestBodyTooLargeMessage(bounds.maxBytes);
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32000, message }, id: null },
        {
          status: body.refused,
          // Busy, not refused for good: as the other transports say.
          headers: body.refused === 503 ? { "Retry-After": "1" } : {},
        },
      );
    }
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(body.text);
    } catch {
      // The SDK answers malformed JSON its own way.
      return await transport.handleRequest(
        new Request(request.url, {
          method: "POST",
          headers: request.headers,
          body: body.text,
        }),
      );
    }
    if (transport.sessionId === undefined) {
      return refuseInitialize(parsedBody) ??
        await transport.post(request, parsedBody);
    }
    const held = this.#reads.take(parsedBody, principal);
    if (held === undefined) return await transport.post(request, parsedBody);
    if (held instanceof Response) return held;
    try {
      return this.#reads.hold(await transport.post(request, parsedBody), held);
    } catch (error) {
      held();
      throw error;
    }
  }
}

// Sessions unused for idleMs, with no call under way and no stream open,
// are closed: as on the A2E HTTP+SSE transport, a client listening on its
// GET stream is there, however long it stays quiet.
function closeIdle(sessions: Map<string, Entry>, idleMs: number): void {
  const now = Date.now();
  for (const entry of sessions.values()) {
    if (
      now - entry.lastSeen > idleMs && entry.link.inFlight === 0 &&
      !entry.transport.streaming
    ) {
      entry.close().catch(() => {});
    }
  }
}

// The SDK takes an `initialize` its schema refuses for no initialize at all
// and answers "Bad Request: Server not initialized", id null: the client
// learns nothing. Say what is wrong with it, to its id.
function refuseInitialize(body: unknown): Response | undefined {
  if (!isPlainObject(body) || body.method !== "initialize") return undefined;
  const checked = InitializeRequestSchema.safeParse(body);
  if (checked.success) return undefined;
  return Response.json({
    jsonrpc: "2.0",
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid initialize request: ${
        describeZodError(checked.error as unknown as z.ZodError)
      }`,
    },
    id: requestId(body),
  }, { status: 400 });
}

/** How large a POST's body may be, and how long it may take. */
interface BodyBounds {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * Checks a request's token.
 *
 * @param request the request to `/mcp`
 * @param tokens the accepted bearer tokens; empty means no auth
 * @returns the token it presented ("" when none), or the refusal to send
 * @example A request without the token is refused
 * ```ts
 * import { guardRequest } from "./http.ts";
 * import assert from "node:assert/strict";
 * const refused = guardRequest(new Request("http://x/mcp"), ["t"]);
 * assert.ok(refused instanceof Response);
 * assert.equal(refused.status, 401);
 * ```
 */
export function guardRequest(
  request: Request,
  tokens: readonly string[],
): string | Response {
  const checked = bearerToken(
    request.headers.get("authorization") ?? undefined,
    tokens,
  );
  if (tokens.length > 0 && typeof checked !== "string") {
    return jsonError(
      401,
      checked === undefined ? "Missing bearer token" : "Invalid bearer token",
      { "WWW-Authenticate": 'Bearer realm="skillbox"' },
    );
  }
  return checked ?? "";
}
