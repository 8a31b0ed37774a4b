import assert from "node:assert/strict";
import { CsvProfiler, uniqueNames } from "./_csv_profiler.ts";

Deno.test("CsvProfiler counts ragged rows with their 1-based numbers", () => {
  const p = new CsvProfiler(",");
  p.feed("a,b\n1,2\n3\n4,5,6\n7,8\n");
  const profile = p.finish();
  assert.equal(profile.rows, 4);
  assert.equal(profile.ragged_rows, 2);
  assert.deepEqual(profile.ragged_examples, [2, 3]);
  // A missing cell counts as empty.
  assert.equal(profile.columns[1]?.nulls, 1);
  assert.equal(profile.columns.length, 2);
});

Deno.test("CsvProfiler without a header names columns by position", () => {
  const p = new CsvProfiler(";", { header: false });
  p.feed("1;x\n2;y");
  assert.equal(p.rows, 1); // the last row ends only at finish()
  const profile = p.finish();
  assert.deepEqual(profile.columns.map((c) => c.name), [
    "column_1",
    "column_2",
  ]);
  assert.equal(profile.rows, 2);
  assert.equal(profile.header, false);
  assert.equal(profile.delimiter, ";");
  assert.equal(profile.columns[0]?.type, "integer");
});

Deno.test("CsvProfiler reports a file that ends inside quotes", () => {
  const p = new CsvProfiler(",");
  p.feed('a\n"never closed');
  const profile = p.finish();
  assert.equal(profile.unterminated_quote, true);
  assert.equal(profile.rows, 1);
});

Deno.test("uniqueNames() numbers repeats and names blanks", () => {
  assert.deepEqual(uniqueNames(["x", "x", "", "x"]), [
    "x",
    "x_2",
    "column_3",
    "x_3",
  ]);
});

Deno.test("CsvProfiler keeps all its columns within one memory budget", async (t) => {
  await t.step("distinct values stop being tracked at the budget", () => {
    const p = new CsvProfiler(",", { maxBytes: 100_000 });
    const rows = Array.from(
      { length: 2_000 },
      (_, i) => `${"x".repeat(100)}${i},${"y".repeat(100)}${i}`,
    );
    p.feed(`a,b\n${rows.join("\n")}\n`);
    const profile = p.finish();
    assert.equal(profile.rows, 2_000);
    for (const column of profile.columns) {
      assert.equal(column.distinct_capped, true);
      assert.ok(column.distinct < 2_000);
    }
  });

  await t.step("numbers kept for the median stop at the budget", () => {
    const p = new CsvProfiler(",", { maxBytes: 100_000 });
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},${-i}`);
    p.feed(`a,b\n${rows.join("\n")}\n`);
    const [a, b] = p.finish().columns;
    assert.equal(a?.median_approximate, true);
    assert.equal(b?.median_approximate, true);
    // Min, max and mean still see every number.
    assert.deepEqual([a?.min, a?.max, a?.mean], [0, 19_999, 9_999.5]);
  });

  await t.step("more columns than the budget holds are refused", () => {
    const p = new CsvProfiler(",", { maxBytes: 100_000 });
    assert.throws(
      () => p.feed(`${Array.from({ length: 1_000 }, (_, i) => i)}\n1\n`),
      /Cannot profile 1000 columns/,
    );
  });
});
