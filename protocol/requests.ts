/**
 * Every A2E v1.0 request an agent may send, as the camelCase type handlers
 * receive (its wire form is `Wire<...>` of it), and {@link encodeRequest},
 * what a client sends. The zod schemas that check the wire form, typed
 * against these types, and the parser built on them are in
 * `request_schemas.ts` (kept apart so that a client bundle holds no zod).
 *
 * @module
 */

import { type Envelope, envelope } from "./envelope.ts";
import { isPlainObject, type JsonObject } from "./json.ts";
import { encodeLlmChoice, type LlmChoice } from "./skill.ts";
import { snakeName, type Wire } from "./wire_names.ts";

/**
 * The envelope fields as an agent may send them (all optional on input).
 *
 * @example Read the id to answer with
 * ```ts
 * import type { RequestEnvelope } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const replyTo = (request: RequestEnvelope): string => request.id;
 * const sent = parseMessage('{"type":"ping","id":"p1","version":"1.0","ts":1700000000.5}');
 * assert.ok(sent.ok);
 * assert.equal(replyTo(sent.request), "p1");
 * assert.equal(sent.request.ts, 1700000000.5);
 * // Every envelope field may be left out.
 * const bare = parseMessage('{"type":"ping"}');
 * assert.ok(bare.ok);
 * assert.equal(replyTo(bare.request), "");
 * assert.equal(bare.request.version, undefined);
 * ```
 */
export interface RequestEnvelope {
  /** The request id; `""` when the agent sent none. */
  id: string;
  /** The protocol version the agent claims (`"1.0"`), when it sent one. */
  version?: string;
  /** When the agent sent it, in Unix seconds (float), when it sent one. */
  ts?: number;
}

/**
 * `handshake/req`.
 *
 * @example Parse a handshake, defaults filled
 * ```ts
 * import type { HandshakeRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const parsed = parseMessage('{"type":"handshake/req","id":"h1","auth_token":"s3cret"}');
 * assert.ok(parsed.ok && parsed.request.type === "handshake/req");
 * const hello: HandshakeRequest = parsed.request;
 * assert.equal(hello.authToken, "s3cret");
 * assert.equal(hello.agentId, "");
 * assert.deepEqual(hello.agentCaps, []);
 * ```
 */
export interface HandshakeRequest extends RequestEnvelope {
  /** Always `"handshake/req"`. */
  type: "handshake/req";
  /** Who the agent says it is, for logs. Wire default `""`. */
  agentId: string;
  /** The capabilities it asks for; the host accepts the ones it serves. Wire default `[]`. */
  agentCaps: string[];
  /** The token to check against the host's `tokens`. Wire default `""`. */
  authToken: string | null;
}

/**
 * `ping`.
 *
 * @example Send a ping: the envelope is all it carries
 * ```ts
 * import { encodeRequest, type PingRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const msg = encodeRequest({ type: "ping" });
 * assert.deepEqual(Object.keys(msg).sort(), ["id", "ts", "type", "version"]);
 * const parsed = parseMessage(JSON.stringify(msg));
 * assert.ok(parsed.ok && parsed.request.type === "ping");
 * const ping: PingRequest = parsed.request;
 * assert.equal(ping.id, msg.id);
 * ```
 */
export interface PingRequest extends RequestEnvelope {
  /** Always `"ping"`. */
  type: "ping";
}

/**
 * `shutdown`: drain in-flight work within `timeout` seconds.
 *
 * @example The drain time, sent and defaulted
 * ```ts
 * import { encodeRequest, type ShutdownRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeRequest({ type: "shutdown", timeout: 2 }).timeout, 2);
 * const parsed = parseMessage('{"type":"shutdown","id":"bye"}');
 * assert.ok(parsed.ok && parsed.request.type === "shutdown");
 * const shutdown: ShutdownRequest = parsed.request;
 * assert.equal(shutdown.timeout, 10);
 * ```
 */
export interface ShutdownRequest extends RequestEnvelope {
  /** Always `"shutdown"`. */
  type: "shutdown";
  /** How long to let in-flight work finish, in seconds. Wire default `10`. */
  timeout: number;
}

