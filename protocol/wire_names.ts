/**
 * The one conversion between A2E's snake_case wire names and skillbox's
 * camelCase names, at the type level ({@link Wire}) and at run time
 * ({@link wireEncoder}, {@link camelName}). Each message is described once, in
 * camelCase (and, for requests, by its zod schema typed against
 * `Wire<...>`); its wire form is derived, never restated.
 *
 * @module
 */

import type { JsonObject } from "./json.ts";

/**
 * A camelCase name as A2E spells it on the wire (`durationMs` to
 * `duration_ms`).
 *
 * @example The type and the run-time conversion agree
 * ```ts
 * import { type SnakeCase, snakeName } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * const key: SnakeCase<"includeDeferred"> = "include_deferred";
 * assert.equal(snakeName("includeDeferred"), key);
 * ```
 */
export type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

/**
 * The wire form of a camelCase type: every key in snake_case, deeply, and
 * writable. Open records (`JsonObject`: a caller's data, a JSON Schema) and
 * other values pass through unchanged, as they do on the wire.
 *
 * @example The wire form of a type of your own
 * ```ts
 * import { type Wire, wireEncoder } from "./wire_names.ts";
 * import type { JsonObject } from "./json.ts";
 * import assert from "node:assert/strict";
 * interface Job {
 *   jobName: string;
 *   retryCount: number;
 *   payload: JsonObject;
 * }
 * const encodeJob = wireEncoder<Job>({ jobName: "", retryCount: 0, payload: {} });
 * const wire: Wire<Job> = encodeJob({ jobName: "sync", retryCount: 2, payload: { userId: 7 } });
 * assert.equal(wire.retry_count, 2);
 * // An open record is the caller's data: its keys keep their names.
 * assert.deepEqual(wire.payload, { userId: 7 });
 * ```
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
 * Builds the encoder of one camelCase type from a complete value of it (its
 * decoder's answer to `{}`): it copies exactly that value's own fields,
 * under their wire names. The decoder's return type makes the compiler
 * reject a missing or an extra field, so each field is named once, in the
 * decoder, and the encoder can neither drop nor leak one: other own
 * properties of an encoded value (an internal record's path, hash or
 * permissions) never reach the wire.
 *
 * @param template a value holding every field of the type and nothing else
 * @returns a function from the type to its wire form (one level: values,
 *   a caller's data among them, pass through untouched)
 * @example
 * ```ts
 * import { wireEncoder } from "./wire_names.ts";
 * import assert from "node:assert/strict";
 * const encode = wireEncoder<{ toolName: string; data: unknown }>({ toolName: "", data: null });
 * const internal = { toolName: "t", data: { someKey: 1 }, path: "/secret" };
 * assert.deepEqual(encode(internal), { tool_name: "t", data: { someKey: 1 } });
 * ```
 */
export function wireEncoder<T extends object>(
  template: T,
): (value: T) => Wire<T> {
  const names = Object.keys(template);
  const wires = names.map(snakeName);
  return (value) => {
    const from = value as JsonObject;
    const out: JsonObject = {};
    for (let i = 0; i < names.length; i++) out[wires[i]!] = from[names[i]!];
    // Only the names changed; a nested camelCase object is its caller's to
    // convert (see encodeSkill).
    return out as Wire<T>;
  };
}

/**
 * Renames an object's own wire keys to camelCase (one level).
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
