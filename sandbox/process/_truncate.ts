/**
 * Cuts a result to a size bound, in the sandbox's trusted main thread.
 *
 * The bound is on the JSON text that goes on the pipe, escapes included: a
 * cut string is measured as its JSON literal (a control character is 6
 * characters there, a quote 2; the literal's own two quotes aside), so what
 * goes out never exceeds the bound the host reads lines with
 * (`maxFrameBytes` in `protocol/sandbox/pipe.ts`).
 *
 * @module
 */

import { isOutput } from "../../protocol/output.ts";

/** A serialized result and whether it was cut. */
export interface SerializedResult {
  /** The value as JSON text. */
  json: string;
  /** True when the value was cut to fit. */
  truncated: boolean;
}

/**
 * Characters of JSON an `output()` may hold beside its `data` (its
 * `summary`, `exit_code`, `break_loop`) on top of the bound: past it, the
 * whole value is cut like any other.
 */
export const OUTPUT_FIELDS_CHARS = 4096;

/**
 * Serializes a result, cutting it when its JSON is longer than `maxChars`.
 * A string is cut to its longest prefix whose JSON fits; any other value is
 * replaced by the longest prefix of its JSON text that fits as a string.
 * For an `output()` object only `data` is cut, as long as its other fields
 * take at most {@link OUTPUT_FIELDS_CHARS} more.
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
 * assert.equal(JSON.parse(serializeResult("\n".repeat(100), 10).json), "\n".repeat(5));
 * ```
 */
export function serializeResult(
  value: unknown,
  maxChars: number,
): SerializedResult {
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= maxChars) return { json, truncated: false };
  if (isOutput(value)) {
    const out = JSON.stringify({ ...value, data: cut(value.data, maxChars) });
    if (out.length <= maxChars + OUTPUT_FIELDS_CHARS) {
      return { json: out, truncated: true };
    }
  }
  return { json: JSON.stringify(cut(value, maxChars)), truncated: true };
}

// The value as a string whose JSON literal holds at most `maxChars`
// characters between its quotes.
function cut(value: unknown, maxChars: number): string {
  const text = typeof value === "string"
    ? value
    : JSON.stringify(value) ?? "null";
  return text.slice(0, fittingPrefix(text, maxChars));
}

// How many UTF-16 units of `text` fit in a JSON string literal of at most
// `maxChars` characters between its quotes, never ending inside a surrogate
// pair (half of one would be escaped as six characters).
function fittingPrefix(text: string, maxChars: number): number {
  let size = 0;
  let at = 0;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    let width = 1;
    let units = 1;
    if (c < 0x20) width = SHORT_ESCAPES.has(c) ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) width = 2;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const next = text.charCodeAt(at + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        width = 2;
        units = 2;
      } else width = 6;
    }
    if (size + width > maxChars) break;
    size += width;
    at += units;
  }
  return at;
}

// \b \t \n \f \r: two characters each in JSON; other controls are \u00XX.
const SHORT_ESCAPES: ReadonlySet<number> = new Set([8, 9, 10, 12, 13]);
