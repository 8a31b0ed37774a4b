/**
 * skillbox's error hierarchy. Every error a caller may catch carries an A2E
 * error code; {@link toWireError} maps any thrown value to wire fields in one
 * place.
 *
 * @module
 */

import type { ErrorCode } from "./codes.ts";

/**
 * Options for {@link SkillboxError}.
 *
 * @example A retryable error with its cause and detail
 * ```ts
 * import { SkillboxError, toWireError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const cause = new TypeError("connection reset");
 * const error = new SkillboxError("tool_error", 'Cannot run tool "fetch_page": connection reset', {
 *   cause, retryable: true, detail: { host: "example.com" },
 * });
 * assert.equal(error.cause, cause);
 * const wire = toWireError(error);
 * assert.equal(wire.retryable, true);
 * assert.deepEqual(wire.detail, { host: "example.com" });
 * ```
 */
export interface SkillboxErrorOptions extends ErrorOptions {
  /** Whether retrying the same request may succeed. @default false */
  retryable?: boolean;
  /** Extra structured detail for the wire `detail` field. @default {} */
  detail?: Record<string, unknown>;
}

/**
 * The base of every skillbox error: a message plus an A2E error code.
 *
 * @example Throw and inspect
 * ```ts
 * import { SkillboxError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const err = new SkillboxError("tool_error", 'Cannot run tool "x": boom');
 * assert.equal(err.code, "tool_error");
 * assert.ok(err instanceof Error);
 * ```
 */
export class SkillboxError extends Error {
  /** The A2E error code. */
  readonly code: ErrorCode;
  /** Whether retrying may succeed. */
  readonly retryable: boolean;
  /** Structured detail for the wire. */
  readonly detail: Record<string, unknown>;

  /**
   * Creates an error with an A2E code.
   *
   * @param code the A2E error code
   * @param message a sentence-case message, values quoted, no trailing period
   * @param options `cause`, `retryable`, `detail`
   */
  constructor(
    code: ErrorCode,
    message: string,
    options?: SkillboxErrorOptions,
  ) {
    super(message, options);
    this.name = "SkillboxError";
    this.code = code;
    this.retryable = options?.retryable ?? false;
    this.detail = options?.detail ?? {};
  }
}

/**
 * A call ran past its deadline.
 *
 * @example
 * ```ts
 * import { TimeoutError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new TimeoutError("Timed out after 5 ms").code, "timeout");
 * ```
 */
export class TimeoutError extends SkillboxError {
  /**
   * Creates a `timeout` error.
   *
   * @param message what timed out, and after how long
   * @param options `cause`, `retryable`, `detail`
   */
  constructor(message: string, options?: SkillboxErrorOptions) {
    super("timeout", message, options);
    this.name = "TimeoutError";
  }
}

/**
 * A permission or policy forbids what was asked.
 *
 * @example
 * ```ts
 * import { PermissionDeniedError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new PermissionDeniedError("No").code, "tool_denied");
 * ```
 */
export class PermissionDeniedError extends SkillboxError {
  /**
   * Creates a `tool_denied` error.
   *
   * @param message which permission, and why
   * @param options `cause`, `retryable`, `detail`
   */
  constructor(message: string, options?: SkillboxErrorOptions) {
    super("tool_denied", message, options);
    this.name = "PermissionDeniedError";
  }
}

/**
 * Input failed its schema; the message names the field path.
 *
 * @example
 * ```ts
 * import { SchemaViolationError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new SchemaViolationError("a: expected number").code, "schema_violation");
 * ```
 */
export class SchemaViolationError extends SkillboxError {
  /**
   * Creates a `schema_violation` error.
   *
   * @param message the failing field path and problem
   * @param options `cause`, `retryable`, `detail`
   */
  constructor(message: string, options?: SkillboxErrorOptions) {
    super("schema_violation", message, options);
    this.name = "SchemaViolationError";
  }
}

/**
 * The fields of an A2E `error` message, minus the envelope and `req_id`.
 *
 * @example Send a thrown error, and read it back
 * ```ts
 * import { TimeoutError, toWireError, type WireError } from "./errors.ts";
 * import { decodeError, encodeError } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const fields: WireError = toWireError(new TimeoutError('Cannot run tool "slow": timed out after 500 ms'));
 * const message = encodeError("c1", fields);
 * assert.equal(message.code, "timeout");
 * assert.equal(message.req_id, "c1");
 * const received = decodeError(message);
 * assert.equal(received.code, "timeout");
 * assert.equal(received.message, fields.message);
 * ```
 */
export interface WireError {
  /** The A2E error code (`error.code`). */
  code: ErrorCode;
  /** A human-readable message, never a stack. Wire default `""`. */
  message: string;
  /** Structured detail about the failure. Wire default `{}`. */
  detail: Record<string, unknown>;
  /** Whether retrying the same request may succeed. Wire default `false`. */
  retryable: boolean;
}

/**
 * Maps any thrown value to wire error fields. Unknown errors become
 * `runtime_error` with their message only: never a stack.
 *
 * @param error whatever was thrown
 * @returns the code, message, detail and retryable flag to send
 * @example Map a plain error
 * ```ts
 * import { toWireError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toWireError(new Error("boom")).code, "runtime_error");
 * ```
 */
export function toWireError(error: unknown): WireError {
  if (error instanceof SkillboxError) {
    return {
      code: error.code,
      message: error.message,
      detail: error.detail,
      retryable: error.retryable,
    };
  }
  const message = error instanceof Error ? error.message : shown(error);
  return { code: "runtime_error", message, detail: {}, retryable: false };
}

// String() throws for an object with no toString (a null prototype) or one
// that throws; an error path must not throw a second time.
function shown(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
