/**
 * Ids of recorded runs: time-ordered, so that the run store's id index and
 * its events' (run_id, seq) key grow at their right edge instead of landing
 * on a random B-tree page per run (random uuid4 keys made a run's insert
 * twice as dear as the table grew to 40,000 runs).
 *
 * @module
 */

/**
 * Returns a fresh run id: 12 hex digits of the millisecond timestamp, then
 * 20 random hex digits (80 bits from the CSPRNG, so an id cannot be guessed
 * from another). Still 32 lowercase hex characters, like the A2E ids.
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
  if (at === POOL) {
    crypto.getRandomValues(bytes);
    at = 0;
  }
  const i = at++ * RANDOM_BYTES;
  const b = bytes;
  if (now !== lastNow) {
    lastNow = now;
    lastTime = timeHex(now);
  }
  return lastTime + HEX[b[i]!]! + HEX[b[i + 1]!]! + HEX[b[i + 2]!]! +
    HEX[b[i + 3]!]! + HEX[b[i + 4]!]! + HEX[b[i + 5]!]! + HEX[b[i + 6]!]! +
    HEX[b[i + 7]!]! + HEX[b[i + 8]!]! + HEX[b[i + 9]!]!;
}

// 12 hex digits hold milliseconds until the year 10889. Through the table
// (toString(16) and padStart cost ten times as much), once per millisecond.
function timeHex(now: number): string {
  const ms = Math.floor(now);
  const hi = Math.floor(ms / 0x1000000) & 0xffffff;
  const lo = ms & 0xffffff;
  return HEX[hi >> 16]! + HEX[(hi >> 8) & 0xff]! + HEX[hi & 0xff]! +
    HEX[lo >> 16]! + HEX[(lo >> 8) & 0xff]! + HEX[lo & 0xff]!;
}

let lastNow = -1;
let lastTime = "";
// The CSPRNG is asked for 256 ids' bytes at a time, as newId does.
const RANDOM_BYTES = 10;
const POOL = 256;
const bytes = new Uint8Array(POOL * RANDOM_BYTES);
let at = POOL;
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);
