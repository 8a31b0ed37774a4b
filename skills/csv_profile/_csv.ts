/**
 * A streaming RFC 4180 CSV parser and a column profiler, for the
 * `csv_profile` skill. Runs in the sandbox: imports only its siblings.
 *
 * The pieces: `_csv_parser.ts` (the chunked parser), `_sniff.ts` (delimiter
 * guess), `_column_stats.ts` and `_numeric_stats.ts` (one column's
 * profile), `_csv_profiler.ts` (a whole file).
 *
 * @module
 */

export { CsvParser } from "./_csv_parser.ts";
export { sniffDelimiter } from "./_sniff.ts";
export type { ColumnProfile, ColumnType } from "./_column_stats.ts";
export {
  type CsvProfile,
  CsvProfiler,
  type ProfilerOptions,
} from "./_csv_profiler.ts";
