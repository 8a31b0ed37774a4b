/**
 * The params of a `tools/call` request, checked by hand: skillbox serves
 * `tools/call` from the SDK `Server`'s fallback request handler, not from a
 * handler set with `setRequestHandler`, whose wrapper parses every call's
 * request twice and its result once with zod (three of the seven zod runs
 * of an MCP call, about 30 µs of a fresh host's CPU per call). What it
 * refuses is refused here the SDK's way: an `InvalidParams` error. The
 * result needs no check at run time: it is built by `tool_mapping.ts`, whose
 * tests hold every shape it makes to the SDK's `CallToolResultSchema`.
 *
 * @module
 */

import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject } from "../../protocol/json.ts";

/** A checked `tools/call` request's params. */
export interface CallParams {
  /** The tool's MCP name. */
  name: string;
  /** Its arguments (an empty object when the request had none). */
  arguments: Record<string, unknown>;
  /** The request's `_meta.progressToken`, if any. */
  progressToken?: string | number;
}

function invalid(why: string): Error & { code: number } {
  return invalidParams(`Invalid tools/call request: ${why}`);
}

/**
 * A JSON-RPC `InvalidParams` (-32602) error for a handler to throw. Not an
 * SDK `McpError`: the SDK sends a thrown error's `message` as is, and an
 * `McpError`'s starts with "MCP error -32602: ", which the client's
 * `McpError` then prefixes again.
 *
 * @param message what is wrong, sentence case
 * @returns the error
 * @example
 * ```ts
 * import { invalidParams } from "./call_params.ts";
 * import assert from "node:assert/strict";
 * const error = invalidParams('Prompt "x" not found');
 * assert.equal(error.code, -32602);
 * assert.equal(error.message, 'Prompt "x" not found');
 * ```
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

/**
 * Checks a `tools/call` request's params as the SDK's
 * `CallToolRequestSchema` does.
 *
 * @param params the request's `params`
 * @returns the name, arguments and progress token
 * @throws {Error} `InvalidParams` (-32602) when they do not fit
 * @example
 * ```ts
 * import { readCallParams } from "./call_params.ts";
 * import assert from "node:assert/strict";
 * const params = readCallParams({
 *   name: "echo",
 *   arguments: { text: "hi" },
 *   _meta: { progressToken: 7 },
 * });
 * assert.deepEqual(params, {
 *   name: "echo",
 *   arguments: { text: "hi" },
 *   progressToken: 7,
 * });
 * assert.throws(() => readCallParams({ name: 3 }), /params.name/);
 * ```
 */
export function readCallParams(params: unknown): CallParams {
  if (!isPlainObject(params)) throw invalid("params must be an object");
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== "string") throw invalid("params.name must be a string");
  if (args !== undefined && !isPlainObject(args)) {
    throw invalid("params.arguments must be an object");
  }
  let progressToken: string | number | undefined;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) throw invalid("params._meta must be an object");
    const token = meta.progressToken;
    if (
      token !== undefined && typeof token !== "string" &&
      typeof token !== "number"
    ) {
      throw invalid("params._meta.progressToken must be a string or number");
    }
    progressToken = token;
  }
  return {
    name,
    arguments: args ?? {},
    ...(progressToken === undefined ? {} : { progressToken }),
  };
}

/**
 * The error the SDK answers a request with when nothing handles its method
 * (JSON-RPC's -32601, message "Method not found"), for a fallback handler
 * to throw.
 *
 * @returns the error
 * @example
 * ```ts
 * import { methodNotFound } from "./call_params.ts";
 * import assert from "node:assert/strict";
 * assert.equal(methodNotFound().code, -32601);
 * ```
 */
export function methodNotFound(): Error & { code: number } {
  return Object.assign(new Error("Method not found"), {
    code: ErrorCode.MethodNotFound,
  });
}
