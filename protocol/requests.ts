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

/** The envelope fields as an agent may send them (all optional on input). */
export interface RequestEnvelope {
  /** The request id; `""` when the agent sent none. */
  id: string;
  /** The protocol version the agent claims (`"1.0"`), when it sent one. */
  version?: string;
  /** When the agent sent it, in Unix seconds (float), when it sent one. */
  ts?: number;
}

/** `handshake/req`. */
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

/** `ping`. */
export interface PingRequest extends RequestEnvelope {
  /** Always `"ping"`. */
  type: "ping";
}

/** `shutdown`: drain in-flight work within `timeout` seconds. */
export interface ShutdownRequest extends RequestEnvelope {
  /** Always `"shutdown"`. */
  type: "shutdown";
  /** How long to let in-flight work finish, in seconds. Wire default `10`. */
  timeout: number;
}

/** `tool/list/req`: list mode when `query` is empty, else search mode. */
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

/** `tool/call/req`. */
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

/** `toolkit/list/req`. */
export interface ToolkitListRequest extends RequestEnvelope {
  /** Always `"toolkit/list/req"`. */
  type: "toolkit/list/req";
  /** An origin (`builtin`, `file`) or a category; `""` for any. Wire default `""`. */
  filterKind: string;
  /** Tags a toolkit must all carry (case-insensitive). Wire default `[]`. */
  filterTags: string[];
}

/** `toolkit/configure/req`. */
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

/** `skill/discover/req`. */
export interface SkillDiscoverRequest extends RequestEnvelope {
  /** Always `"skill/discover/req"`. */
  type: "skill/discover/req";
  /** Tags a skill must all carry (case-insensitive). Wire default `[]`. */
  filterTags: string[];
  /** Categories a skill's `category` must all equal (case-insensitive). Wire default `[]`. */
  filterCategories: string[];
}

/** `skill/call/req` (it carries no `session_id`). */
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

/** Every request an agent may send, keyed by `type`. */
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

/** The type of every message an agent may send. */
export type RequestType = keyof RequestMap;

/** A parsed request of type `T`, defaults applied. */
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
