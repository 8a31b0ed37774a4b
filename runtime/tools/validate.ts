/**
 * Tool-argument and toolkit-configuration validation: the host's one JSON
 * Schema validator lives in `runtime/schema/validator.ts`; this path is kept
 * for the call path's imports, plus {@link validateArguments}, the call
 * path's check of a tool's arguments.
 *
 * @module
 */

import { validateValue, type ValidationResult } from "../schema/validator.ts";

export {
  validateValue,
  type ValidationIssue,
  type ValidationResult,
} from "../schema/validator.ts";
import { isPlainObject } from "../../protocol/json.ts";

const VALID: ValidationResult = Object.freeze({ valid: true });

// Keywords that constrain nothing an open object schema would check.
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
]);

// Whether each input schema accepts every object (answered once per schema).
const openSchemas = new WeakMap<object, boolean>();

/**
 * Checks a tool's arguments against its input schema: the same answer as
 * {@link validateValue}, without running the validator when the schema
 * accepts any object (`{"type": "object", "properties": {}}`, as a tool
 * declared without input gets) and the arguments are one.
 *
 * @param schema the tool's input schema
 * @param args the arguments
 * @returns `{valid: true}`, or the issues by field path
 * @throws {TypeError} when the schema cannot be compiled
 * @example An open schema and a strict one
 * ```ts
 * import { validateArguments } from "./validate.ts";
 * import assert from "node:assert/strict";
 * const open = { type: "object", properties: {} };
 * assert.ok(validateArguments(open, { anything: 1 }).valid);
 * assert.ok(!validateArguments(open, [1] as unknown as Record<string, unknown>).valid);
 * const strict = { type: "object", required: ["a"] };
 * assert.ok(!validateArguments(strict, {}).valid);
 * ```
 */
export function validateArguments(
  schema: Record<string, unknown> | boolean,
  args: Record<string, unknown>,
): ValidationResult {
  if (
    typeof schema === "object" && isPlainObject(args) &&
    acceptsAnyObject(schema)
  ) return VALID;
  return validateValue(schema, args);
}

function acceptsAnyObject(schema: Record<string, unknown>): boolean {
  let open = openSchemas.get(schema);
  if (open === undefined) {
    open = schema.type === "object" &&
      Object.entries(schema).every(([key, value]) =>
        key === "type" ||
        ANNOTATIONS.has(key) && typeof value === "string" ||
        key === "properties" && isPlainObject(value) &&
          Object.keys(value).length === 0 ||
        key === "additionalProperties" && value === true
      );
    openSchemas.set(schema, open);
  }
  return open;
}
