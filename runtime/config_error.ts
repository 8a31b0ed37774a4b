/**
 * The one error a host configuration raises, whatever went wrong with it.
 *
 * @module
 */

/**
 * A config that cannot be read, parsed or validated; the message says where.
 *
 * @example Catch it apart from other errors
 * ```ts
 * import { ConfigError } from "./config_error.ts";
 * import assert from "node:assert/strict";
 * const error = new ConfigError("skillbox.jsonc:2:3: Value expected");
 * assert.equal(error.name, "ConfigError");
 * assert.ok(error instanceof Error);
 * ```
 */
export class ConfigError extends Error {
  /**
   * @param message `file:line:column: problem` or `file: field.path: problem`
   * @param options `cause`
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
