/**
 * The answer to every A2E request, as a camelCase body keyed by the request
 * type, and the codec of everything a host sends: answers, events and
 * errors. Handlers return these bodies; the dispatcher has them encoded here
 * (envelope and `req_id` added once), and the TS client and the in-process
 * caller decode the wire message back into the same body.
 *
 * @module
 */

import type { ErrorCode } from "./codes.ts";
import {
  type Envelope,
  envelope,
  newId,
  nowSeconds,
  PROTOCOL_VERSION,
} from "./envelope.ts";
import { SkillboxError, type WireError } from "./errors.ts";
import { isPlainObject, type JsonObject } from "./json.ts";
import { printableLine } from "./lines.ts";
import type { RequestType } from "./requests.ts";
import {
  decodeSkill,
  decodeSkillOutcome,
  encodeSkill,
  encodeSkillOutcome,
  type Skill,
  type SkillOutcome,
} from "./skill.ts";
import {
  type CallEvent,
  decodeTool,
  decodeToolkit,
  decodeToolOutcome,
  encodeTool,
  encodeToolkit,
  encodeToolOutcome,
  type Tool,
  type Toolkit,
  type ToolOutcome,
} from "./tool.ts";
import { wireEncoder } from "./wire_names.ts";
import { list, nullableStr, num, str } from "./_fields.ts";

/**
 * The body of `handshake/resp`.
 *
 * @example Accept a session, then read it as a client does
 * ```ts
 * import { decodeResponse, encodeResponse, type HandshakeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * function sessionOf(answer: HandshakeResponse): string {
 *   if (!answer.ok) throw new Error(`Refused: ${answer.reason}`);
 *   return answer.sessionId;
 * }
 * const wire = encodeResponse("handshake/req", "h1", {
 *   sessionId: "s1", acceptedCaps: ["tools"], maxParallel: 4, ok: true, reason: "",
 * });
 * // On the wire each accepted capability is an object.
 * assert.deepEqual(wire.accepted_caps, [{ capability: "tools", enabled: true, metadata: {} }]);
 * assert.equal(sessionOf(decodeResponse("handshake/req", wire)), "s1");
 * ```
 */
export interface HandshakeResponse {
  /** The session's id (hex uuid). */
  sessionId: string;
  /** The capabilities the host accepted (empty when refused). */
  acceptedCaps: string[];
  /** How many requests the session may run at once. */
  maxParallel: number;
  /** Whether the host accepted the handshake. */
  ok: boolean;
  /** Why it refused, or `""`. */
  reason: string;
}

/**
 * The body of `pong`.
 *
 * @example Read a host's uptime
 * ```ts
 * import { decodeResponse, type PongResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const pong: PongResponse = decodeResponse("ping", { type: "pong", req_id: "p1", uptime_seconds: 42.5 });
 * assert.equal(pong.uptimeSeconds, 42.5);
 * // A host that leaves it out reads as just started.
 * assert.equal(decodeResponse("ping", { type: "pong", req_id: "p2" }).uptimeSeconds, 0);
 * ```
 */
export interface PongResponse {
  /** How long the host has been up, in seconds. */
  uptimeSeconds: number;
}

/**
 * The body of `tool/list/resp`.
 *
 * @example List the tools an answer names, and what they take
 * ```ts
 * import { decodeResponse, encodeResponse, type ToolListResponse } from "./responses.ts";
 * import { tool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const summary = (list: ToolListResponse): string[] =>
 *   list.tools.map((t) => `${t.name}(${Object.keys(t.inputSchema.properties ?? {}).join(", ")})`);
 * const wire = encodeResponse("tool/list/req", "l1", {
 *   tools: [tool({ name: "echo", description: "Echo",
 *     inputSchema: { type: "object", properties: { text: { type: "string" } } } })],
 * });
 * assert.deepEqual(summary(decodeResponse("tool/list/req", wire)), ["echo(text)"]);
 * ```
 */
export interface ToolListResponse {
  /** The tools found, in the order the host chose. */
  tools: Tool[];
}

/**
 * The body of `tool/call/resp`.
 *
 * @example The outcome travels as `data`
 * ```ts
 * import { decodeResponse, encodeResponse, type ToolCallResponse } from "./responses.ts";
 * import { toolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const body: ToolCallResponse = {
 *   result: toolOutcome({ success: true, toolName: "echo", durationMs: 3, data: { text: "hi" } }),
 * };
 * const wire = encodeResponse("tool/call/req", "c1", body);
 * assert.deepEqual((wire.data as { data: unknown }).data, { text: "hi" });
 * assert.equal(wire.created_at, wire.ts);
 * const answer = decodeResponse("tool/call/req", wire);
 * assert.ok(answer.result.success);
 * assert.equal(answer.createdAt, wire.ts);
 * ```
 */
