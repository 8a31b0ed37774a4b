/**
 * The one conversion between A2E's snake_case wire names and skillbox's
 * camelCase names, at the type level ({@link Wire}) and at run time
 * ({@link toWire}, {@link camelName}). Each message is described once, in
 * camelCase (and, for requests, by its zod schema typed against
 * `Wire<...>`); its wire form is derived, never restated.
 *
 * @module
 */

import type { JsonObject } from "./json.ts";

/**
 * A camelCase name as A2E spells it on the wire (`durationMs` to
 * `duration_ms`).
 */
export type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

/**
 * The wire form of a camelCase type: every key in snake_case, deeply, and
 * writable. Open records (`JsonObject`: a caller's data, a JSON Schema) and
 * other values pass through unchanged, as they do on the wire.
 */
export type Wire<T> = T extends readonly (infer E)[] ? Wire<E>[]
  : T extends object ? string extends keyof T ? T
    : {
      -readonly [K in keyof T as K extends string ? SnakeCase<K> : K]: Wire<
        T[K]
      >;
    }
  : T;

const snakeNames = new Map<string, string>();
const camelNames = new Map<string, string>();

/**
 * The wire name of a camelCase name.
 *
 * @param name a camelCase name
 * @returns its snake_case form
 * @example
 * ```ts
 * import { snakeName } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(snakeName("llmOverride"), "llm_override");
 * ```
 */
export function snakeName(name: string): string {
  let wire = snakeNames.get(name);
  if (wire === undefined) {
    wire = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeNames.set(name, wire);
  }
  return wire;
}

/**
 * The camelCase name of a wire name.
 *
 * @param name a snake_case wire name
 * @returns its camelCase form
 * @example
 * ```ts
 * import { camelName } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(camelName("filter_categories"), "filterCategories");
 * ```
 */
export function camelName(name: string): string {
  let camel = camelNames.get(name);
  if (camel === undefined) {
    camel = name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    camelNames.set(name, camel);
  }
  return camel;
}

/**
 * Renames an object's own keys to their wire names (one level: the values,
 * a caller's data among them, pass through untouched).
 *
 * @param value a camelCase object
 * @returns a new object with the same values under snake_case keys
 * @example
 * ```ts
 * import { toWire } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * const wire = toWire({ toolName: "t", data: { someKey: 1 } });
 * assert.deepEqual(wire, { tool_name: "t", data: { someKey: 1 } });
 * ```
 */
export function toWire<T extends object>(value: T): Wire<T> {
  const out: JsonObject = {};
  const fields = value as JsonObject;
  for (const key in fields) out[snakeName(key)] = fields[key];
  // Only the names changed; nested camelCase objects are the caller's to
  // convert (see encodeSkill).
  return out as Wire<T>;
}

/**
 * Renames an object's own wire keys to camelCase (one level), the inverse
 * of {@link toWire}.
 *
 * @param value a snake_case object
 * @returns a new object with the same values under camelCase keys
 * @example
 * ```ts
 * import { fromWire } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fromWire({ provider_name: "x" }), { providerName: "x" });
 * ```
 */
export function fromWire(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in value) out[camelName(key)] = value[key];
  return out;
}
