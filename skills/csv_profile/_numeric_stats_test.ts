import assert from "node:assert/strict";
import { NumericStats, round } from "./_numeric_stats.ts";

Deno.test("NumericStats gives the sample standard deviation and an odd-count median", () => {
  const s = new NumericStats();
  for (const x of [2, 4, 4, 4, 5, 5, 7, 9, 100]) s.add(x);
  const summary = s.summary();
  assert.equal(summary.median, 5);
  assert.equal(summary.min, 2);
  assert.equal(summary.max, 100);
  assert.equal(summary.mean, round(140 / 9, 6));
  assert.equal(summary.stddev, 31.729762); // two-pass reference: 31.7297617
  assert.equal(summary.median_approximate, undefined);
});

Deno.test("NumericStats gives stddev 0 for one value", () => {
  const s = new NumericStats();
  s.add(-3.5);
  assert.deepEqual(s.summary(), {
    min: -3.5,
    max: -3.5,
    mean: -3.5,
    median: -3.5,
    stddev: 0,
  });
});

Deno.test("NumericStats samples past its cap and says the median is approximate", () => {
  const s = new NumericStats(10);
  for (let i = 1; i <= 1000; i++) s.add(i);
  const summary = s.summary();
  assert.equal(summary.median_approximate, true);
  assert.ok(summary.median >= 1 && summary.median <= 1000);
  // Exact figures still cover every value.
  assert.equal(summary.mean, 500.5);
  assert.equal(summary.max, 1000);
});