export interface ToolCallResponse {
  /** What the call produced (failures of the tool included). */
  result: ToolOutcome;
  /** When the answer was made, in Unix seconds. @default now, when encoded */
  createdAt?: number;
}

/**
 * The body of `toolkit/list/resp`.
 *
 * @example Find the toolkits still to configure
 * ```ts
 * import { decodeResponse, type ToolkitListResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const toConfigure = (list: ToolkitListResponse): string[] =>
 *   list.toolkits.filter((kit) => !kit.configured).map((kit) => kit.name);
 * const answer = decodeResponse("toolkit/list/req", {
 *   type: "toolkit/list/resp", req_id: "k1",
 *   toolkits: [{ name: "fs", configured: true }, { name: "github" }],
 * });
 * assert.deepEqual(toConfigure(answer), ["github"]);
 * ```
 */
export interface ToolkitListResponse {
  /** The toolkits found, sorted by name. */
  toolkits: Toolkit[];
}

/**
 * The body of `toolkit/configure/resp`.
 *
 * @example Fail when configuring failed
 * ```ts
 * import { decodeResponse, type ToolkitConfigureResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * function check(answer: ToolkitConfigureResponse): void {
 *   if (answer.status !== "ok") throw new Error(`Cannot configure "${answer.toolkitName}": ${answer.message}`);
 * }
 * // `status` reads as "ok" when a host leaves it out.
 * check(decodeResponse("toolkit/configure/req", { type: "toolkit/configure/resp", toolkit_name: "fs" }));
 * const refused = decodeResponse("toolkit/configure/req", {
 *   type: "toolkit/configure/resp", toolkit_name: "github", status: "error", message: "token: required",
 * });
 * assert.throws(() => check(refused), /Cannot configure "github": token: required/);
 * ```
 */
export interface ToolkitConfigureResponse {
  /** The toolkit named by the request. */
  toolkitName: string;
  /** `"ok"`, or `"error"` with a `message`. */
  status: string;
  /** Why configuring failed, or `null`. */
  message: string | null;
}

/**
 * The body of `skill/discover/resp`.
 *
 * @example Offer the skills found to a user
 * ```ts
 * import { decodeResponse, type SkillDiscoverResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const menu = (found: SkillDiscoverResponse): string[] =>
 *   found.skills.map((s) => `${s.name}: ${s.whenToUse || s.description}`);
 * const answer = decodeResponse("skill/discover/req", {
 *   type: "skill/discover/resp", req_id: "d1",
 *   skills: [{ name: "notes", description: "Take notes", when_to_use: "When asked to remember" }],
 * });
 * assert.deepEqual(menu(answer), ["notes: When asked to remember"]);
 * ```
 */
export interface SkillDiscoverResponse {
  /** The skills found, sorted by name. */
  skills: Skill[];
}

/**
 * Why a skill call got no result at all (e.g. an unknown skill).
 *
 * @example Turn it into an error to throw
 * ```ts
 * import { decodeResponse, type SkillCallError } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const toError = (error: SkillCallError): Error =>
 *   new Error(`${error.code}: ${error.message}`, { cause: error });
 * const answer = decodeResponse("skill/call/req", {
 *   type: "skill/call/resp", req_id: "s1", name: "nope", data: null,
 *   error: { error_code: "unknown_skill", message: 'No skill "nope"' },
 * });
 * assert.ok(answer.error !== null);
 * assert.equal(toError(answer.error).message, 'unknown_skill: No skill "nope"');
 * assert.equal(answer.error.retryable, false);
 * ```
 */
export interface SkillCallError {
  /** An A2E error code. */
  code: string;
  /** What went wrong. */
  message: string;
  /** Whether trying again may help. */
  retryable: boolean;
}

/**
 * The body of `skill/call/resp`: exactly one of `result` and `error` is set.
 *
 * @example Read what a skill returned
 * ```ts
 * import { decodeResponse, encodeResponse, type SkillCallResponse } from "./responses.ts";
 * import { skillOutcome } from "./skill.ts";
 * import assert from "node:assert/strict";
 * function dataOf(answer: SkillCallResponse): unknown {
 *   if (answer.error) throw new Error(answer.error.message);
 *   if (!answer.result?.success) throw new Error(answer.result?.error ?? "Skill failed");
 *   return answer.result.data;
 * }
 * const wire = encodeResponse("skill/call/req", "s1", {
 *   name: "notes", error: null, result: skillOutcome({ success: true, durationMs: 9, data: ["milk"] }),
 * });
 * assert.deepEqual(dataOf(decodeResponse("skill/call/req", wire)), ["milk"]);
 * ```
 */
