/**
 * Ids of recorded runs: time-ordered, so that the run store's id index and
 * its events' (run_id, seq) key grow at their right edge instead of landing
 * on a random B-tree page per run (random uuid4 keys made a run's insert
 * twice as dear as the table grew to 40,000 runs).
 *
 * @module
 */

import { newId } from "../../protocol/envelope.ts";

/**
 * Returns a fresh run id: 12 hex digits of the millisecond timestamp, then
 * the last 20 hex digits of a fresh A2E id ({@link newId}: 74 bits from the
 * CSPRNG, the rest uuid4's fixed version and variant bits, so an id cannot
 * be guessed from another). Still 32 lowercase hex characters, like the
 * A2E ids.
 *
 * @param now the run's start in Unix milliseconds (the caller already read
 *   the clock)
 * @returns 32 lowercase hex characters, ordered by `now`
 * @example Two runs a millisecond apart sort in start order
 * ```ts
 * import { newRunId } from "./run_id.ts";
 * import assert from "node:assert/strict";
 * const a = newRunId(1_700_000_000_000);
 * const b = newRunId(1_700_000_000_001);
 * assert.match(a, /^[0-9a-f]{32}$/);
 * assert.ok(a < b);
 * ```
 */
export function newRunId(now: number): string {
  // Formatted once per millisecond: 12 hex digits hold milliseconds until
  // the year 10889.
  if (now !== lastNow) {
    lastNow = now;
    lastTime = Math.floor(now).toString(16).padStart(12, "0");
  }
  return lastTime + newId().slice(12);
}

let lastNow = -1;
let lastTime = "";
