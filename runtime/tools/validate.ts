/**
 * Tool-argument and toolkit-configuration validation: the host's one JSON
 * Schema validator lives in `runtime/schema/validator.ts`; this path is kept
 * for the call path's imports.
 *
 * @module
 */

export {
  validateValue,
  type ValidationIssue,
  type ValidationResult,
} from "../schema/validator.ts";
