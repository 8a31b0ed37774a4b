/**
 * Text normalization for tool search: how names and descriptions are split
 * into words, which words carry no meaning, and a light stemmer so that
 * "files", "reading" and "created" find "file", "read" and "create".
 *
 * The same functions run on indexed text and on queries, so a stem only has to
 * be consistent, not a real English word ("create" and "creating" both become
 * "creat").
 *
 * @module
 */

/**
 * Words dropped from queries and indexed text: English function words and
 * the filler of requests ("please", "I want to", "how do I"). Domain words
 * such as "file", "data" or "list" are kept on purpose: BM25's IDF already
 * weighs them down when many tools share them, and dropping them would break
 * queries like "delete a file".
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  "a",
  "about",
  "all",
  "an",
  "and",
  "any",
  "are",
  "as",
  "at",
  "be",
  "by",
  "can",
  "could",
  "do",
  "does",
  "e",
  "eg",
  "for",
  "from",
  "g",
  "give",
  "how",
  "i",
  "ie",
  "in",
  "into",
  "is",
  "it",
  "its",
  "let",
  "me",
  "my",
  "need",
  "of",
  "on",
  "or",
  "our",
  "please",
  "should",
  "so",
  "some",
  "such",
  "that",
  "the",
  "their",
  "them",
  "then",
  "there",
  "these",
  "this",
  "those",
  "to",
  "us",
  "use",
  "want",
  "was",
  "we",
  "what",
  "when",
  "where",
  "which",
  "whose",
  "why",
  "will",
  "with",
  "would",
  "you",
  "your",
]);

/** Separators: anything that is not a letter or a digit. */
const SEPARATOR = /[^\p{L}\p{N}]+/u;

/**
 * Splits text into words on spaces, punctuation, `_`, `-`, `.` and camelCase
 * boundaries, so `read_csv`, `read-csv`, `readCsv` and "read csv" give the
 * same words. Case is kept (see {@linkcode normalizeTerm}).
 *
 * @param text any text: a tool name, a description, a query
 * @returns the words, in order, without empty strings
 * @example Names in any convention
 * ```ts
 * import { tokenize } from "./terms.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(tokenize("readCsv"), ["read", "Csv"]);
 * assert.deepEqual(tokenize("github_create_PR"), ["github", "create", "PR"]);
 * assert.deepEqual(tokenize("parseHTMLTable v2"), ["parse", "HTML", "Table", "v2"]);
 * assert.deepEqual(tokenize("SHA-256 hash"), ["SHA", "256", "hash", "SHA256"]);
 * ```
 */
export function tokenize(text: string): string[] {
  const words = text
    // "17%" is a question about percentages.
    .replaceAll("%", " percent ")
    // fooBar -> foo Bar; HTMLTable -> HTML Table. Digits stay attached to
    // their word so "s3", "ec2", "base64" and "sha256" survive.
    .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(SEPARATOR)
    .filter((w) => w.length > 0);
  // Hyphenated compounds are also written joined ("SHA-256" / "sha256",
  // "e-mail" / "email", "on-call" / "oncall"): emit the joined form too.
  for (const compound of text.matchAll(HYPHENATED)) {
    words.push(compound[0].replaceAll("-", ""));
  }
  return words;
}

/**
 * Words joined by single hyphens: "SHA-256", "e-mail", "x-api-key". Tried
 * at word starts only: a match never starts inside a word, and trying from
 * every letter made a long word cost its length squared.
 */
const HYPHENATED = /(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+/gu;

/**
 * Lower-cases and stems one word, or drops it (stop words, bare numbers).
 *
 * The stemmer only removes inflections that change no meaning for tool
 * search: plurals (`-s`, `-es`, `-ies`), `-ing`, `-ed`, and a final `-e`
 * (so "encode", "encoding" and "encoded" meet at "encod"). It leaves words
 * alone when the rest would have no vowel ("string", "ping"), and keeps
 * `-ss`/`-us` endings ("address", "status").
 *
 * @param word one word from {@linkcode tokenize}
 * @returns the normalized term, or null when the word is not searchable
 * @example Inflections meet
 * ```ts
 * import { normalizeTerm } from "./terms.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeTerm("Files"), normalizeTerm("file"));
 * assert.equal(normalizeTerm("writing"), normalizeTerm("write"));
 * assert.equal(normalizeTerm("queries"), normalizeTerm("query"));
 * assert.equal(normalizeTerm("string"), "string");
 * assert.equal(normalizeTerm("status"), "status");
 * assert.equal(normalizeTerm("the"), null);
 * assert.equal(normalizeTerm("2350"), null);
 * ```
 */
export function normalizeTerm(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower) || /^\p{N}+$/u.test(lower)) return null;
  return stem(lower);
}

/**
 * Splits and normalizes text in one go; what the index stores for a field.
 *
 * @param text any text
 * @returns normalized terms, stop words removed, duplicates kept
 * @example A query
 * ```ts
 * import { terms } from "./terms.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(terms("Read a CSV file"), ["read", "csv", "fil"]);
 * ```
 */
export function terms(text: string): string[] {
  return tokenize(text).map(normalizeTerm).filter((t) => t !== null);
}

const VOWEL = /[aeiouy]/;

function stem(word: string): string {
  // Short words and words with digits ("k8s", "s3") are left as they are.
  if (word.length <= 3 || /\p{N}/u.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) {
    w = w.slice(0, -3) + "y";
  } else if (/(?:ss|x|ch|sh|zz)es$/.test(w)) {
    w = w.slice(0, -2); // "matches" -> "match", "boxes" -> "box"
  } else if (w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) {
    w = w.slice(0, -1);
  }
  if (w.endsWith("ing") && w.length >= 6 && VOWEL.test(w.slice(0, -3))) {
    w = undouble(w.slice(0, -3));
  } else if (w.endsWith("ed") && w.length >= 6 && VOWEL.test(w.slice(0, -2))) {
    w = undouble(w.slice(0, -2));
  }
  if (w.endsWith("e") && w.length > 3 && !w.endsWith("ee")) {
    w = w.slice(0, -1);
  }
  return w;
}

/** "stopp" -> "stop", "runn" -> "run"; keeps "ll", "ss" ("install", "pass"). */
function undouble(w: string): string {
  const last = w.at(-1);
  if (last && w.at(-2) === last && !"lsz".includes(last) && !VOWEL.test(last)) {
    return w.slice(0, -1);
  }
  return w;
}