export interface SkillCallResponse {
  /** The skill named by the request. */
  name: string;
  /** What the run produced (failures of the skill included), or `null`. */
  result: SkillOutcome | null;
  /** Why no run happened, or `null`. */
  error: SkillCallError | null;
  /** When the answer was made, in Unix seconds. @default now, when encoded */
  createdAt?: number;
}

/**
 * Every request type that gets an answer (`shutdown` gets none).
 *
 * @example Wait for an answer only where one comes
 * ```ts
 * import type { RequestType } from "./requests.ts";
 * import { type AnsweredRequestType, RESPONSE_TYPE } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const answered = (type: RequestType): type is AnsweredRequestType => Object.hasOwn(RESPONSE_TYPE, type);
 * assert.ok(answered("ping"));
 * assert.ok(!answered("shutdown"));
 * ```
 */
export type AnsweredRequestType = Exclude<RequestType, "shutdown">;

/**
 * The answer body of each request type.
 *
 * @example Type a request and its answer together
 * ```ts
 * import { encodeRequest, type RequestBody } from "./requests.ts";
 * import { type AnsweredRequestType, decodeResponse, encodeResponse, type ResponseMap } from "./responses.ts";
 * import type { JsonObject } from "./json.ts";
 * import assert from "node:assert/strict";
 * type Send = (message: JsonObject) => Promise<JsonObject>;
 * async function ask<T extends AnsweredRequestType>(send: Send, type: T, body: RequestBody<T>): Promise<ResponseMap[T]> {
 *   return decodeResponse(type, await send(encodeRequest(body)));
 * }
 * // A stand-in for a host that answers every ping.
 * const send: Send = (message) => Promise.resolve(encodeResponse("ping", String(message.id), { uptimeSeconds: 7 }));
 * const pong = await ask(send, "ping", { type: "ping" });
 * assert.equal(pong.uptimeSeconds, 7);
 * ```
 */
export interface ResponseMap {
  /** Answered with `handshake/resp`. */
  "handshake/req": HandshakeResponse;
  /** Answered with `pong`. */
  "ping": PongResponse;
  /** Answered with `tool/list/resp`. */
  "tool/list/req": ToolListResponse;
  /** Answered with `tool/call/resp`. */
  "tool/call/req": ToolCallResponse;
  /** Answered with `toolkit/list/resp`. */
  "toolkit/list/req": ToolkitListResponse;
  /** Answered with `toolkit/configure/resp`. */
  "toolkit/configure/req": ToolkitConfigureResponse;
  /** Answered with `skill/discover/resp`. */
  "skill/discover/req": SkillDiscoverResponse;
  /** Answered with `skill/call/resp`. */
  "skill/call/req": SkillCallResponse;
}

/** The wire type of the answer to each request type. */
export const RESPONSE_TYPE: { readonly [T in AnsweredRequestType]: string } = {
  "handshake/req": "handshake/resp",
  "ping": "pong",
  "tool/list/req": "tool/list/resp",
  "tool/call/req": "tool/call/resp",
  "toolkit/list/req": "toolkit/list/resp",
  "toolkit/configure/req": "toolkit/configure/resp",
  "skill/discover/req": "skill/discover/resp",
  "skill/call/req": "skill/call/resp",
};

/** A complete wire message: the envelope plus the type's snake_case fields. */
export type EncodedMessage = Envelope & Record<string, unknown>;

/** The event message types. */
export type EventType = "tool/event" | "skill/event" | "invoke/event";

// `now`: the message's `ts`, the default `created_at` (one clock read).
type Encoders = {
  readonly [T in AnsweredRequestType]: (
    body: ResponseMap[T],
    now: number,
  ) => JsonObject;
};

