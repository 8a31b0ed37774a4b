/**
 * The folding steps of `parameters.ts`: a JSON Schema node is read into one
 * {@link Flat} shape, its `$ref`, `allOf` and `anyOf`/`oneOf` merged in by
 * {@link merge} and {@link foldUnion}, its own keywords by
 * {@link applyKeywords}.
 *
 * @module
 */

import { isPlainObject, type JsonObject } from "./json.ts";

/**
 * A schema after `$ref`, `allOf`, `anyOf`/`oneOf` and nullable types have
 * been folded into one shape.
 */
export interface Flat {
  /** The JSON type, `"any"` when none is known. */
  type: string;
  /** Other types a union allowed, for the description. */
  alternatives: string[];
  /** The description (or title), `""` when none. */
  description: string;
  /** The allowed values, null when any. */
  enum: unknown[] | null;
  /** An object's property schemas, null when none. */
  properties: Record<string, JsonObject> | null;
  /** The required property names. */
  required: Set<string>;
  /** An array's item schema. */
  items: JsonObject | null;
  /** A map's value schema (`additionalProperties`). */
  additional: JsonObject | null;
  /** Set when a `$ref` cycle stopped resolution. */
  recursive: boolean;
}

/**
 * The shape of a schema that says nothing.
 *
 * @returns a fresh `any` shape
 * @example
 * ```ts
 * import { emptyFlat } from "./schema_fold.ts";
 * import assert from "node:assert/strict";
 * assert.equal(emptyFlat().type, "any");
 * ```
 */
export function emptyFlat(): Flat {
  return {
    type: "any",
    alternatives: [],
    description: "",
    enum: null,
    properties: null,
    required: new Set(),
    items: null,
    additional: null,
    recursive: false,
  };
}

/**
 * Merges `from` into `into`.
 *
 * @param into the shape merged into
 * @param from the shape merged in
 * @param all both must hold (`allOf`); else `from` wins (a union's fold)
 * @example Required names add up
 * ```ts
 * import { emptyFlat, merge } from "./schema_fold.ts";
 * import assert from "node:assert/strict";
 * const a = { ...emptyFlat(), type: "object", required: new Set(["x"]) };
 * merge(a, { ...emptyFlat(), type: "object", required: new Set(["y"]) }, true);
 * assert.deepEqual([...a.required], ["x", "y"]);
 * ```
 */
export function merge(into: Flat, from: Flat, all: boolean): void {
  if (into.type === "any" || !all) into.type = from.type;
  if (!all || into.alternatives.length === 0) {
    into.alternatives = from.alternatives;
  }
  if (from.description) into.description = from.description;
  if (from.enum) into.enum = from.enum;
  if (from.properties) addProperties(into, from.properties);
  for (const r of from.required) into.required.add(r);
  into.items = from.items ?? into.items;
  into.additional = from.additional ?? into.additional;
  into.recursive ||= from.recursive;
}

