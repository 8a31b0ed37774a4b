/**
 * The result marker the host reads as `output({ data, summary, exit_code })`.
 * Built literally because a module may import only types from the SDK at
 * runtime.
 *
 * @module
 */

import type { Output } from "../../sandbox/sdk/types.ts";

/**
 * Wraps tool data with the process exit code and a one-line summary.
 *
 * @param data the result data
 * @param exitCode the exit code (null when killed by a signal)
 * @param summary a short human-readable summary
 * @returns the marked output
 */
export function withExitCode(
  data: unknown,
  exitCode: number | null,
  summary: string,
): Output {
  return { __skillbox_output: true, data, summary, exit_code: exitCode };
}
