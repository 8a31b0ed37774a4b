/**
 * Latency summaries shared by the relay benches.
 *
 * @module
 */

/** Latency figures of one mode, in milliseconds. */
export interface LatencyStats {
  /** The 50th percentile. */
  median: number;
  /** The 99th percentile (nearest rank). */
  p99: number;
  /** The fastest. */
  min: number;
  /** The slowest. */
  max: number;
  /** How many latencies. */
  count: number;
}

/**
 * Summarizes latencies (nearest-rank percentiles).
 *
 * @param values latencies in ms, in any order
 * @returns median, p99, min, max and count
 * @throws {RangeError} when `values` is empty
 * @example Summarize
 * ```ts
 * import { latencyStats } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.equal(latencyStats([3, 1, 2]).median, 2);
 * ```
 */
export function latencyStats(values: number[]): LatencyStats {
  if (values.length === 0) throw new RangeError("No latencies to summarize");
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
  return {
    median: rank(0.5),
    p99: rank(0.99),
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    count: sorted.length,
  };
}

/**
 * Formats latency figures as one line.
 *
 * @param stats the figures
 * @returns `median 0.41 ms, p99 1.20 ms, min 0.20 ms, max 1.50 ms (2000 tokens)`
 * @example Format
 * ```ts
 * import { formatLatency } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.match(formatLatency({ median: 1, p99: 2, min: 0.5, max: 3, count: 4 }), /^median 1.00 ms/);
 * ```
 */
export function formatLatency(stats: LatencyStats): string {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  return `median ${ms(stats.median)}, p99 ${ms(stats.p99)}, min ${
    ms(stats.min)
  }, max ${ms(stats.max)} (${stats.count} tokens)`;
}
