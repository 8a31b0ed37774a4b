/**
 * A2E's `inputs`/`outputs` parameter maps, turned into the JSON Schema of a
 * skill's `input_schema`/`output_schema`.
 *
 * A map names each parameter; its value is a type name (`path: string`) or
 * a mapping with `type`, `description`, `required`, `enum`, `default`,
 * `items` and nested `properties`. A list of such mappings, each with a
 * `name` (A2E's `ToolParameter` shape), is read the same way.
 *
 * @module
 */

import {
  isPlainObject,
  type JsonObject,
  type JsonSchema,
} from "../../protocol/json.ts";

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: "string",
  str: "string",
  text: "string",
  integer: "integer",
  int: "integer",
  number: "number",
  float: "number",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  object: "object",
  dict: "object",
  map: "object",
  null: "null",
};

// Nesting deeper than this is cut: a parameter map is a form, not a program.
const MAX_DEPTH = 8;
const MAX_PARAMETERS = 200;

/**
 * Turns a parameter map into an object JSON Schema.
 *
 * @param value the field's value, as parsed from YAML
 * @param key the field's name, for warnings
 * @returns the schema, and one warning per entry that could not be read
 * @example
 * ```ts
 * import { parameterMapToSchema } from "./parameter_map.ts";
 * import assert from "node:assert/strict";
 * const { schema, warnings } = parameterMapToSchema({
 *   path: { type: "str", description: "CSV file", required: true },
 *   limit: "int",
 * }, "inputs");
 * assert.deepEqual(schema, {
 *   type: "object",
 *   properties: { path: { type: "string", description: "CSV file" }, limit: { type: "integer" } },
 *   required: ["path"],
 * });
 * assert.deepEqual(warnings, []);
 * ```
 */
export function parameterMapToSchema(
  value: unknown,
  key: string,
): { schema: JsonSchema; warnings: string[] } {
  const warnings: string[] = [];
  const schema = objectSchema(value, key, 0, warnings);
  return { schema: schema ?? {}, warnings };
}

function objectSchema(
  value: unknown,
  path: string,
  depth: number,
  warnings: string[],
): JsonSchema | null {
  let entries: [string, unknown][];
  if (Array.isArray(value)) {
    entries = [];
    for (const [i, item] of value.entries()) {
      const name = isPlainObject(item) ? item.name : undefined;
      if (typeof name !== "string" || name === "") {
        warnings.push(`field "${path}[${i}]" has no "name": ignored`);
        continue;
      }
      entries.push([name, item]);
    }
  } else if (isPlainObject(value)) {
    entries = Object.entries(value);
  } else {
    warnings.push(`field "${path}" must be a parameter map: ignored`);
    return null;
  }
  if (entries.length > MAX_PARAMETERS) {
    warnings.push(
      `field "${path}" has ${entries.length} parameters, more than ${MAX_PARAMETERS}: the rest are ignored`,
    );
    entries = entries.slice(0, MAX_PARAMETERS);
  }
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [name, spec] of entries) {
    const where = `${path}.${name}`;
    const prop = parameterSchema(spec, where, depth, warnings);
    if (prop === null) continue;
    properties[name] = prop.schema;
    if (prop.required) required.push(name);
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

function parameterSchema(
  spec: unknown,
  path: string,
  depth: number,
  warnings: string[],
): { schema: JsonSchema; required: boolean } | null {
  if (typeof spec === "string") {
    const type = typeName(spec, path, warnings);
    return { schema: type ? { type } : {}, required: false };
  }
  if (!isPlainObject(spec)) {
    warnings.push(
      `field "${path}" must be a type name or a mapping: ignored`,
    );
    return null;
  }
  const schema: JsonSchema = {};
  if (spec.type !== undefined) {
    const type = typeof spec.type === "string"
      ? typeName(spec.type, path, warnings)
      : null;
    if (typeof spec.type !== "string") {
      warnings.push(`field "${path}.type" must be a type name: ignored`);
    }
    if (type) schema.type = type;
  }
  if (typeof spec.description === "string") {
    schema.description = spec.description;
  }
  if (Array.isArray(spec.enum)) schema.enum = spec.enum;
  if (spec.default !== undefined) schema.default = spec.default as never;
  if (spec.properties !== undefined && spec.properties !== null) {
    if (depth + 1 >= MAX_DEPTH) {
      warnings.push(`field "${path}" nests too deep: its properties are cut`);
    } else {
      const inner = objectSchema(
        spec.properties,
        `${path}.properties`,
        depth + 1,
        warnings,
      );
      if (inner) Object.assign(schema, inner);
    }
  }
  if (spec.items !== undefined && depth + 1 < MAX_DEPTH) {
    const item = parameterSchema(
      spec.items,
      `${path}.items`,
      depth + 1,
      warnings,
    );
    if (item) schema.items = item.schema;
  }
  return { schema, required: spec.required === true };
}

function typeName(
  name: string,
  path: string,
  warnings: string[],
): string | null {
  const type = Object.hasOwn(TYPE_NAMES, name.toLowerCase())
    ? TYPE_NAMES[name.toLowerCase()]
    : undefined;
  if (type) return type;
  warnings.push(`field "${path}" has an unknown type "${name}": any value`);
  return null;
}
