/**
 * The one error condition the client adds to skillbox's hierarchy.
 *
 * @module
 */

import { SkillboxError } from "../protocol/errors.ts";

/**
 * The WebSocket closed (or never opened) while a call was waiting, or a call
 * was made after {@link Client.close}. Retryable: a fresh connection may
 * succeed.
 *
 * @example Catch it apart from host errors
 * ```ts
 * import { ConnectionClosedError } from "./errors.ts";
 * import { SkillboxError } from "../protocol/errors.ts";
 * import assert from "node:assert/strict";
 * const err = new ConnectionClosedError("Cannot ping: connection closed (code 1006)", { code: 1006, reason: "" });
 * assert.ok(err instanceof SkillboxError);
 * assert.equal(err.closeCode, 1006);
 * assert.equal(err.retryable, true);
 * ```
 */
export class ConnectionClosedError extends SkillboxError {
  /** The WebSocket close code (1006 when the socket dropped). */
  readonly closeCode: number;
  /** The WebSocket close reason, often `""`. */
  readonly closeReason: string;

  /**
   * Creates the error; `detail` records the close code and reason for the wire.
   *
   * @param message what could not finish, and why
   * @param close the socket's close code and reason
   * @param options the `cause`, when there is one
   */
  constructor(
    message: string,
    close: { code: number; reason: string },
    options?: ErrorOptions,
  ) {
    super("runtime_error", message, {
      ...options,
      retryable: true,
      detail: { close_code: close.code, close_reason: close.reason },
    });
    this.name = "ConnectionClosedError";
    this.closeCode = close.code;
    this.closeReason = close.reason;
  }
}
