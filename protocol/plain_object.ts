/**
 * The one test for "a JSON object": what `JSON.parse` makes of `{...}`, not
 * null and not an array. Both sides of the wire check decoded values with it.
 *
 * @module
 */

/** A JSON object: what `JSON.parse` makes of `{...}`. */
export type JsonObject = Record<string, unknown>;

/**
 * Whether a value is a plain object (not null, not an array).
 *
 * @param value anything
 * @returns true for an object that is neither null nor an array
 * @example Tell objects from arrays and null
 * ```ts
 * import { isPlainObject } from "./plain_object.ts";
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
