/**
 * The precompiled request check: the zod schemas of `messages.ts` restated
 * as one table per request type, read by one loop that checks a message
 * parsed from JSON text and builds its camelCase domain request in the same
 * pass (no zod run, no intermediate wire object, no renaming pass).
 *
 * It only ever accepts: for anything it is not sure of (a wrong type, a
 * value out of range, an `llm_override` object) it answers `undefined`, and
 * the caller runs the zod schema, which then rejects with its precise
 * message or accepts. `request_codec_fast_test.ts` runs both on valid,
 * invalid and fuzzed messages and asserts that whenever this accepts, zod
 * accepts too and decodes to an equal request.
 *
 * Only for values fresh from `JSON.parse` (plain objects and arrays, no
 * `undefined`, no symbols, no getters): in-process callers go through zod.
 *
 * @module
 */

import type { JsonObject } from "./domain.ts";
import type { Request, RequestType } from "./requests.ts";

// How one field is checked, and its default when missing (zod's
// `.default()`; a fresh array or object each time, as zod clones them).
type Kind =
  | "str" // z.string().default("")
  | "strs" // z.array(z.string()).default([])
  | "token" // z.string().nullable().default("")
  | "bool" // z.boolean().default(fallback)
  | "positive" // z.number().positive().default(fallback)
  | "nonnegative" // z.number().nonnegative().default(fallback)
  | "record" // z.record(z.string(), z.unknown()), required
  | "record?" // the same, .default({})
  | "llm"; // LlmConfigSchema.nullable().default(null): only null here

// One field: wire name, domain name, kind, and the default of bool/number.
type Field = readonly [
  wire: string,
  domain: string,
  kind: Kind,
  fallback?: unknown,
];

const FIELDS: { readonly [T in RequestType]: readonly Field[] } = {
  "handshake/req": [
    ["agent_id", "agentId", "str"],
    ["agent_caps", "agentCaps", "strs"],
    ["auth_token", "authToken", "token"],
  ],
  "ping": [],
  "shutdown": [["timeout", "timeout", "nonnegative", 10]],
  "tool/list/req": [
    ["filter_kind", "filterKind", "str"],
    ["filter_tags", "filterTags", "strs"],
    ["query", "query", "str"],
    ["include_deferred", "includeDeferred", "bool", false],
  ],
  "tool/call/req": [
    ["session_id", "sessionId", "str"],
    ["tool_name", "toolName", "str"],
    ["arguments", "arguments", "record"],
    ["correlation_id", "correlationId", "str"],
    ["streaming", "streaming", "bool", false],
    ["timeout", "timeout", "positive", 30],
  ],
  "toolkit/list/req": [
    ["filter_kind", "filterKind", "str"],
    ["filter_tags", "filterTags", "strs"],
  ],
  "toolkit/configure/req": [
    ["session_id", "sessionId", "str"],
    ["toolkit_name", "toolkitName", "str"],
    ["config", "config", "record?"],
  ],
  "skill/discover/req": [
    ["filter_tags", "filterTags", "strs"],
    ["filter_categories", "filterCategories", "strs"],
  ],
  "skill/call/req": [
    ["name", "name", "str"],
    ["arguments", "arguments", "record?"],
    ["correlation_id", "correlationId", "str"],
    ["timeout", "timeout", "positive", 60],
    ["streaming", "streaming", "bool", true],
    ["llm_override", "llmOverride", "llm"],
    ["metadata", "metadata", "record?"],
  ],
};

// Returned by a field check that cannot decide: zod must.
const UNSURE = Symbol("unsure");

/**
 * Checks and decodes a message fresh from `JSON.parse` whose `type` is a
 * known request type, in one pass.
 *
 * @param type the message's `type` (a known request type)
 * @param message the parsed message
 * @returns the domain request, or `undefined` when the zod schema must
 *   decide (the message may be invalid)
 * @example A tool call, then one the zod schema must judge
 * ```ts
 * import { decodeRequestFast } from "./request_codec_fast.ts";
 * import assert from "node:assert/strict";
 * const ok = decodeRequestFast("tool/call/req", {
 *   type: "tool/call/req", id: "r1", tool_name: "echo", arguments: { a: 1 },
 * });
 * assert.equal(ok?.type === "tool/call/req" && ok.toolName, "echo");
 * assert.equal(ok?.type === "tool/call/req" && ok.timeout, 30);
 * const bad = decodeRequestFast("tool/call/req", { type: "tool/call/req", arguments: [] });
 * assert.equal(bad, undefined);
 * ```
 */
export function decodeRequestFast<T extends RequestType>(
  type: T,
  message: JsonObject,
): Request<T> | undefined {
  const id = message.id;
  const out: JsonObject = { type, id: id === undefined ? "" : id };
  if (typeof out.id !== "string") return undefined;
  const version = message.version;
  if (version !== undefined) {
    if (typeof version !== "string") return undefined;
    out.version = version;
  }
  const ts = message.ts;
  if (ts !== undefined) {
    if (!isFiniteNumber(ts)) return undefined;
    out.ts = ts;
  }
  for (const field of FIELDS[type]) {
    const value = checkField(field, message[field[0]]);
    if (value === UNSURE) return undefined;
    out[field[1]] = value;
  }
  // Every field was checked against its kind above.
  return out as unknown as Request<T>;
}

function checkField(field: Field, value: unknown): unknown {
  const kind = field[2];
  if (value === undefined) {
    switch (kind) {
      case "str":
      case "token":
        return "";
      case "strs":
        return [];
      case "record":
        return UNSURE;
      case "record?":
        return {};
      case "llm":
        return null;
      default:
        return field[3];
    }
  }
  switch (kind) {
    case "str":
      return typeof value === "string" ? value : UNSURE;
    case "token":
      return typeof value === "string" || value === null ? value : UNSURE;
    case "strs":
      return strings(value);
    case "bool":
      return typeof value === "boolean" ? value : UNSURE;
    case "positive":
      return isFiniteNumber(value) && value > 0 ? value : UNSURE;
    case "nonnegative":
      return isFiniteNumber(value) && value >= 0 ? value : UNSURE;
    case "record":
    case "record?":
      return record(value);
    case "llm":
      return value === null ? null : UNSURE;
  }
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

// zod builds a new array of the checked elements.
function strings(value: unknown): unknown {
  if (!Array.isArray(value)) return UNSURE;
  for (const item of value) if (typeof item !== "string") return UNSURE;
  return value.slice();
}

// zod's record: a plain object, copied without a `__proto__` key (JSON.parse
// makes one an own property; zod skips it). A parsed object is otherwise
// handed on as is: nothing else holds it, and the copy would be equal.
function record(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return UNSURE;
  }
  const object = value as JsonObject;
  if (!Object.hasOwn(object, "__proto__")) return object;
  const copy: JsonObject = {};
  for (const key in object) if (key !== "__proto__") copy[key] = object[key];
  return copy;
}
