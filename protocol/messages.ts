/**
 * Every A2E v1.0 message an agent may send, as zod schemas of the wire form
 * with the Python SDK's defaults, and {@link parseMessage}, the one place raw
 * text becomes a typed (camelCase, via `request_codec.ts`) request or a
 * precise wire error.
 *
 * Input is tolerant: optional fields may be missing (their defaults apply)
 * and unknown extra fields are ignored. Answers are encoded by `codec.ts`.
 *
 * @module
 */

import { z } from "zod";
import { PROTOCOL_VERSION } from "./envelope.ts";
import type { ErrorCode } from "./codes.ts";

import type { LLMConfig } from "./models.ts";
import type { Request, RequestType } from "./requests.ts";
import { decodeRequest, type WireRequest } from "./request_codec.ts";
import { decodeRequestFast } from "./request_codec_fast.ts";

export type {
  HandshakeRequest,
  PingRequest,
  Request,
  RequestEnvelope,
  RequestMap,
  RequestType,
  ShutdownRequest,
  SkillCallRequest,
  SkillDiscoverRequest,
  ToolCallRequest,
  ToolkitConfigureRequest,
  ToolkitListRequest,
  ToolListRequest,
} from "./requests.ts";

const str = () => z.string().default("");
const strList = () => z.array(z.string()).default([]);
const obj = () => z.record(z.string(), z.unknown());

const envelopeFields = {
  id: str(),
  version: z.string().optional(),
  ts: z.number().optional(),
};

/** `LLMConfig` as an agent sends it (`provider_config` may be `false`). */
export const LlmConfigSchema: z.ZodType<LLMConfig> = z.object({
  provider_name: z.string(),
  provider_credentials: obj().default({}),
  provider_config: z.union([obj(), z.literal(false), z.null()]).default(false),
  is_default: z.boolean().default(false),
});

/** The schemas of every message an agent may send, keyed by `type`. */
export const REQUEST_SCHEMAS: {
  readonly [T in RequestType]: z.ZodType<WireRequest<T>>;
} = {
  "handshake/req": z.object({
    ...envelopeFields,
    type: z.literal("handshake/req"),
    agent_id: str(),
    agent_caps: strList(),
    auth_token: z.string().nullable().default(""),
  }),
  "ping": z.object({ ...envelopeFields, type: z.literal("ping") }),
  "shutdown": z.object({
    ...envelopeFields,
    type: z.literal("shutdown"),
    timeout: z.number().nonnegative().default(10),
  }),
  "tool/list/req": z.object({
    ...envelopeFields,
    type: z.literal("tool/list/req"),
    filter_kind: str(),
    filter_tags: strList(),
    query: str(),
    include_deferred: z.boolean().default(false),
  }),
  "tool/call/req": z.object({
    ...envelopeFields,
    type: z.literal("tool/call/req"),
    session_id: str(),
    tool_name: str(),
    arguments: obj(),
    correlation_id: str(),
    streaming: z.boolean().default(false),
    timeout: z.number().positive().default(30),
  }),
  "toolkit/list/req": z.object({
    ...envelopeFields,
    type: z.literal("toolkit/list/req"),
    filter_kind: str(),
    filter_tags: strList(),
  }),
  "toolkit/configure/req": z.object({
    ...envelopeFields,
    type: z.literal("toolkit/configure/req"),
    session_id: str(),
    toolkit_name: str(),
    config: obj().default({}),
  }),
  "skill/discover/req": z.object({
    ...envelopeFields,
    type: z.literal("skill/discover/req"),
    filter_tags: strList(),
    filter_categories: strList(),
  }),
  "skill/call/req": z.object({
    ...envelopeFields,
    type: z.literal("skill/call/req"),
    name: str(),
    arguments: obj().default({}),
    correlation_id: str(),
    timeout: z.number().positive().default(60),
    streaming: z.boolean().default(true),
    llm_override: LlmConfigSchema.nullable().default(null),
    metadata: obj().default({}),
  }),
};

/** Message types a host sends; an agent sending one gets `invalid_message`. */
export const RESPONSE_TYPES: readonly string[] = [
  "handshake/resp",
  "pong",
  "error",
  "invoke/event",
  "tool/list/resp",
  "tool/event",
  "tool/call/resp",
  "toolkit/list/resp",
  "toolkit/configure/resp",
  "skill/discover/resp",
  "skill/event",
  "skill/call/resp",
];

/** Why a raw message could not become a request. */
export interface ParseFailure {
  ok: false;
  code: ErrorCode;
  message: string;
  /** The raw message's `id` when it could be read, else `""`. */
  reqId: string;
  /** The raw `type` when it could be read. */
  type?: string;
}

/** A request ready for dispatch. */
export interface ParseSuccess {
  ok: true;
  request: Request;
}

