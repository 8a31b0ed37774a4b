/**
 * Short JSON summaries of arguments and results, for skill events.
 *
 * @module
 */

/**
 * A short JSON summary of arguments or results for events: long strings
 * cut, the whole capped.
 *
 * @param value any JSON-like value
 * @param maxChars the longest summary. @default 500
 * @returns the summary text
 * @example
 * ```ts
 * import { summarize } from "./summarize.ts";
 * import assert from "node:assert/strict";
 * assert.equal(summarize({ path: "a.csv" }), '{"path":"a.csv"}');
 * assert.ok(summarize({ text: "x".repeat(5000) }).length < 300);
 * ```
 */
export function summarize(value: unknown, maxChars = 500): string {
  let text: string;
  try {
    text = JSON.stringify(
      value,
      (_k, v) =>
        typeof v === "string" && v.length > 200
          ? `${v.slice(0, 200)}… (${v.length} chars)`
          : v,
    ) ?? "null";
  } catch {
    text = String(value);
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
