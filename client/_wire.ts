/**
 * The one place the client converts between its camelCase options and A2E's
 * snake_case messages: builders for every request (complete, with every
 * default, via `envelope()`), and readers that check an answer's type and
 * fill the defaults of what it carries.
 *
 * @module
 */

import { SkillboxError } from "../protocol/errors.ts";
import type { ErrorCode } from "../protocol/codes.ts";
import { envelope } from "../protocol/envelope.ts";
import {
  type CallEvent,
  type JsonObject,
  type LLMConfig,
  type SkillDefinition,
  skillDefinition,
  type SkillResult,
  skillResult,
  type ToolDefinition,
  toolDefinition,
  type ToolkitDefinition,
  toolkitDefinition,
  type ToolResult,
  toolResult,
} from "../protocol/models.ts";
import type { LlmOverride } from "./skills.ts";
import type { WireMessage } from "./types.ts";

/** What the client learns from `handshake/resp`. */
export interface HandshakeInfo {
  ok: boolean;
  reason: string;
  sessionId: string;
  acceptedCaps: string[];
  maxParallel: number;
}

/** Whether a message type is a streamed event (`tool/event`, `invoke/event`...). */
export function isEventType(type: unknown): boolean {
  return typeof type === "string" && type.endsWith("/event");
}

/** Reads an event's `kind`, `data` and `seq`, with A2E's defaults. */
export function readEvent(message: WireMessage): CallEvent {
  return {
    kind: typeof message.kind === "string" ? message.kind : "status",
    data: isObject(message.data) ? message.data : {},
    seq: typeof message.seq === "number" ? message.seq : 0,
  };
}

/** Turns an A2E `error` message into the {@link SkillboxError} it stands for. */
export function readError(message: WireMessage): SkillboxError {
  // The host may use codes newer than this client; keep them verbatim.
  const code =
    (typeof message.code === "string" && message.code !== ""
      ? message.code
      : "runtime_error") as ErrorCode;
  const text = typeof message.message === "string" && message.message !== ""
    ? message.message
    : `Host answered error "${code}"`;
  return new SkillboxError(code, text, {
    retryable: message.retryable === true,
    detail: isObject(message.detail) ? message.detail : {},
  });
}

/** Builds `handshake/req`. */
export function handshakeRequest(
  fields: { agentId: string; caps: string[]; token: string },
): WireMessage {
  return envelope("handshake/req", {
    agent_id: fields.agentId,
    agent_caps: fields.caps,
    auth_token: fields.token,
  });
}

/** Reads `handshake/resp`. */
export function readHandshake(
  message: WireMessage,
  label: string,
): HandshakeInfo {
  expectType(message, "handshake/resp", label);
  const caps = Array.isArray(message.accepted_caps)
    ? message.accepted_caps
    : [];
  return {
    ok: message.ok !== false,
    reason: typeof message.reason === "string" ? message.reason : "",
    sessionId: typeof message.session_id === "string" ? message.session_id : "",
    acceptedCaps: caps.flatMap((cap) =>
      isObject(cap) && typeof cap.capability === "string" &&
        cap.enabled !== false
        ? [cap.capability]
        : []
    ),
    maxParallel: typeof message.max_parallel === "number"
      ? message.max_parallel
      : 4,
  };
}

/** Builds `ping`. */
export function pingRequest(): WireMessage {
  return envelope("ping", {});
}

/** Reads `pong`'s `uptime_seconds`. */
export function readPong(message: WireMessage, label: string): number {
  expectType(message, "pong", label);
  return typeof message.uptime_seconds === "number"
    ? message.uptime_seconds
    : 0;
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
  return envelope("tool/list/req", {
    filter_kind: options.kind ?? "",
    filter_tags: options.tags ?? [],
    query: options.query ?? "",
    include_deferred: options.includeDeferred ?? false,
  });
}

/** Reads `tool/list/resp`. */
export function readToolList(
  message: WireMessage,
  label: string,
): ToolDefinition[] {
  expectType(message, "tool/list/resp", label);
  return listOf(message, "tools", label).map((tool) =>
    toolDefinition(tool as Pick<ToolDefinition, "name" | "description">)
  );
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
  return envelope("tool/call/req", {
    session_id: options.sessionId,
    tool_name: name,
    arguments: args,
    correlation_id: options.correlationId,
    streaming: options.streaming,
    timeout: wireSeconds(options.timeout),
  });
}

