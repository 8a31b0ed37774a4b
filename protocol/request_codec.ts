/**
 * The request half of the codec: a checked wire request (snake_case, as
 * `messages.ts` validated it) to its camelCase domain request, and a domain
 * request to a complete wire message (what a client sends). Only top-level
 * field names change; values a caller owns (`arguments`, `config`,
 * `metadata`) pass through untouched, and `llm_override` goes through the
 * LLM-choice codec.
 *
 * @module
 */

import type { JsonObject, LlmChoice } from "./domain.ts";
import { type Envelope, envelope } from "./envelope.ts";
import type { Request, RequestType } from "./requests.ts";
import { decodeLlmChoice, encodeLlmChoice } from "./skill_codec.ts";
import { isObject } from "./_fields.ts";

/** A request as checked on the wire: its type, id and snake_case fields. */
export type WireRequest<T extends RequestType = RequestType> = JsonObject & {
  type: T;
  id: string;
};

/** A request to encode: the domain request without its envelope. */
export type RequestBody<T extends RequestType = RequestType> = T extends
  RequestType ? Omit<Request<T>, "id" | "version" | "ts"> : never;

// The request fields whose wire name differs from the domain name.
const WIRE_NAMES: Readonly<Record<string, string>> = {
  agentId: "agent_id",
  agentCaps: "agent_caps",
  authToken: "auth_token",
  filterKind: "filter_kind",
  filterTags: "filter_tags",
  filterCategories: "filter_categories",
  includeDeferred: "include_deferred",
  sessionId: "session_id",
  toolName: "tool_name",
  toolkitName: "toolkit_name",
  correlationId: "correlation_id",
  llmOverride: "llm_override",
};

const DOMAIN_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(WIRE_NAMES).map(([domain, wire]) => [wire, domain]),
);

/**
 * Decodes a checked wire request into its domain request.
 *
 * @param wire the request as `messages.ts` checked it (defaults applied)
 * @returns the camelCase request
 * @example Decode a tool call
 * ```ts
 * import { decodeRequest } from "./request_codec.ts";
 * import assert from "node:assert/strict";
 * const r = decodeRequest({ type: "tool/call/req", id: "r1", tool_name: "echo",
 *   arguments: { some_arg: 1 }, session_id: "", correlation_id: "", streaming: false, timeout: 30 });
 * assert.equal(r.type === "tool/call/req" && r.toolName, "echo");
 * assert.deepEqual(r.type === "tool/call/req" && r.arguments, { some_arg: 1 });
 * ```
 */
export function decodeRequest<T extends RequestType>(
  wire: WireRequest<T>,
): Request<T> {
  // A for-in over the checked (plain, own-keys-only) object, not
  // Object.entries: this runs for every request and the pairs array cost
  // more than the renaming itself.
  const out: JsonObject = {};
  for (const key in wire) {
    const value = wire[key];
    const name = DOMAIN_NAMES[key] ?? key;
    out[name] = name === "llmOverride" && isObject(value)
      ? decodeLlmChoice(value)
      : value;
  }
  // The fields were checked by the wire schema; only their names changed.
  return out as unknown as Request<T>;
}

/**
 * Encodes a domain request as a complete wire message (fresh envelope).
 *
 * @param request the request's type and camelCase fields
 * @returns the message, snake_case, ready to send
 * @example Encode a tool list request
 * ```ts
 * import { encodeRequest } from "./request_codec.ts";
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
    fields[WIRE_NAMES[key] ?? key] = key === "llmOverride" && isObject(value)
      ? encodeLlmChoice(value as unknown as LlmChoice)
      : value;
  }
  return envelope(request.type, fields);
}
