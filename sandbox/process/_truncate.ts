/**
 * Cuts a result to a size bound, in the sandbox's trusted main thread.
 *
 * @module
 */

/** A serialized result and whether it was cut. */
export interface SerializedResult {
  /** The value as JSON text. */
  json: string;
  /** True when the value was cut to fit. */
  truncated: boolean;
}

/**
 * Serializes a result, cutting it when its JSON is longer than `maxChars`.
 * A string is cut to a prefix; any other value is replaced by a prefix of
 * its JSON text. For an `output()` object only `data` is cut.
 *
 * @param value what `run` returned
 * @param maxChars the bound, in characters of JSON
 * @returns the JSON text and the truncation flag
 * @throws {TypeError} when the value cannot be serialized (cycles, BigInt)
 * @example Cut a long string
 * ```ts
 * import { serializeResult } from "./_truncate.ts";
 * import assert from "node:assert/strict";
 * const r = serializeResult("x".repeat(100), 10);
 * assert.equal(r.truncated, true);
 * assert.equal(JSON.parse(r.json), "x".repeat(10));
 * ```
 */
export function serializeResult(
  value: unknown,
  maxChars: number,
): SerializedResult {
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= maxChars) return { json, truncated: false };
  if (isOutputLike(value)) {
    const out = { ...value, data: cut(value.data, maxChars) };
    return { json: JSON.stringify(out), truncated: true };
  }
  return { json: JSON.stringify(cut(value, maxChars)), truncated: true };
}

function cut(value: unknown, maxChars: number): unknown {
  if (typeof value === "string") return value.slice(0, maxChars);
  return (JSON.stringify(value) ?? "null").slice(0, maxChars);
}

function isOutputLike(
  value: unknown,
): value is Record<string, unknown> & { data?: unknown } {
  return typeof value === "object" && value !== null &&
    (value as Record<string, unknown>).__skillbox_output === true;
}