/**
 * `tool/list/req`: list mode when `query` is empty, else search mode.
 *
 * @example Search, deferred tools included; a bare request lists
 * ```ts
 * import { encodeRequest, type ToolListRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const search = encodeRequest({ type: "tool/list/req", filterKind: "", filterTags: [],
 *   query: "parse csv", includeDeferred: true });
 * assert.equal(search.query, "parse csv");
 * assert.equal(search.include_deferred, true);
 * const parsed = parseMessage('{"type":"tool/list/req","id":"l1"}');
 * assert.ok(parsed.ok && parsed.request.type === "tool/list/req");
 * const list: ToolListRequest = parsed.request;
 * assert.equal(list.query, "");
 * assert.equal(list.includeDeferred, false);
 * ```
 */
export interface ToolListRequest extends RequestEnvelope {
  /** Always `"tool/list/req"`. */
  type: "tool/list/req";
  /** An origin (`builtin`, `file`, `mcp`) or a toolkit name; `""` for any. Wire default `""`. */
  filterKind: string;
  /** Tags a tool must all carry (case-insensitive). Wire default `[]`. */
  filterTags: string[];
  /** Search text; `""` lists instead of searching. Wire default `""`. */
  query: string;
  /** Whether a search also returns `defer_loading` tools. Wire default `false`. */
  includeDeferred: boolean;
}

/**
 * `tool/call/req`.
 *
 * @example Encode a call, then read it as the host does
 * ```ts
 * import { encodeRequest, type ToolCallRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeRequest({ type: "tool/call/req", sessionId: "", toolName: "echo",
 *   arguments: { text: "hi" }, correlationId: "job-7", streaming: false, timeout: 5 });
 * assert.equal(wire.tool_name, "echo");
 * assert.equal(wire.correlation_id, "job-7");
 * const parsed = parseMessage(JSON.stringify(wire));
 * assert.ok(parsed.ok && parsed.request.type === "tool/call/req");
 * const call: ToolCallRequest = parsed.request;
 * assert.equal(call.id, wire.id);
 * assert.deepEqual(call.arguments, { text: "hi" });
 * assert.equal(call.timeout, 5);
 * ```
 */
export interface ToolCallRequest extends RequestEnvelope {
  /** Always `"tool/call/req"`. */
  type: "tool/call/req";
  /** The handshake's session id, as the client echoes it; informational. Wire default `""`. */
  sessionId: string;
  /** The tool to call. Wire default `""` (answered with `unknown_tool`). */
  toolName: string;
  /** The tool's arguments (required on the wire). */
  arguments: JsonObject;
  /** An id of the caller's choosing, passed to the tool in `ctx.metadata`. Wire default `""`. */
  correlationId: string;
  /** Whether to send each event as a `tool/event` while the tool runs. Wire default `false`. */
  streaming: boolean;
  /** How long the call may run, in seconds. Wire default `30`. */
  timeout: number;
}

/**
 * `toolkit/list/req`.
 *
 * @example List the built-in toolkits tagged `files`
 * ```ts
 * import { encodeRequest, type ToolkitListRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeRequest({ type: "toolkit/list/req", filterKind: "builtin", filterTags: ["files"] });
 * assert.equal(wire.filter_kind, "builtin");
 * const parsed = parseMessage(JSON.stringify(wire));
 * assert.ok(parsed.ok && parsed.request.type === "toolkit/list/req");
 * const list: ToolkitListRequest = parsed.request;
 * assert.deepEqual(list.filterTags, ["files"]);
 * ```
 */
export interface ToolkitListRequest extends RequestEnvelope {
  /** Always `"toolkit/list/req"`. */
  type: "toolkit/list/req";
  /** An origin (`builtin`, `file`) or a category; `""` for any. Wire default `""`. */
  filterKind: string;
  /** Tags a toolkit must all carry (case-insensitive). Wire default `[]`. */
  filterTags: string[];
}

