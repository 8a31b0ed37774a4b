/**
 * The client's side of the protocol codec: its options become domain
 * requests, encoded by `protocol/requests.ts` with every default; the
 * answers are decoded by `protocol/responses.ts` into domain objects.
 *
 * @module
 */

import { SkillboxError } from "../protocol/errors.ts";
import {
  decodeError,
  decodeResponse,
  type HandshakeResponse,
  isEventType,
} from "../protocol/responses.ts";
import {
  type CallEvent,
  decodeEvent,
  type Tool,
  type Toolkit,
  type ToolOutcome,
} from "../protocol/tool.ts";
import {
  decodeLlmChoice,
  type Skill,
  type SkillOutcome,
  skillOutcome,
} from "../protocol/skill.ts";
import type { JsonObject } from "../protocol/plain_object.ts";
import { encodeRequest } from "../protocol/requests.ts";
import type { LlmOverride } from "./skills.ts";
import type { WireMessage } from "./types.ts";

export { isEventType };

/** What the client learns from `handshake/resp`. */
export type HandshakeInfo = HandshakeResponse;

/** Reads an event's `kind`, `data` and `seq`, with A2E's defaults. */
export function readEvent(message: WireMessage): CallEvent {
  return decodeEvent(message);
}

/** Turns an A2E `error` message into the {@link SkillboxError} it stands for. */
export function readError(message: WireMessage): SkillboxError {
  return decodeError(message);
}

/** Builds `handshake/req`. */
export function handshakeRequest(
  fields: { agentId: string; caps: string[]; token: string },
): WireMessage {
  return encodeRequest({
    type: "handshake/req",
    agentId: fields.agentId,
    agentCaps: fields.caps,
    authToken: fields.token,
  });
}

/** Reads `handshake/resp`. */
export function readHandshake(
  message: WireMessage,
  label: string,
): HandshakeInfo {
  return decodeResponse("handshake/req", message, label);
}

/** Builds `ping`. */
export function pingRequest(): WireMessage {
  return encodeRequest({ type: "ping" });
}

/** Reads `pong`'s `uptime_seconds`. */
export function readPong(message: WireMessage, label: string): number {
  return decodeResponse("ping", message, label).uptimeSeconds;
}

/** Builds `tool/list/req`. */
export function toolListRequest(
  options: {
    query?: string;
    tags?: string[];
    kind?: string;
    includeDeferred?: boolean;
  },
): WireMessage {
  return encodeRequest({
    type: "tool/list/req",
    filterKind: options.kind ?? "",
    filterTags: options.tags ?? [],
    query: options.query ?? "",
    includeDeferred: options.includeDeferred ?? false,
  });
}

/** Reads `tool/list/resp`. */
export function readToolList(message: WireMessage, label: string): Tool[] {
  return decodeResponse("tool/list/req", message, label).tools;
}

/** Builds `tool/call/req`. */
export function toolCallRequest(
  name: string,
  args: JsonObject,
  options: {
    sessionId: string;
    timeout: number;
    streaming: boolean;
    correlationId: string;
  },
): WireMessage {
  return encodeRequest({
    type: "tool/call/req",
    sessionId: options.sessionId,
    toolName: name,
    arguments: args,
    correlationId: options.correlationId,
    streaming: options.streaming,
    timeout: wireSeconds(options.timeout),
  });
}

/** Reads `tool/call/resp`'s outcome. */
export function readToolCall(
  message: WireMessage,
  label: string,
): ToolOutcome {
  return decodeResponse("tool/call/req", message, label).result;
}

/** Builds `toolkit/list/req`. */
export function toolkitListRequest(
  options: { tags?: string[]; kind?: string },
): WireMessage {
  return encodeRequest({
    type: "toolkit/list/req",
    filterKind: options.kind ?? "",
    filterTags: options.tags ?? [],
  });
}

/** Reads `toolkit/list/resp`. */
export function readToolkitList(
  message: WireMessage,
  label: string,
): Toolkit[] {
  return decodeResponse("toolkit/list/req", message, label).toolkits;
}

/** Builds `toolkit/configure/req`. */
export function toolkitConfigureRequest(
  name: string,
  config: JsonObject,
  options: { sessionId: string },
): WireMessage {
  return encodeRequest({
    type: "toolkit/configure/req",
    sessionId: options.sessionId,
    toolkitName: name,
    config,
  });
}

/** Reads `toolkit/configure/resp`; throws unless its status means success. */
export function readToolkitConfigure(
  message: WireMessage,
  label: string,
): void {
  const body = decodeResponse("toolkit/configure/req", message, label);
  if (body.status === "ok" || body.status === "configured") return;
  const why = body.message !== null && body.message !== ""
    ? body.message
    : "no detail";
  throw new SkillboxError(
    "runtime_error",
    `Cannot ${label}: status "${body.status}": ${why}`,
    { detail: { status: body.status, message: body.message } },
  );
}

/** Builds `skill/discover/req`. */
export function skillDiscoverRequest(
  options: { tags?: string[]; categories?: string[] },
): WireMessage {
  return encodeRequest({
    type: "skill/discover/req",
    filterTags: options.tags ?? [],
    filterCategories: options.categories ?? [],
  });
}

/** Reads `skill/discover/resp`. */
export function readSkillDiscover(
  message: WireMessage,
  label: string,
): Skill[] {
  return decodeResponse("skill/discover/req", message, label).skills;
}

/** Builds `skill/call/req` (which has no `session_id` on the wire). */
export function skillCallRequest(
  name: string,
  args: JsonObject,
  options: {
    timeout: number;
    streaming: boolean;
    llmOverride: LlmOverride | null;
    metadata: JsonObject;
    correlationId: string;
  },
): WireMessage {
  return encodeRequest({
    type: "skill/call/req",
    name,
    arguments: args,
    correlationId: options.correlationId,
    timeout: wireSeconds(options.timeout),
    streaming: options.streaming,
    llmOverride: options.llmOverride === null
      ? null
      : decodeLlmChoice({ ...options.llmOverride }),
    metadata: options.metadata,
  });
}

/**
 * Reads `skill/call/resp`'s outcome. When the host reported a failure in
 * `error` instead of a result, the outcome is built from it so callers
 * always get one shape.
 */
export function readSkillCall(
  message: WireMessage,
  label: string,
): SkillOutcome {
  const body = decodeResponse("skill/call/req", message, label);
  return body.result ?? skillOutcome({
    success: false,
    durationMs: 0,
    error: body.error?.message ?? "Skill answered without a result",
    errorCode: body.error?.code ?? "skill_error",
  });
}

// A2E timeouts are whole seconds; round up so a short limit never becomes 0.
function wireSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
