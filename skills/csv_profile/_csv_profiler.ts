/**
 * Profiles a CSV file fed in chunks: parses it, names the columns, counts
 * ragged rows, and profiles each column. Runs in the sandbox.
 *
 * @module
 */

import { type ColumnProfile, ColumnStats } from "./_column_stats.ts";
import { CsvParser } from "./_csv_parser.ts";
import { MemoryBudget } from "./_memory_budget.ts";

// The estimated size of an empty column's profile.
const COLUMN_BYTES = 2048;

/** Options for {@link CsvProfiler}. */
export interface ProfilerOptions {
  /** @default true */
  header?: boolean;
  /** Distinct values tracked per column. @default 10000 */
  maxDistinct?: number;
  /** Sample values kept per column. @default 5 */
  sampleSize?: number;
  /**
   * Memory the whole profile may hold, estimated: past it, distinct values
   * are capped and medians sampled. @default 67108864 (64 MiB)
   */
  maxBytes?: number;
}

/** The profile of a whole file. */
export interface CsvProfile {
  rows: number;
  columns: ColumnProfile[];
  delimiter: string;
  header: boolean;
  /** Rows whose field count differs from the header's. */
  ragged_rows: number;
  /** 1-based data row numbers of the first ragged rows. */
  ragged_examples: number[];
  /** True when the file ended inside a quoted field. */
  unterminated_quote: boolean;
}

/**
 * Profiles CSV text fed in chunks.
 *
 * @example Types, nulls, means and the most frequent value
 * ```ts
 * import { CsvProfiler } from "./_csv_profiler.ts";
 * import assert from "node:assert/strict";
 * const p = new CsvProfiler(",");
 * p.feed("id,price,city\n1,2.5,Oslo\n2,,Rome\n3,4.5,Oslo\n");
 * const profile = p.finish();
 * assert.equal(profile.rows, 3);
 * assert.equal(profile.columns[1]?.type, "number");
 * assert.equal(profile.columns[1]?.nulls, 1);
 * assert.equal(profile.columns[1]?.mean, 3.5);
 * assert.deepEqual(profile.columns[2]?.top[0], { value: "Oslo", count: 2 });
 * ```
 */
export class CsvProfiler {
  #parser: CsvParser;
  #options: Required<ProfilerOptions>;
  #budget: MemoryBudget;
  #columns: ColumnStats[] | null = null;
  #rows = 0;
  #ragged = 0;
  #raggedExamples: number[] = [];
  #delimiter: string;

  /**
   * @param delimiter one character
   * @param options header, caps
   */
  constructor(delimiter: string, options: ProfilerOptions = {}) {
    this.#delimiter = delimiter;
    this.#options = {
      header: options.header ?? true,
      maxDistinct: options.maxDistinct ?? 10_000,
      sampleSize: options.sampleSize ?? 5,
      maxBytes: options.maxBytes ?? 64 << 20,
    };
    this.#budget = new MemoryBudget(this.#options.maxBytes);
    this.#parser = new CsvParser(delimiter, (row) => this.#row(row));
  }

  /** Data rows profiled so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Profiles the next chunk of text. */
  feed(text: string): void {
    this.#parser.feed(text);
  }

  /** Ends the input and returns the profile. */
  finish(): CsvProfile {
    const unterminated = this.#parser.inQuotes;
    this.#parser.end();
    return {
      rows: this.#rows,
      columns: (this.#columns ?? []).map((c) => c.profile(this.#rows)),
      delimiter: this.#delimiter,
      header: this.#options.header,
      ragged_rows: this.#ragged,
      ragged_examples: this.#raggedExamples,
      unterminated_quote: unterminated,
    };
  }

  #row(row: string[]): void {
    const o = this.#options;
    if (this.#columns === null) {
      const names = o.header
        ? uniqueNames(row)
        : row.map((_, i) => `column_${i + 1}`);
      if (!this.#budget.take(names.length * COLUMN_BYTES)) {
        throw new RangeError(
          `Cannot profile ${names.length} columns within ${o.maxBytes} bytes of memory`,
        );
      }
      const caps = { ...o, budget: this.#budget };
      this.#columns = names.map((n) => new ColumnStats(n, caps));
      if (o.header) return;
    }
    this.#rows++;
    const cols = this.#columns;
    if (row.length !== cols.length) {
      this.#ragged++;
      if (this.#raggedExamples.length < 5) {
        this.#raggedExamples.push(this.#rows);
      }
    }
    for (let i = 0; i < cols.length; i++) cols[i]!.add(row[i] ?? "");
  }
}

/**
 * Column names from a header row: trimmed, blanks named by position, and
 * repeats numbered so every name is unique.
 *
 * @param row the header row
 * @returns one name per field
 * @example
 * ```ts
 * import { uniqueNames } from "./_csv_profiler.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(uniqueNames(["id", " ", "id"]), ["id", "column_2", "id_2"]);
 * ```
 */
export function uniqueNames(row: string[]): string[] {
  const seen = new Map<string, number>();
  return row.map((raw, i) => {
    const base = raw.trim() || `column_${i + 1}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}_${n + 1}`;
  });
}
