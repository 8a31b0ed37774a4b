/**
 * One-pass statistics of a numeric column. Runs in the sandbox.
 *
 * @module
 */

import { MemoryBudget } from "./_memory_budget.ts";

// Numbers kept per column for the median; beyond it, a reservoir sample.
const MEDIAN_KEEP = 200_000;
// Numbers kept whatever the budget, so a median always has a sample.
const FREE_KEEP = 100;
// The estimated size of one kept number.
const NUMBER_BYTES = 16;

/** The statistics of a numeric column. */
export interface NumericSummary {
  min: number;
  max: number;
  /** Rounded to 6 decimals. */
  mean: number;
  median: number;
  /** Sample standard deviation, rounded to 6 decimals (0 for one value). */
  stddev: number;
  /** Set (true) when the median came from a sample of the values. */
  median_approximate?: boolean;
}

/**
 * Accumulates numbers: min, max, a stable mean and variance (Welford), and
 * a bounded sample for the median.
 *
 * @example Mean, median and spread
 * ```ts
 * import { NumericStats } from "./_numeric_stats.ts";
 * import assert from "node:assert/strict";
 * const s = new NumericStats();
 * for (const x of [4, 1, 3, 2]) s.add(x);
 * const { mean, median, min, max } = s.summary();
 * assert.deepEqual({ mean, median, min, max }, { mean: 2.5, median: 2.5, min: 1, max: 4 });
 * ```
 */
export class NumericStats {
  #n = 0;
  #mean = 0;
  #m2 = 0;
  #min = Infinity;
  #max = -Infinity;
  #values: number[] = [];
  #keep: number;
  #budget: MemoryBudget;

  /**
   * @param keep values kept for the median. @default 200000
   * @param budget memory shared with other columns. @default unbounded
   */
  constructor(
    keep: number = MEDIAN_KEEP,
    budget: MemoryBudget = new MemoryBudget(Infinity),
  ) {
    this.#keep = keep;
    this.#budget = budget;
  }

  /** Adds one number. */
  add(x: number): void {
    this.#min = Math.min(this.#min, x);
    this.#max = Math.max(this.#max, x);
    // Welford: a stable mean and variance in one pass.
    this.#n++;
    const delta = x - this.#mean;
    this.#mean += delta / this.#n;
    this.#m2 += delta * (x - this.#mean);
    const kept = this.#values.length;
    if (
      kept < this.#keep && kept >= FREE_KEEP && !this.#budget.take(NUMBER_BYTES)
    ) {
      this.#keep = kept; // out of memory: sample from here on
    }
    if (kept < this.#keep) this.#values.push(x);
    else {
      const j = Math.floor(Math.random() * this.#n);
      if (j < this.#keep) this.#values[j] = x;
    }
  }

  /** The statistics so far (of at least one number). */
  summary(): NumericSummary {
    const sorted = Float64Array.from(this.#values).sort();
    const mid = sorted.length >> 1;
    const out: NumericSummary = {
      min: this.#min,
      max: this.#max,
      mean: round(this.#mean, 6),
      median: sorted.length % 2
        ? sorted[mid]!
        : (sorted[mid - 1]! + sorted[mid]!) / 2,
      stddev: this.#n > 1 ? round(Math.sqrt(this.#m2 / (this.#n - 1)), 6) : 0,
    };
    if (this.#n > this.#keep) out.median_approximate = true;
    return out;
  }
}

/**
 * Rounds to a number of decimals.
 *
 * @param x the number
 * @param digits decimals kept
 * @returns the rounded number
 * @example
 * ```ts
 * import { round } from "./_numeric_stats.ts";
 * import assert from "node:assert/strict";
 * assert.equal(round(2 / 3, 4), 0.6667);
 * ```
 */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
