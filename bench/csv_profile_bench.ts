/**
 * csv_profile's number pattern on a long run of digits that fails at its
 * end: a pattern with two ways to split the digits backtracks
 * quadratically (40k digits took 13 s), so doubling the run should about
 * double the time. Figures are wall time of this thread, best of 3.
 * Run: `deno task bench csv`.
 *
 * @module
 */

import { ColumnStats } from "../skills/csv_profile/_column_stats.ts";
import type { Bench } from "./main.ts";

/** Milliseconds to type one column holding one cell, best of 3. */
function typeCell(cell: string): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const stats = new ColumnStats("c", { maxDistinct: 100, sampleSize: 3 });
    stats.add(cell);
    stats.profile(1);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** Typing a cell of n digits and a letter, as n doubles. */
export const csvProfileBench: Bench = {
  name: "csv profile digits",
  run(): Promise<string[]> {
    return Promise.resolve(
      [40_000, 80_000, 160_000].map((n) =>
        `${n} digits then "x": ${typeCell("1".repeat(n) + "x").toFixed(2)} ms`
      ),
    );
  },
};
