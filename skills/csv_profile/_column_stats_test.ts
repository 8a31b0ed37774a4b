import assert from "node:assert/strict";
import { ColumnStats } from "./_column_stats.ts";

function profile(cells: string[], caps = { maxDistinct: 100, sampleSize: 3 }) {
  const c = new ColumnStats("c", caps);
  for (const cell of cells) c.add(cell);
  return c.profile(cells.length);
}

Deno.test("ColumnStats infers the narrowest type every non-null cell fits", () => {
  const cases: [string[], string][] = [
    [["", "NA", "null"], "empty"],
    [["1", "-2", " 3 "], "integer"],
    [["1", "2.5", "1e3"], "number"],
    [["yes", "No", "TRUE"], "boolean"],
    [["2024-01-02", "2023-12-31"], "date"],
    [["2024-01-02", "2024-01-02T10:00Z"], "datetime"],
    [["1", "x"], "string"],
  ];
  for (const [cells, type] of cases) {
    assert.equal(profile(cells).type, type, cells.join("|"));
  }
});

Deno.test("ColumnStats adds the statistics of the type it inferred", () => {
  const dates = profile(["2024-03-01", "2023-01-05T08:00", "2024-01-01"]);
  assert.equal(dates.earliest, "2023-01-05T08:00");
  assert.equal(dates.latest, "2024-03-01");
  assert.equal(dates.mean, undefined);
  const text = profile(["ab", "abcd", "-", "a"]);
  assert.equal(text.min_length, 1);
  assert.equal(text.max_length, 4);
  assert.equal(text.nulls, 1);
  assert.equal(text.null_ratio, 0.25);
  const numbers = profile(["3", "1", "2"]);
  assert.deepEqual(
    [numbers.min, numbers.max, numbers.median, numbers.min_length],
    [1, 3, 2, undefined],
  );
});

Deno.test("ColumnStats caps distinct values and samples", () => {
  const p = profile(["a", "b", "a", "c", "d"], {
    maxDistinct: 2,
    sampleSize: 2,
  });
  assert.equal(p.distinct_capped, true);
  assert.equal(p.distinct, 2);
  assert.deepEqual(p.top, []); // counts are no longer complete
  assert.deepEqual(p.samples, ["a", "b"]);
  const open = profile(["b", "a", "b", "a", "c"]);
  assert.deepEqual(open.top, [
    { value: "a", count: 2 },
    { value: "b", count: 2 },
    { value: "c", count: 1 },
  ]);
});

Deno.test("ColumnStats reads a long run of digits", () => {
  // A number pattern with two ways to split a run of digits backtracks
  // quadratically on a cell that fails at its end: 40k digits took 13 s.
  // V8 counts no RegExp steps a test could read, so the time is measured
  // in bench/csv_profile_bench.ts; here only the answers.
  const cell = "1".repeat(40_000) + "x";
  assert.equal(profile([cell]).type, "string");
  assert.equal(profile(["1.", "12.5", ".5", "3e-2"]).type, "number");
});
