/**
 * The zod schemas of every A2E request (the wire form with the Python SDK's
 * defaults, each typed against its request type in `requests.ts`, so the
 * two cannot drift apart) and {@link parseMessage}, the one place raw text
 * becomes a typed request or a precise wire error.
 *
 * Input is tolerant: optional fields may be missing (their defaults apply)
 * and unknown extra fields are ignored. Messages fresh from `JSON.parse` go
 * through a check derived once from the schemas (no zod run, no renaming
 * pass); anything it is unsure of goes to zod.
 *
 * @module
 */

import { z } from "zod";
import type { ErrorCode } from "./codes.ts";
import { PROTOCOL_VERSION } from "./envelope.ts";
import { isPlainObject, type JsonObject } from "./json.ts";
import type { Request, RequestType, WireRequest } from "./requests.ts";
import type { LLMConfig } from "./skill.ts";
import { camelName, fromWire } from "./wire_names.ts";

const str = () => z.string().default("");
const strList = () => z.array(z.string()).default([]);
const obj = () => z.record(z.string(), z.unknown());

const envelopeFields = {
  id: str(),
  version: z.string().optional(),
  ts: z.number().optional(),
};

/** `LLMConfig` as an agent sends it (`provider_config` may be `false`). */
const LLM_CONFIG: z.ZodType<LLMConfig> = z.object({
  provider_name: z.string(),
  provider_credentials: obj().default({}),
  provider_config: z.union([obj(), z.literal(false), z.null()]).default(false),
  is_default: z.boolean().default(false),
});

/**
 * The schemas of every message an agent may send, keyed by `type`: the wire
 * form with the Python SDK's defaults. Each is typed against its request
 * interface (`Wire<...>`), so the two cannot drift apart; the precompiled
 * check and the names are derived from them.
 */
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
    llm_override: LLM_CONFIG.nullable().default(null),
    metadata: obj().default({}),
  }),
};

// What the precompiled check returns when it cannot decide: zod must.
const UNSURE = Symbol("unsure");

// How a present value is checked: data read by one switch (checkField), so
// the call path runs one monomorphic function rather than a closure per
// field. `unsure` is anything this does not model exactly (objects,
// unions, literals, refinements other than a lower bound): zod judges
// those. (`type`, the one literal, was matched before the plan runs.)
type Kind =
  | "string"
  | "boolean"
  | "number"
  | "strings"
  | "record"
  | "unsure";

// One field of a request, derived from its zod schema: wire and domain
// names, how a present value is checked, and what a missing one becomes.
interface Field {
  readonly wire: string;
  readonly domain: string;
  readonly kind: Kind;
  readonly nullable: boolean;
  /** A number's lower bound (A2E's timeouts have no upper one). */
  readonly low: number;
  readonly lowIn: boolean;
  /** When missing: "default" (a fresh copy of `fallback`, as zod's), "omit", or "unsure" (required). */
  readonly missing: "default" | "omit" | "unsure";
  readonly fallback: unknown;
  /** Holds a nested wire object (renamed by decodeRequest). */
  readonly nested: boolean;
}

// A schema's zod 4 definition, typed by zod as a union its `type` narrows.
function defOf(schema: z.core.SomeType): z.core.$ZodTypes["_zod"]["def"] {
  return (schema as z.core.$ZodTypes)._zod.def;
}

function fieldOf(wire: string, schema: z.core.SomeType): Field {
  let def = defOf(schema);
  let missing: Field["missing"] = "unsure";
  let fallback: unknown;
  if (def.type === "default") {
    [missing, fallback, def] = [
      "default",
      def.defaultValue,
      defOf(def.innerType),
    ];
  } else if (def.type === "optional") {
    [missing, def] = ["omit", defOf(def.innerType)];
  }
  const nullable = def.type === "nullable";
  if (def.type === "nullable") def = defOf(def.innerType);
  const field = {
    wire,
    domain: camelName(wire),
    kind: "unsure" as Kind,
    nullable,
    low: -Infinity,
    lowIn: true,
    missing,
    fallback,
    nested: def.type === "object",
  };
  const checks = def.checks ?? [];
  switch (def.type) {
    case "string":
    case "boolean":
      if (checks.length === 0) field.kind = def.type;
      break;
    case "number":
      field.kind = "number";
      for (const { _zod: { def: check } } of checks) {
        const bound = check as z.core.$ZodCheckGreaterThanDef;
        if (check.check !== "greater_than" || typeof bound.value !== "number") {
          field.kind = "unsure";
        } else [field.low, field.lowIn] = [bound.value, bound.inclusive];
      }
      break;
    case "array":
      if (checks.length === 0 && defOf(def.element).type === "string") {
        field.kind = "strings";
      }
      break;
    case "record":
      if (
        defOf(def.keyType).type === "string" &&
        defOf(def.valueType).type === "unknown"
      ) field.kind = "record";
      break;
  }
  return field;
}

