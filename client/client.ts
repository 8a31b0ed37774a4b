/**
 * {@link connect}: opens a WebSocket to a skillbox host (or any A2E host
 * serving WebSocket), performs the handshake and returns a {@link Client}.
 *
 * @module
 */

import { SkillboxError } from "../protocol/errors.ts";
import { envelope } from "../protocol/envelope.ts";
import { printableLine } from "../protocol/lines.ts";
import type { JsonObject } from "../protocol/json.ts";
import { checkTimeout, Connection } from "./_connection.ts";
import {
  type ApiContext,
  createSkillAPI,
  createToolAPI,
  createToolkitAPI,
  send,
} from "./_apis.ts";
import type { SkillAPI } from "./skills.ts";
import type { ToolkitAPI } from "./toolkits.ts";
import type { ToolAPI } from "./tools.ts";
import type {
  Call,
  CloseInfo,
  PushHandler,
  RequestOptions,
  StreamingRequestOptions,
  WireMessage,
} from "./types.ts";

/**
 * A WebSocket class: the global one, or any with the same shape.
 *
 * @example Record every frame the client sends
 * ```ts
 * import { connect, type WebSocketConstructor } from "./client.ts";
 * import assert from "node:assert/strict";
 *
 * // A stand-in host: accepts the handshake, answers pings.
 * const answers: Record<string, object> = {
 *   "handshake/req": { type: "handshake/resp", session_id: "s1" },
 *   "ping": { type: "pong", uptime_seconds: 3600 },
 * };
 * const server = Deno.serve({ port: 0, onListen() {} }, (request) => {
 *   const { socket, response } = Deno.upgradeWebSocket(request);
 *   socket.onmessage = ({ data }) => {
 *     const msg = JSON.parse(data);
 *     socket.send(JSON.stringify({ ...answers[msg.type], req_id: msg.id }));
 *   };
 *   return response;
 * });
 *
 * const sent: string[] = [];
 * class RecordingWebSocket extends WebSocket {
 *   override send(
 *     data: string | ArrayBufferLike | Blob | ArrayBufferView,
 *   ): void {
 *     if (typeof data === "string") sent.push(data);
 *     super.send(data);
 *   }
 * }
 * const WebSocketClass: WebSocketConstructor = RecordingWebSocket;
 *
 * const client = await connect(`ws://127.0.0.1:${server.addr.port}/a2e`, {
 *   WebSocket: WebSocketClass,
 * });
 * await client.ping();
 * assert.deepEqual(sent.map((frame) => JSON.parse(frame).type), [
 *   "handshake/req",
 *   "ping",
 * ]);
 * await client.close();
 * await server.shutdown();
 * ```
 */
export type WebSocketConstructor = new (
  url: string | URL,
  protocols?: string | string[],
) => WebSocket;

/**
 * Options of {@link connect}.
 *
 * @example Connect with a token, as a named agent, asking for tools only
 * ```ts
 * import { type Client, connect } from "./client.ts";
 *
 * async function connectBot(url: string, token: string): Promise<Client> {
 *   // The handshake carries auth_token, agent_id and agent_caps; what the
 *   // host granted is in `client.acceptedCaps`.
 *   return await connect(url, {
 *     token,
 *     agentId: "report-bot",
 *     caps: ["tools"],
 *   });
 * }
 * ```
 */
export interface ConnectOptions {
  /** The auth token sent in the handshake (`auth_token`). @default "" */
  token?: string;
  /** Who is connecting (`agent_id`). @default "" */
  agentId?: string;
  /**
   * The capabilities asked for (`agent_caps`); the host accepts the ones it
   * serves.
   * @default ["tools", "toolkits", "skill"]
   */
  caps?: string[];
  /**
   * Milliseconds to wait for the socket to open and the handshake, both
   * together, and the default deadline of every request that runs no code
   * (ping, lists, configure).
   * At most 2147483647, the longest delay setTimeout holds.
   * @default 10000
   */
  timeout?: number;
  /**
   * Milliseconds a tool or skill call waits past its own `timeout` for the
   * host's answer, which carries the result and its events, before failing
   * locally with a `TimeoutError`. At most 2147483647.
   * @default 5000
   */
  timeoutGrace?: number;
  /** Aborting it abandons the connection attempt. */
  signal?: AbortSignal;
  /**
   * The WebSocket class to use, for runtimes without a global one.
   * @default globalThis.WebSocket
   */
  WebSocket?: WebSocketConstructor;
}