const ENCODERS: Encoders = {
  "handshake/req": (body) => ({
    session_id: body.sessionId,
    accepted_caps: body.acceptedCaps.map((capability) => ({
      capability,
      enabled: true,
      metadata: {},
    })),
    max_parallel: body.maxParallel,
    ok: body.ok,
    reason: body.reason,
  }),
  "ping": wireEncoder<PongResponse>({ uptimeSeconds: 0 }),
  "tool/list/req": (body) => ({ tools: body.tools.map(encodeTool) }),
  "tool/call/req": (body, now) => ({
    data: encodeToolOutcome(body.result),
    created_at: body.createdAt ?? now,
  }),
  "toolkit/list/req": (body) => ({
    toolkits: body.toolkits.map(encodeToolkit),
  }),
  "toolkit/configure/req": wireEncoder<ToolkitConfigureResponse>({
    toolkitName: "",
    status: "",
    message: null,
  }),
  "skill/discover/req": (body) => ({ skills: body.skills.map(encodeSkill) }),
  "skill/call/req": (body, now) => ({
    name: body.name,
    data: body.result && encodeSkillOutcome(body.result),
    error: body.error,
    created_at: body.createdAt ?? now,
  }),
};

/**
 * Encodes the answer to a request: its wire type, a fresh envelope,
 * `req_id`, and the body's fields in snake_case.
 *
 * @param type the request type answered
 * @param reqId the request's `id`
 * @param body the answer body
 * @returns the complete message
 * @example Encode a pong
 * ```ts
 * import { encodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const msg = encodeResponse("ping", "r1", { uptimeSeconds: 1.5 });
 * assert.equal(msg.type, "pong");
 * assert.equal(msg.req_id, "r1");
 * assert.equal(msg.uptime_seconds, 1.5);
 * ```
 */
export function encodeResponse<T extends AnsweredRequestType>(
  type: T,
  reqId: string,
  body: ResponseMap[T],
): EncodedMessage {
  const encode = ENCODERS[type] as (
    body: ResponseMap[T],
    now: number,
  ) => JsonObject;
  const now = nowSeconds();
  // One object, built once: every answer passes here, and spreading the
  // fields into an envelope that is then spread again copied them twice.
  const message: EncodedMessage = {
    type: RESPONSE_TYPE[type],
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: now,
    req_id: reqId,
  };
  const fields = encode(body, now);
  for (const key in fields) message[key] = fields[key];
  return message;
}

type Decoders = {
  readonly [T in AnsweredRequestType]: (
    message: JsonObject,
    fail: (why: string) => never,
  ) => ResponseMap[T];
};

const DECODERS: Decoders = {
  "handshake/req": (m) => ({
    sessionId: str(m.session_id),
    acceptedCaps: list(m.accepted_caps)
      .flatMap((cap) =>
        isPlainObject(cap) && typeof cap.capability === "string" &&
          cap.enabled !== false
          ? [cap.capability]
          : []
      ),
    maxParallel: typeof m.max_parallel === "number" ? m.max_parallel : 4,
    ok: m.ok !== false,
    reason: str(m.reason),
  }),
  "ping": (m) => ({
    uptimeSeconds: typeof m.uptime_seconds === "number" ? m.uptime_seconds : 0,
  }),
  "tool/list/req": (m, fail) => ({
    tools: objects(m, "tools", fail).map(decodeTool),
  }),
  "tool/call/req": (m, fail) => {
    const data = isPlainObject(m.data)
      ? m.data
      : fail('the answer has no "data" object');
    return {
      result: decodeToolOutcome(data),
      createdAt: num(m.created_at),
    };
  },
  "toolkit/list/req": (m, fail) => ({
    toolkits: objects(m, "toolkits", fail).map(decodeToolkit),
  }),
  "toolkit/configure/req": (m) => ({
    toolkitName: str(m.toolkit_name),
    status: str(m.status, "ok"),
    message: nullableStr(m.message),
  }),
  "skill/discover/req": (m, fail) => ({
    skills: objects(m, "skills", fail).map(decodeSkill),
  }),
  "skill/call/req": (m) => ({
    name: str(m.name),
    result: isPlainObject(m.data) ? decodeSkillOutcome(m.data) : null,
    error: isPlainObject(m.data) ? null : decodeSkillCallError(m.error),
    createdAt: num(m.created_at),
  }),
};

/**
 * Decodes the answer to a request back into its body, checking that it is
 * the expected message type and filling the A2E defaults.
 *
 * @param type the request type that was sent
 * @param message the answer as received
 * @param label what was being done, for the error message (`"list tools"`)
 * @returns the answer body
 * @throws {SkillboxError} `invalid_message` when the answer is of another
 *   type or lacks what the body needs
 * @example Decode a tool list
 * ```ts
 * import { decodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const body = decodeResponse("tool/list/req", {
 *   type: "tool/list/resp", req_id: "r", tools: [{ name: "echo", description: "Echo" }],
 * });
 * assert.equal(body.tools[0]?.name, "echo");
 * assert.throws(() => decodeResponse("ping", { type: "error" }), /expected "pong"/);
 * ```
 */