// A present value, checked as the field's schema would: the value (or zod's
// copy of it), or UNSURE.
function checkField(field: Field, value: unknown): unknown {
  if (value === null) return field.nullable ? null : UNSURE;
  switch (field.kind) {
    case "string":
      return typeof value === "string" ? value : UNSURE;
    case "boolean":
      return typeof value === "boolean" ? value : UNSURE;
    case "number":
      return typeof value === "number" && Number.isFinite(value) &&
          (field.lowIn ? value >= field.low : value > field.low)
        ? value
        : UNSURE;
    case "strings":
      return strings(value);
    case "record":
      return record(value);
    default:
      return UNSURE;
  }
}

// A missing value: its default (a fresh array or object each time, as zod
// clones them), nothing, or UNSURE for a required field.
function missingField(field: Field): unknown {
  if (field.missing === "omit") return undefined;
  if (field.missing === "unsure") return UNSURE;
  const fallback = field.fallback;
  if (typeof fallback !== "object" || fallback === null) return fallback;
  return Array.isArray(fallback) ? [...fallback] : { ...fallback };
}

// zod builds a new array of the checked elements.
function strings(value: unknown): unknown {
  if (!Array.isArray(value)) return UNSURE;
  for (const item of value) if (typeof item !== "string") return UNSURE;
  return value.slice();
}

// zod's record of a value from JSON.parse: a plain object, copied without a
// `__proto__` key (JSON.parse makes one an own property; zod skips it). It is
// otherwise handed on as is: nothing else holds it, and a copy would be equal.
function record(value: unknown): unknown {
  if (!isPlainObject(value)) return UNSURE;
  if (!Object.hasOwn(value, "__proto__")) return value;
  const copy: JsonObject = {};
  for (const key in value) if (key !== "__proto__") copy[key] = value[key];
  return copy;
}

// Every request type's fields, derived once from its schema.
const PLANS: { readonly [T in RequestType]: readonly Field[] } = Object
  .fromEntries(
    Object.entries(REQUEST_SCHEMAS).map(([type, schema]) => {
      const def = defOf(schema);
      const shape = def.type === "object" ? def.shape : {};
      return [
        type,
        Object.entries(shape)
          .filter(([wire]) => wire !== "type")
          .map(([wire, field]) => fieldOf(wire, field)),
      ];
    }),
  ) as { [T in RequestType]: Field[] };

const NESTED: ReadonlySet<string> = new Set(
  Object.values(PLANS).flat().filter((f) => f.nested).map((f) => f.wire),
);

/**
 * The precompiled check: a message fresh from `JSON.parse` whose `type` is a
 * known request type, checked and renamed in one pass over the fields
 * derived from its schema. It only ever accepts what zod accepts (and
 * decodes it equally: `request_schemas_test.ts` holds it to zod on fuzzed
 * messages); for anything else it answers `undefined` and zod judges.
 *
 * Only for values fresh from `JSON.parse` (plain objects and arrays, no
 * `undefined`, no getters): in-process callers go through zod.
 *
 * @param type the message's `type` (a known request type)
 * @param message the parsed message
 * @returns the domain request, or `undefined` when zod must decide
 * @example A tool call, then one zod must judge
 * ```ts
 * import { decodeRequestFast } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const ok = decodeRequestFast("tool/call/req", {
 *   type: "tool/call/req", id: "r1", tool_name: "echo", arguments: { a: 1 },
 * });
 * assert.equal(ok?.type === "tool/call/req" && ok.toolName, "echo");
 * assert.equal(ok?.type === "tool/call/req" && ok.timeout, 30);
 * assert.equal(decodeRequestFast("tool/call/req", { type: "tool/call/req", arguments: [] }), undefined);
 * ```
 */