/**
 * `toolkit/configure/req`.
 *
 * @example The configuration goes on the wire as given
 * ```ts
 * import { encodeRequest, type ToolkitConfigureRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeRequest({ type: "toolkit/configure/req", sessionId: "", toolkitName: "github",
 *   config: { baseUrl: "https://api.github.com" } });
 * assert.equal(wire.toolkit_name, "github");
 * // The caller's data keeps its own key names.
 * assert.deepEqual(wire.config, { baseUrl: "https://api.github.com" });
 * const parsed = parseMessage(JSON.stringify(wire));
 * assert.ok(parsed.ok && parsed.request.type === "toolkit/configure/req");
 * const configure: ToolkitConfigureRequest = parsed.request;
 * assert.deepEqual(configure.config, { baseUrl: "https://api.github.com" });
 * ```
 */
export interface ToolkitConfigureRequest extends RequestEnvelope {
  /** Always `"toolkit/configure/req"`. */
  type: "toolkit/configure/req";
  /** The handshake's session id, as the client echoes it; informational. Wire default `""`. */
  sessionId: string;
  /** The toolkit to configure. Wire default `""`. */
  toolkitName: string;
  /** The configuration, checked against the toolkit's `schema`; kept for this session. Wire default `{}`. */
  config: JsonObject;
}

/**
 * `skill/discover/req`.
 *
 * @example Parse a discovery filtered by category
 * ```ts
 * import type { SkillDiscoverRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const parsed = parseMessage('{"type":"skill/discover/req","id":"d1","filter_categories":["writing"]}');
 * assert.ok(parsed.ok && parsed.request.type === "skill/discover/req");
 * const discover: SkillDiscoverRequest = parsed.request;
 * assert.deepEqual(discover.filterCategories, ["writing"]);
 * assert.deepEqual(discover.filterTags, []);
 * ```
 */
export interface SkillDiscoverRequest extends RequestEnvelope {
  /** Always `"skill/discover/req"`. */
  type: "skill/discover/req";
  /** Tags a skill must all carry (case-insensitive). Wire default `[]`. */
  filterTags: string[];
  /** Categories a skill's `category` must all equal (case-insensitive). Wire default `[]`. */
  filterCategories: string[];
}

/**
 * `skill/call/req` (it carries no `session_id`).
 *
 * @example Call a skill with another LLM provider
 * ```ts
 * import { encodeRequest, type SkillCallRequest } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import type { LLMConfig } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeRequest({ type: "skill/call/req", name: "summarize", arguments: { url: "https://example.com" },
 *   correlationId: "", timeout: 60, streaming: false, metadata: { userId: "u1" },
 *   llmOverride: { providerName: "anthropic", providerCredentials: {}, providerConfig: false, isDefault: false } });
 * // The LLM choice is converted to its wire names; the caller's metadata is not.
 * assert.equal((wire.llm_override as LLMConfig).provider_name, "anthropic");
 * assert.deepEqual(wire.metadata, { userId: "u1" });
 * const parsed = parseMessage(JSON.stringify(wire));
 * assert.ok(parsed.ok && parsed.request.type === "skill/call/req");
 * const call: SkillCallRequest = parsed.request;
 * assert.equal(call.llmOverride?.providerName, "anthropic");
 * ```
 */
export interface SkillCallRequest extends RequestEnvelope {
  /** Always `"skill/call/req"`. */
  type: "skill/call/req";
  /** The skill to call. Wire default `""` (answered with `unknown_skill`). */
  name: string;
  /** The skill's arguments. Wire default `{}`. */
  arguments: JsonObject;
  /** An id of the caller's choosing. Wire default `""`. */
  correlationId: string;
  /** How long the call may run, in seconds. Wire default `60`. */
  timeout: number;
  /** Whether to send each event as a `skill/event` while the skill runs. Wire default `true`. */
  streaming: boolean;
  /** An LLM provider to use instead of the skill's and the host's. Wire default `null`. */
  llmOverride: LlmChoice | null;
  /** Free-form data passed to the skill as `ctx.metadata`. Wire default `{}`. */
  metadata: JsonObject;
}

