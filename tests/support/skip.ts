/**
 * Skipping the tests that need something this machine may lack (npm, npx,
 * Python), except under `CI=true`, where they must run and fail saying what
 * is missing.
 *
 * @module
 */

/**
 * Whether to ignore the tests `what` names: when `missing` (why they cannot
 * run here) is not null and `CI` is not `"true"`. Warns, then, that they are
 * skipped and why.
 *
 * @param what the tests, as the warning names them
 * @param missing why they cannot run here, or null when they can
 * @returns whether to ignore them
 * @example Nothing missing: the tests run
 * ```ts
 * import { skipOutsideCi } from "./skip.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skipOutsideCi("the demo tests", null), false);
 * ```
 */
export function skipOutsideCi(what: string, missing: string | null): boolean {
  if (missing === null || Deno.env.get("CI") === "true") return false;
  // deno-lint-ignore no-console
  console.warn(`skipping ${what}: ${missing}`);
  return true;
}