export function decodeResponse<T extends AnsweredRequestType>(
  type: T,
  message: JsonObject,
  label = `read "${RESPONSE_TYPE[type]}"`,
): ResponseMap[T] {
  const fail = (why: string): never => {
    throw new SkillboxError("invalid_message", `Cannot ${label}: ${why}`);
  };
  const expected = RESPONSE_TYPE[type];
  if (message.type !== expected) {
    // A hostile host's `type` may be an object String() refuses, or hold
    // escape sequences for the terminal that shows this message.
    const got = typeof message.type === "string"
      ? printableLine(JSON.stringify(message.type))
      : "no type";
    fail(`expected "${expected}", got ${got}`);
  }
  const decode = DECODERS[type] as Decoders[T];
  return decode(message, fail) as ResponseMap[T];
}

/**
 * Encodes one event of a call.
 *
 * @param type `tool/event`, `skill/event` or `invoke/event`
 * @param reqId the call's request id, or `null` for a push event
 * @param event the event
 * @returns the complete message
 * @example
 * ```ts
 * import { encodeEvent } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const msg = encodeEvent("tool/event", "r1", { kind: "progress", data: { pct: 5 }, seq: 0 });
 * assert.equal(msg.req_id, "r1");
 * assert.equal(msg.kind, "progress");
 * assert.ok(!("req_id" in encodeEvent("invoke/event", null, { kind: "x", data: {}, seq: 1 })));
 * ```
 */
export function encodeEvent(
  type: EventType,
  reqId: string | null,
  event: CallEvent,
): EncodedMessage {
  const fields = { kind: event.kind, data: event.data, seq: event.seq };
  return reqId === null
    ? envelope(type, fields)
    : envelope(type, { req_id: reqId, ...fields });
}

/**
 * Tells whether a message type is a streamed event (`*\/event`).
 *
 * @param type the message's `type`
 * @returns true for an event type
 * @example
 * ```ts
 * import { isEventType } from "./responses.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isEventType("skill/event") && !isEventType("skill/call/resp"));
 * ```
 */
export function isEventType(type: unknown): boolean {
  return typeof type === "string" && type.endsWith("/event");
}

/**
 * Encodes an A2E `error`, every required field set.
 *
 * @param reqId the `id` of the request it answers (`""` when unknown)
 * @param error the code and message, plus optional detail and retryable
 * @param capabilityName the capability that failed (`""` for core errors)
 * @returns the complete message
 * @example
 * ```ts
 * import { encodeError } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const msg = encodeError("r1", { code: "parse_error", message: "Bad" });
 * assert.deepEqual(msg.detail, {});
 * assert.equal(msg.retryable, false);
 * ```
 */
export function encodeError(
  reqId: string,
  error: Pick<WireError, "code" | "message"> & Partial<WireError>,
  capabilityName = "",
): EncodedMessage {
  return envelope("error", {
    req_id: reqId,
    code: error.code,
    message: error.message,
    detail: error.detail ?? {},
    retryable: error.retryable ?? false,
    capability_name: capabilityName,
  });
}

/**
 * Decodes an A2E `error` into the {@link SkillboxError} it stands for.
 * Codes newer than this side knows are kept verbatim.
 *
 * @param message the error as received
 * @returns the error, to throw
 * @example
 * ```ts
 * import { decodeError } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const e = decodeError({ type: "error", code: "unknown_tool", message: "No tool" });
 * assert.equal(e.code, "unknown_tool");
 * ```
 */
export function decodeError(message: JsonObject): SkillboxError {
  // An empty string says no more than a missing field.
  const code = (str(message.code) || "runtime_error") as ErrorCode;
  // Shown as it came, but one printable line: a hostile host's escape
  // sequences or bidi overrides must not act on the terminal showing it.
  const text = printableLine(
    str(message.message) || `Host answered error "${code}"`,
  );
  return new SkillboxError(code, text, {
    retryable: message.retryable === true,
    detail: isPlainObject(message.detail) ? message.detail : {},
  });
}

function decodeSkillCallError(value: unknown): SkillCallError {
  const error = isPlainObject(value) ? value : {};
  const code = error.code ?? error.error_code;
  return {
    code: str(code, "skill_error"),
    message: str(error.message, "Skill answered without a result"),
    retryable: error.retryable === true,
  };
}

function objects(
  message: JsonObject,
  field: string,
  fail: (why: string) => never,
): JsonObject[] {
  const value = message[field];
  if (!Array.isArray(value) || !value.every(isPlainObject)) {
    fail(`"${field}" is not a list of objects`);
  }
  return value as JsonObject[];
}
