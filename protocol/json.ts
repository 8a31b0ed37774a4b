/**
 * JSON values as both sides of every wire carry them: a JSON object, a JSON
 * Schema, and the one test for "a JSON object" (what `JSON.parse` makes of
 * `{...}`: not null, not an array) that decoded values are checked with.
 *
 * @module
 */

/**
 * A JSON object: what `JSON.parse` makes of `{...}`.
 *
 * @example Narrow parsed JSON before decoding it
 * ```ts
 * import { isPlainObject, type JsonObject } from "./json.ts";
 * import { decodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * function uptimeOf(text: string): number {
 *   const value: unknown = JSON.parse(text);
 *   if (!isPlainObject(value)) throw new TypeError("Expected a JSON object");
 *   const message: JsonObject = value;
 *   return decodeResponse("ping", message).uptimeSeconds;
 * }
 * assert.equal(uptimeOf('{"type":"pong","req_id":"p1","uptime_seconds":3}'), 3);
 * assert.throws(() => uptimeOf("[1]"), /Expected a JSON object/);
 * ```
 */
export type JsonObject = Record<string, unknown>;

/**
 * A JSON Schema object, as the wire, the host and the author SDK carry it.
 *
 * @example The parameters agents see for a schema
 * ```ts
 * import type { JsonSchema } from "./json.ts";
 * import { schemaToParameters } from "./parameters.ts";
 * import assert from "node:assert/strict";
 * const input: JsonSchema = {
 *   type: "object",
 *   properties: { city: { type: "string", description: "City name" } },
 *   required: ["city"],
 * };
 * const [city] = schemaToParameters(input);
 * assert.equal(city?.name, "city");
 * assert.equal(city?.required, true);
 * ```
 */
export type JsonSchema = Record<string, unknown>;

/**
 * Whether a value is a plain object (not null, not an array).
 *
 * @param value anything
 * @returns true for an object that is neither null nor an array
 * @example Tell objects from arrays and null
 * ```ts
 * import { isPlainObject } from "./json.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isPlainObject({ a: 1 }));
 * assert.ok(!isPlainObject([]) && !isPlainObject(null) && !isPlainObject("x"));
 * ```
 */
export function isPlainObject(
  value: unknown,
): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One segment of a JSON Pointer as a `$ref` carries it (`#/$defs/a~1b`),
 * decoded: percent escapes first (a `$ref` is a URI fragment), then `~1`
 * to `/` and `~0` to `~`. A malformed escape (`%zz`, in an untrusted
 * schema) is read as written instead of throwing.
 *
 * @param segment the segment, without its `/`
 * @returns the property name it stands for
 * @example Escapes of both kinds, and one that is not an escape
 * ```ts
 * import { pointerSegment } from "./json.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pointerSegment("a~1b%20c~0"), "a/b c~");
 * assert.equal(pointerSegment("%zz"), "%zz");
 * ```
 */
export function pointerSegment(segment: string): string {
  let text = segment;
  try {
    text = decodeURIComponent(segment);
  } catch {
    // Not a percent escape after all: keep the segment as written.
  }
  return text.replaceAll("~1", "/").replaceAll("~0", "~");
}

/**
 * The length of a value as JSON text, or 0 for a value JSON cannot hold (a
 * cycle, a `bigint`) or leaves out (`undefined`): for weighing a value
 * against a bound, where throwing would be worse than counting it light.
 *
 * @param value anything
 * @returns `JSON.stringify(value).length`, or 0 when that throws or is undefined
 * @example
 * ```ts
 * import { jsonLength } from "./json.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonLength({ a: 1 }), 7);
 * const cycle: Record<string, unknown> = {};
 * cycle.self = cycle;
 * assert.equal(jsonLength(cycle), 0);
 * assert.equal(jsonLength(undefined), 0);
 * ```
 */
export function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}