// Adds `properties` to `into`'s own object (every shape's is a fresh one),
// in place: a copy per `allOf` part made a wide one quadratic. Defined, not
// assigned, so a key named `__proto__` stays a key where that setter exists.
function addProperties(
  into: Flat,
  properties: Record<string, JsonObject>,
): void {
  if (into.properties === null) {
    into.properties = { ...properties };
    return;
  }
  for (const [key, value] of Object.entries(properties)) {
    Object.defineProperty(into.properties, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}

/**
 * One shape for the non-null variants of an `anyOf`/`oneOf`: object shapes
 * merge their properties (required only where every shape requires it),
 * literals give one `enum`, other types are named as alternatives.
 *
 * @param variants the variants' shapes, `null` types left out
 * @returns the folded shape, or null when there is no variant
 * @example Two literals give one enum
 * ```ts
 * import { emptyFlat, foldUnion } from "./schema_fold.ts";
 * import assert from "node:assert/strict";
 * const one = { ...emptyFlat(), type: "string", enum: ["a"] };
 * const two = { ...emptyFlat(), type: "string", enum: ["b", "a"] };
 * assert.deepEqual(foldUnion([one, two])?.enum, ["a", "b"]);
 * ```
 */
export function foldUnion(variants: Flat[]): Flat | null {
  const first = variants[0];
  if (!first) return null;
  const objects = variants.every((v) => v.type === "object");
  const literals = variants.every((v) => v.enum !== null);
  // Each part is built once from all variants: folding them one by one
  // copied what was folded so far, and a wide union in an untrusted
  // schema held the host's thread for minutes.
  const merged = { ...first, required: new Set(first.required) };
  if (objects && variants.length > 1) {
    merged.properties = Object.fromEntries(
      variants.flatMap((v) => Object.entries(v.properties ?? {})),
    );
    const counts = new Map<string, number>();
    for (const v of variants) {
      for (const r of v.required) counts.set(r, (counts.get(r) ?? 0) + 1);
    }
    merged.required = new Set(
      [...first.required].filter((r) => counts.get(r) === variants.length),
    );
  } else if (literals) {
    merged.enum = variants.flatMap((v) => v.enum ?? []);
  }
  merged.alternatives = [...first.alternatives];
  const named = new Set(merged.alternatives);
  for (const v of variants) {
    if (v.type === first.type || named.has(v.type)) continue;
    named.add(v.type);
    merged.alternatives.push(v.type);
  }
  if (!literals && !objects) merged.enum = null;
  if (merged.enum) merged.enum = [...new Set(merged.enum)];
  return merged;
}

/**
 * Applies a schema's own keywords to its shape (`type`, `enum`/`const`,
 * `properties`, `required`, `items`/`prefixItems`, `additionalProperties`),
 * then infers a missing type from what the schema constrains.
 *
 * @param flat the shape so far (from `$ref`, `allOf` and unions)
 * @param schema the schema node
 * @example A nullable type, and a type inferred from `const`
 * ```ts
 * import { applyKeywords, emptyFlat } from "./schema_fold.ts";
 * import assert from "node:assert/strict";
 * const a = emptyFlat();
 * applyKeywords(a, { type: ["null", "string", "integer"] });
 * assert.deepEqual([a.type, a.alternatives], ["string", ["integer"]]);
 * const b = emptyFlat();
 * applyKeywords(b, { const: 2 });
 * assert.equal(b.type, "integer");
 * ```
 */
export function applyKeywords(flat: Flat, schema: JsonObject): void {
  const type = schema.type;
  if (typeof type === "string") {
    flat.type = type;
  } else if (Array.isArray(type)) {
    const types = type.filter((t): t is string =>
      typeof t === "string" && t !== "null"
    );
    if (types[0]) {
      flat.type = types[0];
      flat.alternatives = types.slice(1);
    }
  }

  if (Array.isArray(schema.enum)) {
    flat.enum = schema.enum.filter((v) => v !== null);
  } else if ("const" in schema && schema.const !== null) {
    flat.enum = [schema.const];
  }
  if (isPlainObject(schema.properties)) {
    flat.properties = {
      ...flat.properties,
      ...(schema.properties as Record<string, JsonObject>),
    };
  }
  if (Array.isArray(schema.required)) {
    for (const r of schema.required) {
      if (typeof r === "string") flat.required.add(r);
    }
  }
  if (isPlainObject(schema.items)) flat.items = schema.items;
  else if (
    Array.isArray(schema.prefixItems) && isPlainObject(schema.prefixItems[0])
  ) {
    flat.items = schema.prefixItems[0];
  }
  if (isPlainObject(schema.additionalProperties)) {
    flat.additional = schema.additionalProperties;
  }

  // Infer a missing type from what the schema constrains.
  if (flat.type === "any") {
    if (flat.properties || flat.additional) flat.type = "object";
    else if (flat.items) flat.type = "array";
    else if (flat.enum && flat.enum.length > 0) {
      flat.type = valueType(flat.enum[0]);
    }
  }
}

function valueType(value: unknown): string {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") {
    return Number.isInteger(value) ? "integer" : "number";
  }
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : "any";
}
