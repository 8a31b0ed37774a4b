/**
 * A streaming RFC 4180 CSV parser and a column profiler, for the
 * `csv_profile` skill. Runs in the sandbox: imports nothing.
 *
 * The parser takes text in chunks of any size (a quoted field may span
 * chunks, and contain delimiters, doubled quotes and newlines), so a large
 * file is profiled page by page without holding it whole.
 *
 * @module
 */

/**
 * Parses CSV incrementally.
 *
 * @example Quotes, escaped quotes and embedded newlines
 * ```ts
 * import { CsvParser } from "./_csv.ts";
 * import assert from "node:assert/strict";
 * const rows: string[][] = [];
 * const p = new CsvParser(",", (r) => rows.push(r));
 * p.feed('a,"b ""x"", c"\n1,"two\nlines"');
 * p.end();
 * assert.deepEqual(rows, [["a", 'b "x", c'], ["1", "two\nlines"]]);
 * ```
 */
export class CsvParser {
  #delimiter: string;
  #onRow: (row: string[]) => void;
  #field = "";
  #row: string[] = [];
  #inQuotes = false;
  // A quote seen inside a quoted field: either an escaped quote or the end.
  #quotePending = false;
  #fieldStarted = false;
  #lastWasCr = false;

  /**
   * @param delimiter one character
   * @param onRow receives each complete row
   */
  constructor(delimiter: string, onRow: (row: string[]) => void) {
    this.#delimiter = delimiter;
    this.#onRow = onRow;
  }

  /** Parses the next chunk. */
  feed(text: string): void {
    const d = this.#delimiter;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (this.#lastWasCr) {
        this.#lastWasCr = false;
        if (c === "\n") continue; // CRLF ends one row, not two
      }
      if (this.#inQuotes) {
        if (this.#quotePending) {
          this.#quotePending = false;
          if (c === '"') {
            this.#field += '"';
            continue;
          }
          this.#inQuotes = false; // the quote closed the field; handle c below
        } else if (c === '"') {
          this.#quotePending = true;
          continue;
        } else {
          this.#field += c;
          continue;
        }
      }
      if (c === '"' && !this.#fieldStarted) {
        this.#inQuotes = true;
        this.#fieldStarted = true;
      } else if (c === d) {
        this.#endField();
      } else if (c === "\n" || c === "\r") {
        this.#lastWasCr = c === "\r";
        this.#endRow();
      } else {
        this.#field += c;
        this.#fieldStarted = true;
      }
    }
  }

  /** Flushes the last row (a file need not end with a newline). */
  end(): void {
    if (this.#quotePending) {
      this.#quotePending = false;
      this.#inQuotes = false;
    }
    if (this.#fieldStarted || this.#row.length > 0) this.#endRow();
  }

  /** True while inside an unterminated quoted field. */
  get inQuotes(): boolean {
    return this.#inQuotes && !this.#quotePending;
  }

  #endField(): void {
    this.#row.push(this.#field);
    this.#field = "";
    this.#fieldStarted = false;
  }

  #endRow(): void {
    this.#endField();
    const row = this.#row;
    this.#row = [];
    // Skip blank lines: a lone empty field is not a record.
    if (row.length === 1 && row[0] === "") return;
    this.#onRow(row);
  }
}

/**
 * Guesses the delimiter from the first lines: the candidate that splits
 * the most lines into the same number (> 1) of fields, outside quotes.
 *
 * @param sample the start of the file
 * @returns `,`, `;`, tab or `|` (`,` when nothing fits)
 * @example
 * ```ts
 * import { sniffDelimiter } from "./_csv.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sniffDelimiter("a;b;c\n1;2;3\n"), ";");
 * assert.equal(sniffDelimiter('name,note\n"x","a;b"\n'), ",");
 * ```
 */
