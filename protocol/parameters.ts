/**
 * Turns a tool's JSON Schema (as `z.toJSONSchema` produces it, or written by
 * hand) into the A2E `ToolParameter` list agents see (A2E-WIRE.md §4).
 *
 * Mapping rules, chosen so an agent reading only the parameter list can still
 * call the tool correctly:
 * - an object schema gives one parameter per property, in declaration order;
 *   `required` comes from the parent's `required` list;
 * - `$ref` (`#/$defs/...`, `#/definitions/...`, `#`, any local JSON pointer)
 *   is resolved; a recursive reference stops with an `object` whose
 *   `properties` is null;
 * - a nullable type (`["string", "null"]`, `anyOf: [X, {type: "null"}]`)
 *   maps to the non-null type;
 * - `anyOf`/`oneOf` of several object shapes merges their properties (a
 *   property is required only when every shape requires it); of literals
 *   (`const`/`enum`) it gives one `enum`; of different scalar types it gives
 *   the first type and names the others in the description;
 * - `allOf` merges its members;
 * - `enum`/`const` values become strings (`String` for scalars, JSON for
 *   the rest);
 * - an array names its item type in the description ("List of paths (array
 *   of string)"), and exposes its items' `enum` and `properties`;
 * - a map (`additionalProperties` schema, no `properties`) names its value
 *   type ("(map of number)");
 * - with no usable type the type is `"any"`; a missing description is `""`.
 *
 * @module
 */

import { isPlainObject, type JsonObject, pointerSegment } from "./json.ts";
import type { ToolParameter } from "./tool.ts";
import {
  applyKeywords,
  emptyFlat,
  type Flat,
  foldUnion,
  merge,
} from "./schema_fold.ts";

/** Options for {@linkcode schemaToParameters}. */
export interface SchemaToParametersOptions {
  /**
   * The name of the single parameter produced when the root schema is not an
   * object (for example a tool whose output is a plain string).
   * @default {"result"}
   */
  rootName?: string;
  /**
   * A budget shared with other conversions, drawn from as well as this
   * conversion's own bound (see {@linkcode ConversionBudget}).
   * @default {undefined} the conversion's own bound only
   */
  budget?: ConversionBudget;
}

/** A JSON Schema node as we read it: an object or a boolean schema. */
type Schema = JsonObject;

/**
 * How deep nested object/array schemas are followed before stopping: a
 * parameter list nests at most this deep, and one read off the wire is read
 * no deeper.
 *
 * @example A list nested one level too deep loses its innermost properties
 * ```ts
 * import { MAX_PARAMETER_DEPTH, schemaToParameters } from "./parameters.ts";
 * import assert from "node:assert/strict";
 * let schema: Record<string, unknown> = { type: "string" };
 * for (let i = 0; i <= MAX_PARAMETER_DEPTH + 1; i++) {
 *   schema = { type: "object", properties: { n: schema } };
 * }
 * let levels = 0;
 * for (let p = schemaToParameters(schema)[0]; p; p = p.properties?.n) levels++;
 * assert.equal(levels, MAX_PARAMETER_DEPTH + 1);
 * ```
 */
export const MAX_PARAMETER_DEPTH = 32;

// Schema nodes one conversion may fold. Parameters are derived on the
// host's thread from untrusted schemas (an imported tool's), and a schema
// that refers to its next level twice, per level, stands for exponentially
// many parameters in a few KB: MAX_PARAMETER_DEPTH alone does not stop that.
const MAX_STEPS = 10_000;
// Enum values one conversion may read: a `$ref` to one long enum is a step
// per reference, yet each copies the whole list into its parameter.
const MAX_ENUM_VALUES = 100_000;

/**
 * Work conversions may do: schema nodes folded (steps) and enum values
 * read. Each conversion has its own (10,000 steps, 100,000 enum values);
 * one given in {@linkcode SchemaToParametersOptions.budget} is drawn from
 * too, so that many conversions (an imported server's whole listing) stop
 * after a fixed amount of work, however fast the machine.
 *
 * @example Two conversions drawing from one budget
 * ```ts
 * import { ConversionBudget, schemaToParameters } from "./parameters.ts";
 * import assert from "node:assert/strict";
 * const budget = new ConversionBudget({ steps: 3, enumValues: 10 });
 * const schema = { type: "object", properties: { q: { type: "string" } } };
 * schemaToParameters(schema, { budget });
 * assert.equal(budget.steps, 2);
 * assert.throws(() => schemaToParameters(schema, { budget }), RangeError);
 * assert.ok(budget.spent);
 * ```
 */
