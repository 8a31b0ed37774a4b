/**
 * Guessing a CSV file's delimiter. Runs in the sandbox.
 *
 * @module
 */

import { CsvParser } from "./_csv_parser.ts";

/** The delimiters tried, in order of preference on a tie. */
const CANDIDATES = [",", ";", "\t", "|"];

/**
 * Guesses the delimiter from the first lines: the candidate that splits
 * the most lines into the same number (> 1) of fields, outside quotes.
 *
 * @param sample the start of the file
 * @returns `,`, `;`, tab or `|` (`,` when nothing fits)
 * @example Semicolons, and a semicolon inside quotes that does not count
 * ```ts
 * import { sniffDelimiter } from "./_sniff.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sniffDelimiter("a;b;c\n1;2;3\n"), ";");
 * assert.equal(sniffDelimiter('name,note\n"x","a;b"\n'), ",");
 * ```
 */
export function sniffDelimiter(sample: string): string {
  let best = ",";
  let bestScore = 0;
  for (const d of CANDIDATES) {
    const counts: number[] = [];
    const p = new CsvParser(d, (row) => counts.push(row.length));
    p.feed(sample.slice(0, 64 * 1024));
    const lines = counts.slice(0, 20);
    const first = lines[0];
    if (first === undefined || first < 2) continue;
    const consistent = lines.filter((n) => n === first).length;
    const score = consistent * 1000 + first;
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}