export function decodeRequestFast<T extends RequestType>(
  type: T,
  message: JsonObject,
): Request<T> | undefined {
  // The caller found the schema by this very `type`.
  const out: JsonObject = { type };
  const fields = PLANS[type];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const raw = message[field.wire];
    const value = raw === undefined
      ? missingField(field)
      : checkField(field, raw);
    if (value === UNSURE) return undefined;
    if (value !== undefined) out[field.domain] = value;
  }
  // Every field was checked as its schema would.
  return out as unknown as Request<T>;
}

/**
 * Decodes a checked wire request into its domain request: only the names
 * change (a nested wire object, `llm_override`, is renamed too); values a
 * caller owns (`arguments`, `config`, `metadata`) pass through untouched.
 *
 * @param wire the request as its schema checked it (defaults applied)
 * @returns the camelCase request
 * @example Decode a tool call
 * ```ts
 * import { decodeRequest } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const r = decodeRequest({ type: "tool/call/req", id: "r1", tool_name: "echo",
 *   arguments: { some_arg: 1 }, session_id: "", correlation_id: "", streaming: false, timeout: 30 });
 * assert.equal(r.type === "tool/call/req" && r.toolName, "echo");
 * assert.deepEqual(r.type === "tool/call/req" && r.arguments, { some_arg: 1 });
 * ```
 */
export function decodeRequest<T extends RequestType>(
  wire: WireRequest<T> | (JsonObject & { type: T; id: string }),
): Request<T> {
  const out: JsonObject = {};
  const fields = wire as JsonObject;
  for (const key in fields) {
    const value = fields[key];
    out[camelName(key)] = NESTED.has(key) && isPlainObject(value)
      ? fromWire(value)
      : value;
  }
  return out as unknown as Request<T>;
}

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
 * import { parseMessage } from "./request_schemas.ts";
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
  return parseValue(value, true);
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
 * import { parseValue } from "./request_schemas.ts";
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
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    // `typeof null` is "object": name it, or the message contradicts itself.
    const what = value === null || value === undefined
      ? String(value)
      : Array.isArray(value)
      ? "an array"
      : `a ${typeof value}`;
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
  // A value fresh from JSON.parse may be decided by the precompiled check
  // (see decodeRequestFast); otherwise, and whenever that check is unsure,
  // the zod schema decides.
  if (json) {
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

// Every wrong element of a long array is an issue of its own: a config
// file of a million made a 73 MB message, 5 s to build. The first few say
// where to look; the rest are counted.
const MAX_DESCRIBED_ISSUES = 10;

/**
 * Describes a zod error as `field.path: problem` lines joined by `; `: the
 * first ten, then how many more there are.
 *
 * @param error the zod error
 * @returns a one-line description naming the first failing fields
 * @example Describe a wrong type, and many
 * ```ts
 * import { describeZodError } from "./request_schemas.ts";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const r = z.object({ a: z.number() }).safeParse({ a: "x" });
 * assert.ok(!r.success);
 * assert.match(describeZodError(r.error), /^a: /);
 * const many = z.array(z.number()).safeParse(Array(25).fill("x"));
 * assert.ok(!many.success);
 * assert.match(describeZodError(many.error), /^0: .*; 9: [^;]*; and 15 more$/);
 * ```
 */
export function describeZodError(error: z.ZodError): string {
  const { issues } = error;
  const described = issues.slice(0, MAX_DESCRIBED_ISSUES).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
  const more = issues.length - described.length;
  return described.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

/**
 * How much of a message's start {@link salvageId} searches: what a
 * transport keeps of an oversize one to answer it by id.
 */
export const SALVAGE_BYTES = 4096;

/**
 * Reads the `id` out of a message that cannot be parsed (broken JSON, or one
 * too large to parse): echoing it lets the client fail the right call instead
 * of timing out.
 *
 * @param raw the message text, or its start
 * @returns the id, or `""` when none can be read
 * @example Salvage an id from broken JSON
 * ```ts
 * import { salvageId } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * assert.equal(salvageId('{"type":"ping","id":"abc",'), "abc");
 * ```
 */
export function salvageId(raw: string): string {
  const match = /"id"\s*:\s*"([^"\\]{1,128})"/.exec(
    raw.slice(0, SALVAGE_BYTES),
  );
  return match?.[1] ?? "";
}