export class ConversionBudget {
  /** The steps taken so far. */
  steps = 0;
  /** The enum values read so far. */
  enumValues = 0;
  #max: { steps: number; enumValues: number };

  /**
   * Creates a budget with nothing spent.
   *
   * @param max the most steps and enum values it allows
   */
  constructor(max: { steps: number; enumValues: number }) {
    this.#max = max;
  }

  /** Whether a conversion has gone past it. */
  get spent(): boolean {
    return this.steps > this.#max.steps ||
      this.enumValues > this.#max.enumValues;
  }

  /**
   * Counts one step that reads `enumValues` values.
   *
   * @param enumValues the enum values the step reads
   * @throws {RangeError} when that goes past the budget
   */
  take(enumValues: number): void {
    this.steps++;
    this.enumValues += enumValues;
    const { steps, enumValues: values } = this.#max;
    const over = this.steps > steps
      ? `takes more than ${steps.toLocaleString("en-US")} steps`
      : this.enumValues > values
      ? `reads more than ${values.toLocaleString("en-US")} enum values`
      : "";
    if (over) {
      throw new RangeError(`Cannot convert schema to parameters: it ${over}`);
    }
  }
}

/**
 * Converts a JSON Schema into A2E tool parameters.
 *
 * An object schema (or a union of object schemas) gives one parameter per
 * property. Any other non-empty schema gives a single parameter named
 * `rootName`. `undefined`, `null`, `true`, `{}` and an object without
 * properties give `[]`.
 *
 * @param schema the JSON Schema (the root, holding any `$defs`)
 * @param options see {@linkcode SchemaToParametersOptions}
 * @returns the parameters, every field present with its A2E type
 * @throws {TypeError} when `schema` is neither an object, a boolean, nor absent
 * @throws {RangeError} when converting it takes more than 10,000 steps
 *   (schema nodes folded) or reads more than 100,000 enum values (a schema
 *   whose references fan out), or goes past `options.budget`
 * @example A zod-style object schema
 * ```ts
 * import { schemaToParameters } from "./parameters.ts";
 * import assert from "node:assert/strict";
 * const params = schemaToParameters({
 *   type: "object",
 *   properties: {
 *     paths: { type: "array", items: { type: "string" }, description: "List of file paths" },
 *     mode: { type: "string", enum: ["fast", "safe"] },
 *   },
 *   required: ["paths"],
 * });
 * assert.deepEqual(params[0], {
 *   name: "paths",
 *   type: "array",
 *   description: "List of file paths (array of string)",
 *   required: true,
 *   enum: null,
 *   properties: null,
 * });
 * assert.deepEqual(params[1]?.enum, ["fast", "safe"]);
 * assert.equal(params[1]?.required, false);
 * assert.equal(params[1]?.description, "");
 * ```
 */
export function schemaToParameters(
  schema: unknown,
  options: SchemaToParametersOptions = {},
): ToolParameter[] {
  if (schema === undefined || schema === null || typeof schema === "boolean") {
    return [];
  }
  if (typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError(
      `Cannot convert schema to parameters: expected an object, got ${
        Array.isArray(schema) ? "an array" : typeof schema
      }`,
    );
  }
  const root = schema as Schema;
  const converter = new Converter(root, options.budget);
  const refs = new Set<string>();
  const resolved = converter.flatten(root, refs);
  if (resolved.type === "object" || resolved.properties) {
    return converter.objectProperties(resolved, refs, 0) ?? [];
  }
  if (Object.keys(root).every((k) => k.startsWith("$") || k === "title")) {
    return [];
  }
  return [
    converter.parameter(options.rootName ?? "result", root, true, new Set(), 0),
  ];
}

