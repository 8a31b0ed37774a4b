/**
 * The result marker the host reads as `output({ data, summary })`. Built
 * literally because a module may import only types from the SDK at runtime.
 *
 * @module
 */

import type { Output } from "../../sandbox/sdk/types.ts";

/**
 * Wraps tool data with a one-line summary for the agent.
 *
 * @param data the result data
 * @param summary a short human-readable summary
 * @returns the marked output
 */
export function withSummary(data: unknown, summary: string): Output {
  return { __skillbox_output: true, data, summary };
}