/**
 * Parses one raw message (a WebSocket frame, an HTTP body, an NDJSON line).
 *
 * @param raw the text of one message
 * @returns the typed request, or the A2E error code and a message naming
 *   what is wrong (the field path for schema violations)
 * @example Parse a ping, then garbage
 * ```ts
 * import { parseMessage } from "./messages.ts";
 * import assert from "node:assert/strict";
 * const ok = parseMessage('{"type":"ping","id":"a1"}');
 * assert.ok(ok.ok && ok.request.type === "ping");
 * const bad = parseMessage("{nope");
 * assert.ok(!bad.ok && bad.code === "parse_error");
 * ```
 */
export function parseMessage(raw: string): ParseSuccess | ParseFailure {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      code: "parse_error",
      message: `Cannot parse message: ${(error as Error).message}`,
      reqId: salvageId(raw),
    };
  }
  return checkValue(value, true);
}

/**
 * Validates an already-decoded JSON value as a request.
 *
 * @param value the decoded message
 * @param json whether it is made only of what `JSON.parse` makes (plain
 *   objects and arrays, strings, finite numbers, booleans, null, no
 *   `undefined`), as a message decoded from JSON and rebuilt of its parts
 *   is: it is then checked as a parsed message is, by the precompiled
 *   check first. @default false
 * @returns the typed request or the failure
 * @example Reject a JSON array; take a call
 * ```ts
 * import { parseValue } from "./messages.ts";
 * import assert from "node:assert/strict";
 * const r = parseValue([1, 2]);
 * assert.ok(!r.ok && r.code === "invalid_message");
 * const call = { type: "tool/call/req", id: "c1", tool_name: "echo", arguments: {} };
 * const ok = parseValue(call, true);
 * assert.ok(ok.ok && ok.request.type === "tool/call/req");
 * ```
 */
export function parseValue(
  value: unknown,
  json = false,
): ParseSuccess | ParseFailure {
  return checkValue(value, json);
}

// `fromJson`: the value is fresh from JSON.parse, so the precompiled check
// may decide it (see request_codec_fast.ts); otherwise, and whenever that
// check is unsure, the zod schema decides.
function checkValue(
  value: unknown,
  fromJson: boolean,
): ParseSuccess | ParseFailure {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const what = Array.isArray(value) ? "an array" : typeof value;
    return {
      ok: false,
      code: "invalid_message",
      message: `Cannot accept message: expected a JSON object, got ${what}`,
      reqId: "",
    };
  }
  const record = value as Record<string, unknown>;
  const reqId = typeof record.id === "string" ? record.id : "";
  const type = record.type;
  if (typeof type !== "string" || type === "") {
    return {
      ok: false,
      code: "invalid_message",
      message: 'Cannot accept message: missing string field "type"',
      reqId,
    };
  }
  if (
    typeof record.version === "string" && record.version !== PROTOCOL_VERSION
  ) {
    return {
      ok: false,
      code: "version_mismatch",
      message:
        `Cannot accept message: version "${record.version}" is not "${PROTOCOL_VERSION}"`,
      reqId,
      type,
    };
  }
  if (!Object.hasOwn(REQUEST_SCHEMAS, type)) {
    return {
      ok: false,
      code: "invalid_message",
      message: `Cannot accept message: unknown type "${type}"`,
      reqId,
      type,
    };
  }
  if (fromJson) {
    const request = decodeRequestFast(type as RequestType, record);
    if (request !== undefined) return { ok: true, request };
  }
  const schema: z.ZodType<WireRequest> = REQUEST_SCHEMAS[type as RequestType];
  const parsed = schema.safeParse(record);
  if (!parsed.success) {
    return {
      ok: false,
      code: "schema_violation",
      message: `Invalid "${type}": ${describeZodError(parsed.error)}`,
      reqId,
      type,
    };
  }
  return { ok: true, request: decodeRequest(parsed.data) };
}

/**
 * Describes a zod error as `field.path: problem` lines joined by `; `.
 *
 * @param error the zod error
 * @returns a one-line description naming every failing field
 * @example Describe a wrong type
 * ```ts
 * import { describeZodError } from "./messages.ts";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const r = z.object({ a: z.number() }).safeParse({ a: "x" });
 * assert.ok(!r.success);
 * assert.match(describeZodError(r.error), /^a: /);
 * ```
 */
export function describeZodError(error: z.ZodError): string {
  return error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "(root)";
    return `${path}: ${issue.message}`;
  }).join("; ");
}

/**
 * Reads the `id` out of a message that cannot be parsed (broken JSON, or one
 * too large to parse): echoing it lets the client fail the right call instead
 * of timing out.
 *
 * @param raw the message text, or its start
 * @returns the id, or `""` when none can be read
 * @example Salvage an id from broken JSON
 * ```ts
 * import { salvageId } from "./messages.ts";
 * import assert from "node:assert/strict";
 * assert.equal(salvageId('{"type":"ping","id":"abc",'), "abc");
 * ```
 */
export function salvageId(raw: string): string {
  const match = /"id"\s*:\s*"([^"\\]{1,128})"/.exec(raw.slice(0, 4096));
  return match?.[1] ?? "";
}
