/**
 * Tolerant readers of wire fields, shared by the decoders of `tool.ts`,
 * `skill.ts` and `responses.ts`: each returns the A2E default when the
 * value is missing or of the wrong type.
 *
 * @module
 */

/**
 * A string, or `fallback`.
 *
 * @example Read a string with a fallback
 * ```ts
 * import { str } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(str(1, "x"), "x");
 * ```
 */
export function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

/**
 * A string, or `null`.
 *
 * @example Read a nullable string
 * ```ts
 * import { nullableStr } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(nullableStr(3), null);
 * ```
 */
export function nullableStr(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/**
 * A finite number, or 0.
 *
 * @example Read a number
 * ```ts
 * import { num } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(num(Infinity), 0);
 * ```
 */
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/**
 * An array, or `[]`.
 *
 * @example Read an array
 * ```ts
 * import { list } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(list("a"), []);
 * ```
 */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * The strings of an array, or `[]`.
 *
 * @example Keep the strings
 * ```ts
 * import { strings } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(strings(["a", 1]), ["a"]);
 * ```
 */
export function strings(value: unknown): string[] {
  return list(value).filter((v): v is string => typeof v === "string");
}

/**
 * The strings of an array, or `null` when it is not one.
 *
 * @example Read a nullable string list
 * ```ts
 * import { nullableStrings } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(nullableStrings(null), null);
 * ```
 */
export function nullableStrings(value: unknown): string[] | null {
  return Array.isArray(value) ? strings(value) : null;
}
