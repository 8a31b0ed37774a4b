/**
 * The profile of one CSV column, built one cell at a time: nulls, distinct
 * and frequent values, the inferred type, and the statistics that type
 * calls for. Runs in the sandbox.
 *
 * @module
 */

import { MemoryBudget } from "./_memory_budget.ts";
import { NumericStats, type NumericSummary, round } from "./_numeric_stats.ts";

/** The inferred type of a column. */
export type ColumnType =
  | "empty"
  | "integer"
  | "number"
  | "boolean"
  | "date"
  | "datetime"
  | "string";

/**
 * The profile of one column; the {@link NumericSummary} fields are set for
 * numeric columns only.
 */
export interface ColumnProfile extends Partial<NumericSummary> {
  name: string;
  type: ColumnType;
  /** Empty cells (and `NA`, `null`, `NaN`, `N/A`). */
  nulls: number;
  /** Share of empty cells, 0-1, 4 decimals. */
  null_ratio: number;
  /** Distinct non-empty values (a lower bound when `distinct_capped`). */
  distinct: number;
  distinct_capped: boolean;
  /** The first few distinct non-empty values. */
  samples: string[];
  /** Most frequent values (when not capped). */
  top: { value: string; count: number }[];
  /** String columns only: shortest and longest value, in characters. */
  min_length?: number;
  max_length?: number;
  /** Date columns only: earliest and latest, as written. */
  earliest?: string;
  latest?: string;
}

const NULLS = new Set(["", "na", "n/a", "null", "nan", "none", "-"]);
const INTEGER = /^[+-]?\d+$/;
// One way only to split a run of digits (the point belongs to the optional
// fraction): `\d+\.?\d*` backtracks quadratically on a long cell.
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEAN = new Set(["true", "false", "yes", "no"]);
// The estimated size of a kept string beyond its characters (a map entry).
const ENTRY_BYTES = 64;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Accumulates one column's cells and profiles it.
 *
 * @example A numeric column with a null
 * ```ts
 * import { ColumnStats } from "./_column_stats.ts";
 * import assert from "node:assert/strict";
 * const c = new ColumnStats("price", { maxDistinct: 100, sampleSize: 2 });
 * for (const cell of ["2.5", "NA", "4.5"]) c.add(cell);
 * const p = c.profile(3);
 * assert.equal(p.type, "number");
 * assert.equal(p.nulls, 1);
 * assert.equal(p.mean, 3.5);
 * ```
 */
export class ColumnStats {
  #name: string;
  #maxDistinct: number;
  #sampleSize: number;
  #nulls = 0;
  #seen = 0;
  // Non-null cells that parse as each type.
  #kinds = { integer: 0, number: 0, boolean: 0, date: 0, datetime: 0 };
  #counts = new Map<string, number>();
  #capped = false;
  #samples: string[] = [];
  #numbers: NumericStats;
  #budget: MemoryBudget;
  #minLength = Infinity;
  #maxLength = 0;
  #earliest: string | null = null;
  #latest: string | null = null;

  /**
   * @param name the column's name
   * @param caps distinct values tracked and samples kept, and the memory
   *   shared with other columns (unbounded by default)
   */
  constructor(
    name: string,
    caps: { maxDistinct: number; sampleSize: number; budget?: MemoryBudget },
  ) {
    this.#name = name;
    this.#maxDistinct = caps.maxDistinct;
    this.#sampleSize = caps.sampleSize;
    this.#budget = caps.budget ?? new MemoryBudget(Infinity);
    this.#numbers = new NumericStats(undefined, this.#budget);
  }

  /** Adds one cell (trimmed; null spellings count as empty). */
  add(raw: string): void {
    const value = raw.trim();
    if (NULLS.has(value.toLowerCase())) {
      this.#nulls++;
      return;
    }
    this.#seen++;
    this.#count(value);
    this.#minLength = Math.min(this.#minLength, value.length);
    this.#maxLength = Math.max(this.#maxLength, value.length);
    if (INTEGER.test(value)) this.#kinds.integer++;
    if (NUMBER.test(value)) {
      this.#kinds.number++;
      this.#numbers.add(Number(value));
    }
    if (BOOLEAN.has(value.toLowerCase())) this.#kinds.boolean++;
    const isDate = DATE.test(value);
    const isDatetime = !isDate && DATETIME.test(value);
    if (isDate) this.#kinds.date++;
    if (isDatetime) this.#kinds.datetime++;
    if (isDate || isDatetime) this.#dateRange(value);
  }

  /**
   * The column's profile.
   *
   * @param rows data rows in the file, for the null ratio
   */
  profile(rows: number): ColumnProfile {
    const type = this.#type();
    const top = this.#capped ? [] : [...this.#counts.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 5)
      .map(([value, count]) => ({ value, count }));
    const out: ColumnProfile = {
      name: this.#name,
      type,
      nulls: this.#nulls,
      null_ratio: rows === 0 ? 0 : round(this.#nulls / rows, 4),
      distinct: this.#counts.size,
      distinct_capped: this.#capped,
      samples: this.#samples,
      top,
    };
    if (type === "integer" || type === "number") {
      Object.assign(out, this.#numbers.summary());
    } else if (type === "date" || type === "datetime") {
      out.earliest = this.#earliest ?? undefined;
      out.latest = this.#latest ?? undefined;
    } else if (type === "string") {
      out.min_length = this.#minLength;
      out.max_length = this.#maxLength;
    }
    return out;
  }

  #count(value: string): void {
    const bytes = 2 * value.length + ENTRY_BYTES;
    if (
      this.#samples.length < this.#sampleSize &&
      !this.#samples.includes(value) && this.#budget.take(bytes)
    ) {
      this.#samples.push(value);
    }
    if (this.#capped) return;
    const c = this.#counts.get(value);
    if (c !== undefined) this.#counts.set(value, c + 1);
    else if (
      this.#counts.size < this.#maxDistinct && this.#budget.take(bytes)
    ) {
      this.#counts.set(value, 1);
    } else this.#capped = true;
  }

  // ISO dates order as text.
  #dateRange(value: string): void {
    if (this.#earliest === null || value < this.#earliest) {
      this.#earliest = value;
    }
    if (this.#latest === null || value > this.#latest) this.#latest = value;
  }

  // The narrowest type every non-null cell fits.
  #type(): ColumnType {
    const k = this.#kinds;
    const seen = this.#seen;
    if (seen === 0) return "empty";
    if (k.integer === seen) return "integer";
    if (k.number === seen) return "number";
    if (k.boolean === seen) return "boolean";
    if (k.date === seen) return "date";
    if (k.date + k.datetime === seen) return "datetime";
    return "string";
  }
}