class Converter {
  #root: Schema;
  #own = new ConversionBudget({
    steps: MAX_STEPS,
    enumValues: MAX_ENUM_VALUES,
  });
  #shared: ConversionBudget | undefined;

  constructor(root: Schema, shared: ConversionBudget | undefined) {
    this.#root = root;
    this.#shared = shared;
  }

  /** Builds the parameters of an object shape. */
  objectProperties(
    flat: Flat,
    refs: Set<string>,
    depth: number,
  ): ToolParameter[] | null {
    if (!flat.properties || flat.recursive || depth > MAX_PARAMETER_DEPTH) {
      return null;
    }
    return Object.entries(flat.properties).map(([name, sub]) =>
      this.parameter(name, sub, flat.required.has(name), refs, depth + 1)
    );
  }

  parameter(
    name: string,
    schema: Schema,
    required: boolean,
    refs: Set<string>,
    depth: number,
  ): ToolParameter {
    const inner = new Set(refs);
    const flat = this.flatten(schema, inner);
    let description = flat.description;
    let enumValues = flat.enum;
    let propsOf: Flat | null = flat.type === "object" ? flat : null;

    if (flat.type === "array") {
      const chain: string[] = [];
      let item: Flat | null = flat.items
        ? this.flatten(flat.items, inner)
        : null;
      // Nested arrays read as "array of array of string".
      while (
        item && item.type === "array" && chain.length < MAX_PARAMETER_DEPTH
      ) {
        chain.push("array");
        item = item.items ? this.flatten(item.items, inner) : null;
      }
      chain.push(item ? describeType(item) : "any");
      description = appendNote(description, `array of ${chain.join(" of ")}`);
      if (item) {
        enumValues = item.enum;
        if (item.type === "object") propsOf = item;
      }
    } else if (flat.type === "object" && !flat.properties && flat.additional) {
      const value = this.flatten(flat.additional, inner);
      description = appendNote(description, `map of ${describeType(value)}`);
    } else if (flat.alternatives.length > 0) {
      description = appendNote(description, describeType(flat));
    }

    const properties = propsOf
      ? this.objectProperties(propsOf, inner, depth)
      : null;
    return {
      name,
      type: flat.type,
      description,
      required,
      enum: enumValues ? enumValues.map(enumString) : null,
      properties: properties
        ? Object.fromEntries(properties.map((p) => [p.name, p]))
        : null,
    };
  }

  /** Folds a schema into one shape; `refs` holds the `$ref`s being followed. */
  flatten(schema: Schema | boolean, refs: Set<string>): Flat {
    const enumValues = typeof schema === "object" && schema !== null &&
        Array.isArray(schema.enum)
      ? schema.enum.length
      : 0;
    this.#own.take(enumValues);
    this.#shared?.take(enumValues);
    const flat = emptyFlat();
    if (typeof schema !== "object" || schema === null) return flat;
    const own = stringField(schema, "description") ??
      stringField(schema, "title");
    const ref = stringField(schema, "$ref");
    if (ref !== undefined) this.#followRef(flat, ref, refs);
    for (const part of schemaList(schema, "allOf")) {
      merge(flat, this.flatten(part, refs), true);
    }
    const union = [
      ...schemaList(schema, "anyOf"),
      ...schemaList(schema, "oneOf"),
    ];
    const folded = foldUnion(
      union.map((v) => this.flatten(v, new Set(refs)))
        .filter((v) => v.type !== "null"),
    );
    if (folded) merge(flat, folded, false);
    applyKeywords(flat, schema);
    if (own !== undefined) flat.description = own;
    return flat;
  }

  /** Folds the target of a `$ref` in, or stops at a cycle. */
  #followRef(flat: Flat, ref: string, refs: Set<string>): void {
    if (refs.has(ref)) {
      flat.type = "object";
      flat.recursive = true;
      return;
    }
    refs.add(ref);
    Object.assign(flat, this.flatten(this.#resolve(ref) ?? {}, refs));
  }

  #resolve(ref: string): Schema | undefined {
    if (!ref.startsWith("#")) return undefined; // remote refs are not fetched
    let node: unknown = this.#root;
    const pointer = ref.slice(1);
    if (pointer === "" || pointer === "/") return this.#root;
    for (const raw of pointer.split("/").slice(1)) {
      const key = pointerSegment(raw);
      // Own keys only: `#/__proto__` names no schema in the document.
      if (node === null || typeof node !== "object") return undefined;
      if (!Object.hasOwn(node, key)) return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return isPlainObject(node) ? node : undefined;
  }
}

function describeType(flat: Flat): string {
  return [flat.type, ...flat.alternatives].join(" or ");
}

function appendNote(description: string, note: string): string {
  return description ? `${description} (${note})` : note;
}

function enumString(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "null";
}

function stringField(schema: Schema, key: string): string | undefined {
  const value = schema[key];
  return typeof value === "string" ? value : undefined;
}

function schemaList(schema: Schema, key: string): Schema[] {
  const value = schema[key];
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}