/** Reads `tool/call/resp`'s {@link ToolResult}. */
export function readToolCall(message: WireMessage, label: string): ToolResult {
  expectType(message, "tool/call/resp", label);
  if (!isObject(message.data)) {
    throw invalid(label, 'the answer has no "data" object');
  }
  return toolResult(
    message.data as Pick<ToolResult, "success" | "tool_name" | "duration_ms">,
  );
}

/** Builds `toolkit/list/req`. */
export function toolkitListRequest(
  options: { tags?: string[]; kind?: string },
): WireMessage {
  return envelope("toolkit/list/req", {
    filter_kind: options.kind ?? "",
    filter_tags: options.tags ?? [],
  });
}

/** Reads `toolkit/list/resp`. */
export function readToolkitList(
  message: WireMessage,
  label: string,
): ToolkitDefinition[] {
  expectType(message, "toolkit/list/resp", label);
  return listOf(message, "toolkits", label).map((kit) =>
    toolkitDefinition(kit as Pick<ToolkitDefinition, "name" | "tools">)
  );
}

/** Builds `toolkit/configure/req`. */
export function toolkitConfigureRequest(
  name: string,
  config: JsonObject,
  options: { sessionId: string },
): WireMessage {
  return envelope("toolkit/configure/req", {
    session_id: options.sessionId,
    toolkit_name: name,
    config,
  });
}

/** Reads `toolkit/configure/resp`; throws unless its status means success. */
export function readToolkitConfigure(
  message: WireMessage,
  label: string,
): void {
  expectType(message, "toolkit/configure/resp", label);
  const status = typeof message.status === "string" ? message.status : "ok";
  if (status === "ok" || status === "configured") return;
  const why = typeof message.message === "string" && message.message !== ""
    ? message.message
    : "no detail";
  throw new SkillboxError(
    "runtime_error",
    `Cannot ${label}: status "${status}": ${why}`,
    { detail: { status, message: message.message ?? null } },
  );
}

/** Builds `skill/discover/req`. */
export function skillDiscoverRequest(
  options: { tags?: string[]; categories?: string[] },
): WireMessage {
  return envelope("skill/discover/req", {
    filter_tags: options.tags ?? [],
    filter_categories: options.categories ?? [],
  });
}

/** Reads `skill/discover/resp`. */
export function readSkillDiscover(
  message: WireMessage,
  label: string,
): SkillDefinition[] {
  expectType(message, "skill/discover/resp", label);
  return listOf(message, "skills", label).map((skill) =>
    skillDefinition(skill as Pick<SkillDefinition, "name" | "description">)
  );
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
  const override: LLMConfig | null = options.llmOverride === null
    ? null
    : { provider_config: false, is_default: false, ...options.llmOverride };
  return envelope("skill/call/req", {
    name,
    arguments: args,
    correlation_id: options.correlationId,
    timeout: wireSeconds(options.timeout),
    streaming: options.streaming,
    llm_override: override,
    metadata: options.metadata,
  });
}

/**
 * Reads `skill/call/resp`'s {@link SkillResult}. When `data` is null the
 * host reported the failure in `error` instead; the result is built from it
 * so callers always get one shape.
 */
export function readSkillCall(
  message: WireMessage,
  label: string,
): SkillResult {
  expectType(message, "skill/call/resp", label);
  if (isObject(message.data)) {
    return skillResult(
      message.data as Pick<SkillResult, "success" | "duration_ms">,
    );
  }
  const error = isObject(message.error) ? message.error : {};
  const code = error.code ?? error.error_code;
  return skillResult({
    success: false,
    duration_ms: 0,
    error: typeof error.message === "string"
      ? error.message
      : `Skill answered without a result`,
    error_code: typeof code === "string" ? code : "skill_error",
  });
}

// A2E timeouts are whole seconds; round up so a short limit never becomes 0.
function wireSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function expectType(message: WireMessage, type: string, label: string): void {
  if (message.type !== type) {
    throw invalid(label, `expected "${type}", got "${String(message.type)}"`);
  }
}

function listOf(
  message: WireMessage,
  field: string,
  label: string,
): JsonObject[] {
  const value = message[field];
  if (!Array.isArray(value) || !value.every(isObject)) {
    throw invalid(label, `"${field}" is not a list of objects`);
  }
  return value;
}

function invalid(label: string, why: string): SkillboxError {
  return new SkillboxError("invalid_message", `Cannot ${label}: ${why}`);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