/**
 * Every request an agent may send, keyed by `type`.
 *
 * @example Look a request up by its type
 * ```ts
 * import type { RequestMap } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const deadline = (call: RequestMap["tool/call/req"]): number => call.timeout * 1000;
 * const parsed = parseMessage('{"type":"tool/call/req","id":"c1","tool_name":"echo","arguments":{}}');
 * assert.ok(parsed.ok && parsed.request.type === "tool/call/req");
 * assert.equal(deadline(parsed.request), 30_000);
 * ```
 */
export interface RequestMap {
  /** Opens the session: auth and capabilities. */
  "handshake/req": HandshakeRequest;
  /** Liveness check, answered with `pong`. */
  "ping": PingRequest;
  /** Drains in-flight work; no reply. */
  "shutdown": ShutdownRequest;
  /** Lists or searches tools. */
  "tool/list/req": ToolListRequest;
  /** Calls a tool. */
  "tool/call/req": ToolCallRequest;
  /** Lists toolkits. */
  "toolkit/list/req": ToolkitListRequest;
  /** Configures a toolkit for the session. */
  "toolkit/configure/req": ToolkitConfigureRequest;
  /** Lists skills. */
  "skill/discover/req": SkillDiscoverRequest;
  /** Calls a skill. */
  "skill/call/req": SkillCallRequest;
}

/**
 * The type of every message an agent may send.
 *
 * @example Tell a request type from any other message type
 * ```ts
 * import type { RequestType } from "./requests.ts";
 * import { parseMessage, REQUEST_SCHEMAS } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const isRequestType = (type: string): type is RequestType => Object.hasOwn(REQUEST_SCHEMAS, type);
 * assert.ok(isRequestType("skill/call/req"));
 * assert.ok(!isRequestType("skill/call/resp"));
 * const answer = parseMessage('{"type":"skill/call/resp","id":"x"}');
 * assert.ok(!answer.ok && answer.code === "invalid_message");
 * ```
 */
export type RequestType = keyof RequestMap;

/**
 * A parsed request of type `T`, defaults applied.
 *
 * @example Handle any parsed request
 * ```ts
 * import type { Request } from "./requests.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * function describe(request: Request): string {
 *   switch (request.type) {
 *     case "tool/call/req":
 *       return `call ${request.toolName}`;
 *     case "skill/call/req":
 *       return `run ${request.name}`;
 *     default:
 *       return request.type;
 *   }
 * }
 * const parsed = parseMessage('{"type":"tool/call/req","id":"c1","tool_name":"echo","arguments":{}}');
 * assert.ok(parsed.ok);
 * assert.equal(describe(parsed.request), "call echo");
 * ```
 */
export type Request<T extends RequestType = RequestType> = T extends RequestType
  ? RequestMap[T]
  : never;

/** A request as checked on the wire: snake_case, defaults applied. */
export type WireRequest<T extends RequestType = RequestType> = Wire<
  Request<T>
>;

/** A request to encode: the domain request without its envelope. */
export type RequestBody<T extends RequestType = RequestType> = T extends
  RequestType ? Omit<Request<T>, "id" | "version" | "ts"> : never;

/**
 * Encodes a domain request as a complete wire message (fresh envelope).
 *
 * @param request the request's type and camelCase fields
 * @returns the message, snake_case, ready to send
 * @example Encode a tool list request
 * ```ts
 * import { encodeRequest } from "./requests.ts";
 * import assert from "node:assert/strict";
 * const msg = encodeRequest({ type: "tool/list/req", filterKind: "", filterTags: ["csv"],
 *   query: "", includeDeferred: false });
 * assert.deepEqual(msg.filter_tags, ["csv"]);
 * assert.equal(msg.version, "1.0");
 * ```
 */
export function encodeRequest<T extends RequestType>(
  request: RequestBody<T>,
): Envelope & JsonObject {
  const fields: JsonObject = {};
  for (const [key, value] of Object.entries(request)) {
    if (key === "type") continue;
    // `llmOverride` is the one field holding a camelCase object; the
    // others (`arguments`, `config`, `metadata`) are the caller's data.
    fields[snakeName(key)] = key === "llmOverride" && isPlainObject(value)
      ? encodeLlmChoice(value as unknown as LlmChoice)
      : value;
  }
  return envelope(request.type, fields);
}
