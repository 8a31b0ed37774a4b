/**
 * Substring search in time linear in the text, whatever the pattern's
 * shape. V8's own `indexOf`/`includes`/`replaceAll` compare a long pattern
 * again from nearly every place of a text when it is one letter repeated
 * around another (a 4 KiB pattern in 4 MiB of that letter: 36 s), and the
 * host looks for secrets a session chooses itself in texts a module or an
 * upstream writes: one such search held the host's one thread for minutes.
 *
 * @module
 */

/**
 * Where `pattern` first occurs in `text` from `from` on, or -1, like
 * `String.prototype.indexOf`. V8's own search up to 256 characters (it
 * took at most 0.1 s on 4 MiB in the shapes measured: the letter around
 * another, before it, after it); one pass of Knuth-Morris-Pratt beyond.
 *
 * @param text what is searched
 * @param pattern what is looked for
 * @param from where the search starts
 * @returns the index of the first occurrence, or -1
 * @example
 * ```ts
 * import { indexOfText } from "./text_search.ts";
 * import assert from "node:assert/strict";
 * const long = "a".repeat(300) + "b";
 * assert.equal(indexOfText(`xx${long}`, long), 2);
 * assert.equal(indexOfText("a".repeat(10_000), long), -1);
 * ```
 */
export function indexOfText(text: string, pattern: string, from = 0): number {
  const m = pattern.length;
  if (m <= NATIVE_SEARCH) return text.indexOf(pattern, from);
  const border = prefixTable(pattern, m);
  let n = 0;
  for (let at = from; at < text.length; at++) {
    const c = text.charCodeAt(at);
    while (n > 0 && pattern.charCodeAt(n) !== c) n = border[n - 1]!;
    if (pattern.charCodeAt(n) === c && ++n === m) return at - m + 1;
  }
  return -1;
}

// Patterns longer than this are searched for by indexOfText()'s own pass.
const NATIVE_SEARCH = 256;

/**
 * `text` with every occurrence of `pattern` replaced by `by`, left to
 * right without overlaps, like `String.prototype.replaceAll` with a plain
 * string, in one pass (see {@link indexOfText}). The same string when
 * there is none.
 *
 * @param text what is searched
 * @param pattern what is replaced
 * @param by what replaces it
 * @returns the text with each occurrence replaced
 * @example
 * ```ts
 * import { replaceAllText } from "./text_search.ts";
 * import assert from "node:assert/strict";
 * assert.equal(replaceAllText("a-b-c", "-", "+"), "a+b+c");
 * ```
 */
export function replaceAllText(
  text: string,
  pattern: string,
  by: string,
): string {
  if (pattern.length <= NATIVE_SEARCH) {
    return text.includes(pattern) ? text.replaceAll(pattern, () => by) : text;
  }
  let at = indexOfText(text, pattern);
  if (at < 0) return text;
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at) + by;
    from = at + pattern.length;
    at = indexOfText(text, pattern, from);
  }
  return out + text.slice(from);
}

/**
 * The Knuth-Morris-Pratt table of `pattern`'s first `m` characters: at
 * `i`, the length of the longest proper prefix that also ends at `i`. A
 * table reused for usual lengths, so a search allocates none: read it
 * before the next call.
 *
 * @param pattern the pattern
 * @param m how many of its characters the table covers
 * @returns the table (its first `m` entries)
 * @example
 * ```ts
 * import { prefixTable } from "./text_search.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...prefixTable("abcabd", 6).slice(0, 6)], [0, 0, 0, 1, 2, 0]);
 * ```
 */
export function prefixTable(pattern: string, m: number): Int32Array {
  const border = m <= SCRATCH.length ? SCRATCH : new Int32Array(m);
  border[0] = 0;
  for (let i = 1, k = 0; i < m; i++) {
    const c = pattern.charCodeAt(i);
    while (k > 0 && pattern.charCodeAt(k) !== c) k = border[k - 1]!;
    if (pattern.charCodeAt(k) === c) k++;
    border[i] = k;
  }
  return border;
}

const SCRATCH = new Int32Array(1024);