/**
 * What {@link Client.ping} measures.
 *
 * @example Check a host's health
 * ```ts
 * import type { Client } from "./client.ts";
 *
 * async function health(client: Client): Promise<string> {
 *   const { roundTripMs, uptimeSeconds } = await client.ping();
 *   const hours = Math.floor(uptimeSeconds / 3600);
 *   return `${roundTripMs < 1000 ? "up" : "slow"} for ${hours} h`;
 * }
 * ```
 */
export interface PingResult {
  /** Milliseconds from sending `ping` to receiving `pong`. */
  roundTripMs: number;
  /** The host's uptime, from `pong.uptime_seconds`. */
  uptimeSeconds: number;
}

/**
 * A connected A2E session. What it returns (tools, toolkits, skills,
 * outcomes, events) are camelCase domain objects decoded from the wire by the
 * protocol codec (`protocol/responses.ts`); only `request()` and push messages
 * are raw wire messages, snake_case as in A2E-WIRE.md.
 *
 * @example Ping a host, then close
 * ```ts
 * import { connect } from "./client.ts";
 *
 * async function roundTrip(url: string): Promise<number> {
 *   const client = await connect(url, { token: "secret" });
 *   const { roundTripMs } = await client.ping();
 *   await client.close();
 *   return roundTripMs;
 * }
 * ```
 */
export interface Client {
  /** The handshake's `session_id`. */
  readonly sessionId: string;
  /** The capability names the host accepted (`accepted_caps`). */
  readonly acceptedCaps: readonly string[];
  /** How many requests the host runs at once for this session. */
  readonly maxParallel: number;
  /** Tools: list, search, call. */
  readonly tools: ToolAPI;
  /** Toolkits: list, configure, ensure, get. */
  readonly toolkits: ToolkitAPI;
  /** Skills: discover, call. */
  readonly skills: SkillAPI;
  /** Settles when the socket closes, for whatever reason. */
  readonly closed: Promise<CloseInfo>;
  /**
   * Sends `ping` and waits for `pong`.
   *
   * @param options timeout and cancellation
   * @returns the round trip and the host's uptime
   */
  ping(options?: RequestOptions): Promise<PingResult>;
  /**
   * Sends any A2E request and returns its raw final answer: the escape hatch
   * for message types this client has no method for.
   *
   * @param type the message type, e.g. `"tool/list/req"`
   * @param fields the message's own snake_case fields (the envelope is added)
   * @param options timeout, cancellation, events
   * @returns the call; it rejects with a `SkillboxError` on an `error` answer
   */
  request(
    type: string,
    fields?: JsonObject,
    options?: StreamingRequestOptions,
  ): Call<WireMessage>;
  /**
   * Subscribes to push messages: every message that answers no pending
   * request (e.g. `invoke/event` of kind `tools.changed`).
   *
   * @param handler called with each such message
   * @returns a function that unsubscribes
   */
  onPush(handler: PushHandler): () => void;
  /**
   * Closes the socket; pending calls fail with a `ConnectionClosedError`.
   * Waits for the host's close at most the client's `timeout`; past it the
   * connection counts as dropped (code 1006).
   *
   * @returns how the socket closed
   */
  close(): Promise<CloseInfo>;
}

