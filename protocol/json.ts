/**
 * JSON values as both sides of every wire carry them: a JSON object, a JSON
 * Schema, and the one test for "a JSON object" (what `JSON.parse` makes of
 * `{...}`: not null, not an array) that decoded values are checked with.
 *
 * @module
 */

/** A JSON object: what `JSON.parse` makes of `{...}`. */
export type JsonObject = Record<string, unknown>;

/** A JSON Schema object, as the wire, the host and the author SDK carry it. */
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