export function sniffDelimiter(sample: string): string {
  let best = ",";
  let bestScore = 0;
  for (const d of [",", ";", "\t", "|"]) {
    const counts: number[] = [];
    const p = new CsvParser(d, (row) => counts.push(row.length));
    p.feed(sample.slice(0, 64 * 1024));
    const lines = counts.slice(0, 20);
    if (lines.length === 0) continue;
    const first = lines[0]!;
    if (first < 2) continue;
    const consistent = lines.filter((n) => n === first).length;
    const score = consistent * 1000 + first;
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

/** The inferred type of a column. */
export type ColumnType =
  | "empty"
  | "integer"
  | "number"
  | "boolean"
  | "date"
  | "datetime"
  | "string";

/** The profile of one column. */
export interface ColumnProfile {
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
  /** Numeric columns only. */
  min?: number;
  max?: number;
  mean?: number;
  median?: number;
  stddev?: number;
  /** True when the median came from a sample of the values. */
  median_approximate?: boolean;
  /** String columns only: shortest and longest value, in characters. */
  min_length?: number;
  max_length?: number;
  /** Date columns only: earliest and latest, as written. */
  earliest?: string;
  latest?: string;
}

const NULLS = new Set(["", "na", "n/a", "null", "nan", "none", "-"]);
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEAN = new Set(["true", "false", "yes", "no"]);
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
// Numbers kept per column for the median; beyond it, a reservoir sample.
const MEDIAN_KEEP = 200_000;

class ColumnStats {
  name: string;
  nulls = 0;
  seen = 0;
  integer = 0;
  number = 0;
  boolean = 0;
  date = 0;
  datetime = 0;
  counts = new Map<string, number>();
  capped = false;
  samples: string[] = [];
  n = 0;
  mean = 0;
  m2 = 0;
  min = Infinity;
  max = -Infinity;
  values: number[] = [];
  minLength = Infinity;
  maxLength = 0;
  earliest: string | null = null;
  latest: string | null = null;

  constructor(
    name: string,
    readonly maxDistinct: number,
    readonly sampleSize: number,
  ) {
    this.name = name;
  }

  add(raw: string): void {
    const value = raw.trim();
    if (NULLS.has(value.toLowerCase())) {
      this.nulls++;
      return;
    }
    this.seen++;
    if (
      this.samples.length < this.sampleSize && !this.samples.includes(value)
    ) {
      this.samples.push(value);
    }
    if (!this.capped) {
      const c = this.counts.get(value);
      if (c !== undefined) this.counts.set(value, c + 1);
      else if (this.counts.size < this.maxDistinct) this.counts.set(value, 1);
      else this.capped = true;
    }
    this.minLength = Math.min(this.minLength, value.length);
    this.maxLength = Math.max(this.maxLength, value.length);
    if (INTEGER.test(value)) this.integer++;
    if (NUMBER.test(value)) {
      this.number++;
      const x = Number(value);
      this.min = Math.min(this.min, x);
      this.max = Math.max(this.max, x);
      // Welford: a stable mean and variance in one pass.
      this.n++;
      const delta = x - this.mean;
      this.mean += delta / this.n;
      this.m2 += delta * (x - this.mean);
      if (this.values.length < MEDIAN_KEEP) this.values.push(x);
      else {
        const j = Math.floor(Math.random() * this.n);
        if (j < MEDIAN_KEEP) this.values[j] = x;
      }
    }
    if (BOOLEAN.has(value.toLowerCase())) this.boolean++;
    const isDate = DATE.test(value);
    const isDatetime = !isDate && DATETIME.test(value);
    if (isDate) this.date++;
    if (isDatetime) this.datetime++;
    if (isDate || isDatetime) {
      // ISO dates order as text.
      if (this.earliest === null || value < this.earliest) {
        this.earliest = value;
      }
      if (this.latest === null || value > this.latest) this.latest = value;
    }
  }

  profile(rows: number): ColumnProfile {
    const type: ColumnType = this.seen === 0
      ? "empty"
      : this.integer === this.seen
      ? "integer"
      : this.number === this.seen
      ? "number"
      : this.boolean === this.seen
      ? "boolean"
      : this.date === this.seen
      ? "date"
      : this.date + this.datetime === this.seen
      ? "datetime"
      : "string";
    const top = this.capped ? [] : [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 5)
      .map(([value, count]) => ({ value, count }));
    const out: ColumnProfile = {
      name: this.name,
      type,
      nulls: this.nulls,
      null_ratio: rows === 0 ? 0 : round(this.nulls / rows, 4),
      distinct: this.counts.size,
      distinct_capped: this.capped,
      samples: this.samples,
      top,
    };
    if (type === "integer" || type === "number") {
      const sorted = Float64Array.from(this.values).sort();
      const mid = sorted.length >> 1;
      out.min = this.min;
      out.max = this.max;
      out.mean = round(this.mean, 6);
      out.median = sorted.length % 2
        ? sorted[mid]!
        : (sorted[mid - 1]! + sorted[mid]!) / 2;
      out.stddev = this.n > 1 ? round(Math.sqrt(this.m2 / (this.n - 1)), 6) : 0;
      if (this.n > MEDIAN_KEEP) out.median_approximate = true;
    } else if (type === "date" || type === "datetime") {
      out.earliest = this.earliest ?? undefined;
      out.latest = this.latest ?? undefined;
    } else if (type === "string") {
      out.min_length = this.minLength;
      out.max_length = this.maxLength;
    }
    return out;
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Options for {@link CsvProfiler}. */
export interface ProfilerOptions {
  /** @default true */
  header?: boolean;
  /** Distinct values tracked per column. @default 10000 */
  maxDistinct?: number;
  /** Sample values kept per column. @default 5 */
  sampleSize?: number;
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
 * @example
 * ```ts
 * import { CsvProfiler } from "./_csv.ts";
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
    };
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
      this.#columns = names.map((n) =>
        new ColumnStats(n, o.maxDistinct, o.sampleSize)
      );
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

function uniqueNames(row: string[]): string[] {
  const seen = new Map<string, number>();
  return row.map((raw, i) => {
    const base = raw.trim() || `column_${i + 1}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}_${n + 1}`;
  });
}