/**
 * Connects to an A2E host over WebSocket and performs the handshake.
 *
 * @param url the host's WebSocket endpoint, e.g. `ws://127.0.0.1:8787/a2e`
 *   (`http:`/`https:` are turned into `ws:`/`wss:`)
 * @param options token, identity, capabilities and limits, see {@link ConnectOptions}
 * @returns the connected {@link Client}
 * @throws {SkillboxError} `unauthorized` with the host's reason when the
 *   handshake is refused (`detail.reason`), or the host's `error`
 * @throws {ConnectionClosedError} when the socket cannot open or closes early
 * @throws {TimeoutError} when the socket or handshake takes longer than `timeout`
 * @throws {RangeError} when `timeout` or `timeoutGrace` is not 0 to
 *   2147483647 ms (2^31-1: setTimeout fires at once past it)
 * @example Connect to a tiny fake host
 * ```ts
 * import { connect } from "./client.ts";
 * import assert from "node:assert/strict";
 *
 * // A host that accepts every handshake and answers pings.
 * const server = Deno.serve({ port: 0, onListen() {} }, (request) => {
 *   const { socket, response } = Deno.upgradeWebSocket(request);
 *   socket.onmessage = (event) => {
 *     const msg = JSON.parse(event.data);
 *     const base = { id: crypto.randomUUID().replaceAll("-", ""), version: "1.0", ts: Date.now() / 1000, req_id: msg.id };
 *     if (msg.type === "handshake/req") {
 *       socket.send(JSON.stringify({ ...base, type: "handshake/resp", session_id: "s1", accepted_caps: [], max_parallel: 4, ok: true, reason: "" }));
 *     } else if (msg.type === "ping") {
 *       socket.send(JSON.stringify({ ...base, type: "pong", uptime_seconds: 1.5 }));
 *     }
 *   };
 *   return response;
 * });
 *
 * const client = await connect(`ws://127.0.0.1:${server.addr.port}/a2e`);
 * assert.equal(client.sessionId, "s1");
 * assert.equal((await client.ping()).uptimeSeconds, 1.5);
 * await client.close();
 * await server.shutdown();
 * ```
 */
export async function connect(
  url: string | URL,
  options: ConnectOptions = {},
): Promise<Client> {
  const target = toWebSocketUrl(url);
  const timeout = options.timeout ?? 10_000;
  const timeoutGrace = options.timeoutGrace ?? 5_000;
  const label = `connect to "${target}"`;
  checkTimeout(label, "timeout", timeout);
  checkTimeout(label, "timeoutGrace", timeoutGrace);
  const WebSocketClass = options.WebSocket ?? globalThis.WebSocket;
  options.signal?.throwIfAborted();
  const socket = new WebSocketClass(target);
  const connection = new Connection(socket);
  try {
    const handshake = await send({ connection, timeout }, {
      type: "handshake/req",
      agentId: options.agentId ?? "",
      agentCaps: options.caps ?? ["tools", "toolkits", "skill"],
      authToken: options.token ?? "",
    }, { label, signal: options.signal, read: (body) => body });
    if (!handshake.ok) {
      const reason = printableLine(handshake.reason) || "no reason given";
      throw new SkillboxError("unauthorized", `Cannot ${label}: ${reason}`, {
        detail: { reason: handshake.reason },
      });
    }
    return createClient({
      connection,
      sessionId: handshake.sessionId,
      timeout,
      timeoutGrace,
    }, handshake);
  } catch (error) {
    // A refused or failed handshake leaves nothing to serve: free the socket
    // (a host that ignores the close holds it no longer than `timeout`).
    await connection.close(timeout);
    throw error;
  }
}

// The client is its context's APIs and the connection's few own calls.
function createClient(
  context: ApiContext,
  handshake: { acceptedCaps: string[]; maxParallel: number },
): Client {
  const { connection } = context;
  return {
    sessionId: context.sessionId,
    acceptedCaps: Object.freeze([...handshake.acceptedCaps]),
    maxParallel: handshake.maxParallel,
    closed: connection.closed,
    tools: createToolAPI(context),
    toolkits: createToolkitAPI(context),
    skills: createSkillAPI(context),
    async ping(options = {}) {
      const started = performance.now();
      const uptimeSeconds = await send(context, { type: "ping" }, {
        ...options,
        label: "ping",
        read: (body) => body.uptimeSeconds,
      });
      return { roundTripMs: performance.now() - started, uptimeSeconds };
    },
    request: (type, fields = {}, options = {}) =>
      connection.request(envelope(type, fields), {
        ...options,
        label: `send "${type}"`,
        timeout: options.timeout ?? context.timeout,
        decode: (answer) => answer,
      }),
    onPush: (handler) => connection.onPush(handler),
    close: () => connection.close(context.timeout),
  };
}

function toWebSocketUrl(url: string | URL): string {
  const parsed = new URL(url);
  if (parsed.protocol === "http:") parsed.protocol = "ws:";
  if (parsed.protocol === "https:") parsed.protocol = "wss:";
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    throw new TypeError(
      `Cannot connect to "${url}": expected a ws:, wss:, http: or https: URL`,
    );
  }
  return parsed.href;
}
