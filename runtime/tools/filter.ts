/**
 * List-mode helpers for `tool/list/req` (A2E-WIRE.md §4): `filter_tags`,
 * `filter_kind`, deferred tools and a deterministic order. They work on a
 * {@linkcode ListedTool} (the domain tool and its origin) so they stay
 * independent of how the registry stores tools; the registry passes its own
 * entries (which are listed tools) and gets the same objects back.
 *
 * `filter_kind` semantics: an empty kind matches every tool; otherwise a tool
 * matches when the kind equals its origin (`builtin` for tools shipped with
 * skillbox, `file` for drop-in modules, `mcp` for tools proxied from an MCP
 * server) **or** the name of the toolkit it belongs to.
 *
 * @module
 */

import type { Tool } from "../../protocol/tool.ts";
import type { Origin } from "../registry/types.ts";

/** What list and search need to know about a tool: the tool and its origin. */
export interface ListedTool extends Tool {
  /** Where the tool comes from. */
  readonly origin: Origin;
}

/** Filters of a `tool/list/req`, camelCased. */
export interface ToolFilter {
  /**
   * Tags a tool must all carry (AND); compared case-insensitively.
   * @default {[]}
   */
  filterTags?: readonly string[];
  /**
   * An origin (`builtin`, `file`, `mcp`) or a toolkit name; `""` matches all.
   * @default {""}
   */
  filterKind?: string;
  /**
   * Whether tools with `defer_loading` are included. List mode leaves them
   * out; search mode includes them when the request says so.
   * @default {false}
   */
  includeDeferred?: boolean;
}

/**
 * Tells whether a tool or toolkit carries every one of `tags` (AND;
 * case-insensitive): `filter_tags` of both `tool/list/req` and
 * `toolkit/list/req`.
 *
 * @param owner what carries tags
 * @param tags the tags asked for; none matches all
 * @returns true when each is among the owner's
 * @example
 * ```ts
 * import { hasAllTags } from "./filter.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hasAllTags({ tags: ["git", "API"] }, ["api", "git"]), true);
 * assert.equal(hasAllTags({ tags: ["git"] }, ["git", "api"]), false);
 * ```
 */
export function hasAllTags(
  owner: Pick<Tool, "tags">,
  tags: readonly string[],
): boolean {
  if (tags.length === 0) return true;
  const own = new Set(owner.tags.map((t) => t.toLowerCase()));
  return tags.every((t) => own.has(t.toLowerCase()));
}

// Whether a tool matches a `filter_kind`: its origin or its toolkit.
function matchesKind(entry: ListedTool, kind: string): boolean {
  if (kind === "") return true;
  return entry.origin === kind || entry.toolkit === kind;
}

/**
 * Tells whether a tool passes every filter of a request.
 *
 * @param entry the tool and its origin
 * @param filter tags, kind and whether deferred tools count
 * @returns true when the tool should be listed
 * @example Deferred tools are left out by default
 * ```ts
 * import { matchesFilter } from "./filter.ts";
 * import { tool } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const entry = {
 *   ...tool({ name: "big", description: "", deferLoading: true }),
 *   origin: "file" as const,
 * };
 * assert.equal(matchesFilter(entry, {}), false);
 * assert.equal(matchesFilter(entry, { includeDeferred: true }), true);
 * ```
 */
export function matchesFilter(entry: ListedTool, filter: ToolFilter): boolean {
  if (entry.deferLoading && !filter.includeDeferred) return false;
  return matchesKind(entry, filter.filterKind ?? "") &&
    hasAllTags(entry, filter.filterTags ?? []);
}

/**
 * List mode of `tool/list/req`: the tools passing `filter`, sorted by name.
 *
 * @param entries the registry's tools (any objects with the
 *   {@linkcode ListedTool} fields; the same objects are returned)
 * @param filter tags (AND), kind, and whether deferred tools count
 * @returns a new sorted array
 * @example List the non-deferred tools of a toolkit carrying a tag
 * ```ts
 * import { listTools } from "./filter.ts";
 * import { tool } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const listed = (name: string, tags: string[], deferLoading = false) => ({
 *   ...tool({ name, description: "", tags, toolkit: "fs", deferLoading }),
 *   origin: "builtin" as const,
 * });
 * const entries = [listed("write_file", ["files"]), listed("read_file", ["files", "read"]), listed("huge", ["files"], true)];
 * const names = listTools(entries, { filterKind: "fs", filterTags: ["files"] }).map((e) => e.name);
 * assert.deepEqual(names, ["read_file", "write_file"]);
 * ```
 */
export function listTools<T extends ListedTool>(
  entries: Iterable<T>,
  filter: ToolFilter = {},
): T[] {
  // Tool names are unique (the registry's tools are a map by name): the
  // name alone orders them.
  return Iterator.from(entries).filter((entry) => matchesFilter(entry, filter))
    .toArray().sort((a, b) => compareCodeUnits(a.name, b.name));
}

/**
 * Orders two strings by UTF-16 code units, as `<` does: the same order on
 * every machine and locale (`localeCompare` is neither).
 *
 * @param a one string
 * @param b the other
 * @returns negative when `a` comes first, positive when `b` does, else 0
 * @example
 * ```ts
 * import { compareCodeUnits } from "./filter.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(["b", "a", "B"].sort(compareCodeUnits), ["B", "a", "b"]);
 * ```
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
