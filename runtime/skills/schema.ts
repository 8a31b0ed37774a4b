/**
 * JSON Schema checks for skill arguments and outputs, with messages that
 * name the failing field by JSON pointer. Validation is the host's one
 * validator (`runtime/schema/validator.ts`); this file only picks the most
 * useful error and words it the way skill results always have.
 *
 * @module
 */

import type { OutputUnit } from "@cfworker/json-schema";
import type { JsonSchema } from "../../protocol/json.ts";
import { schemaErrors } from "../schema/validator.ts";

/**
 * Tells whether a schema constrains anything. `{}` (the wire default for a
 * skill without a schema) accepts every value, so callers skip it.
 *
 * @param schema a JSON Schema, or null
 * @returns true when the schema has at least one keyword
 * @example
 * ```ts
 * import { isEmptySchema } from "./schema.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isEmptySchema({}));
 * assert.ok(!isEmptySchema({ type: "object" }));
 * ```
 */
export function isEmptySchema(schema: JsonSchema | null | undefined): boolean {
  return schema === null || schema === undefined ||
    Object.keys(schema).length === 0;
}

/**
 * Validates a value against a JSON Schema and describes the first real
 * problem, naming the field by its JSON pointer.
 *
 * @param schema the JSON Schema (draft 2020-12 keywords)
 * @param value the value to check
 * @returns null when valid, else a message like `field "/rows" has type "string", expected "number"`
 * @example Name the missing field
 * ```ts
 * import { checkSchema } from "./schema.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", required: ["path"], properties: { path: { type: "string" } } };
 * assert.equal(checkSchema(schema, { path: "a.csv" }), null);
 * assert.equal(checkSchema(schema, {}), 'field "/path" is required');
 * ```
 */
export function checkSchema(schema: JsonSchema, value: unknown): string | null {
  if (isEmptySchema(schema)) return null;
  const errors = schemaErrors(schema, value);
  return errors === null ? null : describe(pickError(errors));
}

// Aggregate keywords ("properties", "items", "allOf", ...) only say that a
// child failed; the child's own error is the one a person can act on.
const AGGREGATE = new Set([
  "properties",
  "items",
  "prefixItems",
  "additionalProperties",
  "allOf",
  "$ref",
  "unevaluatedProperties",
  "patternProperties",
  "contains",
]);

function pickError(errors: OutputUnit[]): OutputUnit | undefined {
  const specific = errors.filter((e) => !AGGREGATE.has(e.keyword));
  const pool = specific.length > 0 ? specific : errors;
  // The deepest location is the most precise.
  return pool.reduce<OutputUnit | undefined>(
    (best, e) =>
      !best || e.instanceLocation.length > best.instanceLocation.length
        ? e
        : best,
    undefined,
  );
}

function pointer(location: string): string {
  const p = location.replace(/^#/, "");
  return p === "" ? "/" : p;
}

function describe(error: OutputUnit | undefined): string {
  if (!error) return "value does not match the schema";
  const where = pointer(error.instanceLocation);
  if (error.keyword === "required") {
    const missing = /property "([^"]*)"/.exec(error.error)?.[1];
    const base = where === "/" ? "" : where;
    if (missing !== undefined) return `field "${base}/${missing}" is required`;
  }
  if (error.keyword === "type") {
    const m = /type "([^"]*)" is invalid\. Expected "([^"]*)"/.exec(
      error.error,
    );
    if (m) return `field "${where}" has type "${m[1]}", expected "${m[2]}"`;
  }
  return `field "${where}": ${error.error.replace(/\.$/, "")}`;
}
