/**
 * Search mode of `tool/list/req` (A2E-WIRE.md §4): a BM25+ index
 * (`minisearch`) over tool names, descriptions, tags, toolkit names and
 * parameter names/descriptions, kept up to date incrementally so hot reload
 * does not rebuild it.
 *
 * @module
 */

import MiniSearch, { type SearchResult } from "minisearch";
import { encodeTool, type ToolParameter } from "../../protocol/tool.ts";
import {
  compareCodeUnits,
  type ListedTool,
  matchesFilter,
  type ToolFilter,
} from "../tools/filter.ts";
import { normalizeTerm, terms, tokenize } from "./terms.ts";

/** Options of {@linkcode ToolIndex.search}. */
export interface ToolSearchOptions extends ToolFilter {
  /**
   * The most hits returned.
   * @default {Infinity}
   */
  limit?: number;
}

/** One search result. */
export interface ToolSearchHit<T extends ListedTool = ListedTool> {
  /** The entry as it was added. */
  entry: T;
  /** BM25+ relevance; only comparable within one search. */
  score: number;
}

/** What minisearch stores per tool: one string per searchable field. */
interface IndexedDoc {
  id: string;
  name: string;
  description: string;
  tags: string;
  params: string;
}

/**
 * Field weights. The name says what a tool does most precisely; tags are a
 * curated summary; parameter text is noisy ("path", "limit" are everywhere),
 * so it only breaks ties.
 */
const BOOST = { name: 2, tags: 1.5, description: 1, params: 0.3 };

/**
 * Groups of words that people use for the same thing when they ask for a
 * tool. A query word also searches the other words of its group, at
 * {@linkcode SYNONYM_WEIGHT}, so a tool using the query's own word still
 * wins. General tool vocabulary only, not fitted to any test query.
 */
const SYNONYM_GROUPS: string[][] = [
  ["folder", "directory", "dir"],
  ["link", "url"],
  ["picture", "image", "photo", "img"],
  ["delete", "remove", "erase"],
  ["run", "execute", "exec"],
  ["email", "mail"],
  ["message", "msg"],
  ["repo", "repository"],
  ["k8s", "kubernetes"],
  ["db", "database"],
  ["doc", "document"],
  ["spreadsheet", "excel", "sheet"],
  ["combine", "merge", "concatenate"],
  ["undo", "revert", "rollback"],
  ["summary", "summarize"],
  ["shrink", "smaller", "reduce", "resize", "compress"],
];

/** Normalized term -> the other normalized terms of its groups. */
const SYNONYMS = new Map<string, readonly string[]>();
for (const group of SYNONYM_GROUPS) {
  const normalized = group.map(normalizeTerm).filter((t) => t !== null);
  for (const term of normalized) {
    const others = normalized.filter((other) => other !== term);
    SYNONYMS.set(term, [...new Set([...SYNONYMS.get(term) ?? [], ...others])]);
  }
}

/** How much a synonym counts next to the word itself. */
const SYNONYM_WEIGHT = 0.4;

// Each query word is a prefix and fuzzy lookup over the whole index: a
// question is a few words, and a 4 MB one held the event loop for 0.5 s
// (0.1 s of it splitting the text into words).
const MAX_QUERY_WORDS = 32;
const MAX_QUERY_CHARS = 2048;

/**
 * A search index of tools, updated incrementally.
 *
 * Tool names are unique: the constructor refuses a name given twice,
 * `replace` adds or updates, `remove` drops by name.
 *
 * @typeParam T the registry's entry type; the same objects come back in hits
 * @example Search and filter
 * ```ts
 * import { ToolIndex } from "./tool_index.ts";
 * import { tool } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const listed = (name: string, description: string, deferLoading = false) => ({
 *   ...tool({ name, description, deferLoading }),
 *   origin: "file" as const,
 * });
 * const index = new ToolIndex([
 *   listed("write_file", "Write text to a file on disk"),
 *   listed("read_csv", "Parse a CSV file into rows"),
 *   listed("bulk_csv_export", "Export a table as CSV", true),
 * ]);
 * const hits = index.search("read a csv file");
 * assert.equal(hits[0]?.entry.name, "read_csv");
 * assert.ok(!hits.some((h) => h.entry.name === "bulk_csv_export"));
 * const all = index.search("csv", { includeDeferred: true });
 * assert.equal(all.length, 2);
 * ```
 */
export class ToolIndex<T extends ListedTool = ListedTool> {
  #search: MiniSearch<IndexedDoc>;
  #entries = new Map<string, { entry: T; doc: IndexedDoc }>();

  /**
   * Creates an index holding `entries`.
   *
   * @param entries initial tools
   * @throws {RangeError} when two entries share a name
   */
  constructor(entries: Iterable<T> = []) {
    this.#search = new MiniSearch<IndexedDoc>({
      fields: ["name", "description", "tags", "params"],
      storeFields: [],
      tokenize: (text) => terms(text),
      // Terms arrive normalized from `tokenize`, both when indexing and
      // when searching (queries are normalized in `search`).
      processTerm: (term) => term,
      searchOptions: {
        boost: BOOST,
        // Prefix matching lets "config" find "configuration"; fuzzy matching
        // forgives one typo in longer words. Short words stay exact: a
        // prefix "git" would match "github", "gitlab", ...
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => term.length >= 6 ? 0.2 : false,
        maxFuzzy: 2,
        weights: { prefix: 0.3, fuzzy: 0.3 },
      },
    });
    this.#search.addAll(Array.from(entries, (entry) => this.#claim(entry)));
  }

  /**
   * Adds a tool, or updates the one of the same name (hot reload).
   *
   * @param entry the new version of the tool
   */
  replace(entry: T): void {
    this.remove(entry.name);
    this.#search.add(this.#claim(entry));
  }

  /**
   * Removes a tool.
   *
   * @param name the tool's name
   * @returns true when it was indexed
   */
  remove(name: string): boolean {
    const held = this.#entries.get(name);
    if (!held) return false;
    // `remove` (not `discard`) keeps the index clean synchronously, without
    // minisearch's background vacuuming timers.
    this.#search.remove(held.doc);
    this.#entries.delete(name);
    return true;
  }

  /**
   * Searches tools, best first. Deferred tools are left out unless
   * `includeDeferred`; `filterTags` (AND) and `filterKind` apply as in list
   * mode. A query with no searchable word ("the", "") finds nothing.
   *
   * @param query the agent's words
   * @param options filters and limit
   * @returns hits sorted by decreasing score, then by name
   * @example A limit
   * ```ts
   * import { ToolIndex } from "./tool_index.ts";
   * import { tool } from "../../protocol/tool.ts";
   * import assert from "node:assert/strict";
   * const index = new ToolIndex(["git_commit", "git_push", "git_pull"].map((name) => ({
   *   ...tool({ name, description: `Run ${name.replace("_", " ")}` }),
   *   origin: "builtin" as const,
   * })));
   * assert.equal(index.search("git", { limit: 2 }).length, 2);
   * assert.equal(index.search("push")[0]?.entry.name, "git_push");
   * ```
   */
  search(query: string, options: ToolSearchOptions = {}): ToolSearchHit<T>[] {
    const weight = queryTerms(query);
    if (weight.size === 0) return [];
    const results: SearchResult[] = this.#search.search(
      [...weight.keys()].join(" "),
      {
        // The words are already normalized; splitting them again with the
        // index tokenizer would stem them twice.
        tokenize: (text) => text.split(" "),
        boostTerm: (term) => weight.get(term) ?? 1,
        filter: (result) => {
          const held = this.#entries.get(result.id);
          return held !== undefined && matchesFilter(held.entry, options);
        },
      },
    );
    // Equal scores are common (tools that differ only in a parameter); order
    // them by name so results do not depend on insertion order.
    results.sort((a, b) => b.score - a.score || compareCodeUnits(a.id, b.id));
    const limit = options.limit ?? Infinity;
    const hits: ToolSearchHit<T>[] = [];
    for (const result of results) {
      if (hits.length >= limit) break;
      const held = this.#entries.get(result.id);
      if (held) hits.push({ entry: held.entry, score: result.score });
    }
    return hits;
  }

  #claim(entry: T): IndexedDoc {
    // Parameters are searched as agents see them on the wire (the codec
    // keeps one encoding per tool object).
    const def = encodeTool(entry);
    if (this.#entries.has(def.name)) {
      throw new RangeError(
        `Cannot index tool "${def.name}": a tool of that name is already indexed`,
      );
    }
    const doc: IndexedDoc = {
      id: def.name,
      name: def.name,
      description: def.description,
      tags: [...def.tags, def.toolkit ?? ""].join(" "),
      params: parameterText(def.input_parameters),
    };
    this.#entries.set(def.name, { entry, doc });
    return doc;
  }
}

/**
 * The terms a query searches, with their weight: its own words (1), words
 * written together that the query split ("web page" also searches
 * "webpage", 1), and synonyms ({@linkcode SYNONYM_WEIGHT}).
 */
function queryTerms(query: string): Map<string, number> {
  const weight = new Map<string, number>();
  const raw = tokenize(query.slice(0, MAX_QUERY_CHARS))
    .slice(0, MAX_QUERY_WORDS).map((w) => w.toLowerCase());
  const own: string[] = [];
  raw.forEach((word, i) => {
    const term = normalizeTerm(word);
    if (term === null) return;
    own.push(term);
    weight.set(term, 1);
    const next = raw[i + 1];
    if (next !== undefined && normalizeTerm(next) !== null) {
      const joined = normalizeTerm(word + next);
      if (joined !== null && !weight.has(joined)) weight.set(joined, 1);
    }
  });
  for (const term of own) {
    for (const synonym of SYNONYMS.get(term) ?? []) {
      if (!weight.has(synonym)) weight.set(synonym, SYNONYM_WEIGHT);
    }
  }
  return weight;
}

/** Parameter names and descriptions, nested ones included. */
function parameterText(params: readonly ToolParameter[]): string {
  const parts: string[] = [];
  const walk = (list: readonly ToolParameter[], depth: number) => {
    for (const p of list) {
      parts.push(p.name, p.description);
      if (p.properties && depth < 4) {
        walk(Object.values(p.properties), depth + 1);
      }
    }
  };
  walk(params, 0);
  return parts.join(" ");
}
