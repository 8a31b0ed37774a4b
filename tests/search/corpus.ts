/**
 * Loads the search test corpus: realistic tool definitions (`tools.json`)
 * and queries with their acceptable answers (`queries.json`).
 *
 * @module
 */

import type { ListedTool } from "../../runtime/tools/filter.ts";
import { tool as domainTool } from "../../protocol/tool.ts";

/** A tool as written in `tools.json`. */
export interface CorpusTool {
  name: string;
  toolkit: string;
  tags: string[];
  description: string;
  /** The input JSON Schema. */
  parameters: Record<string, unknown>;
}

/** A query and the tools that would be a right first answer. */
export interface CorpusQuery {
  query: string;
  expected: string[];
}

/**
 * Reads `tools.json`.
 *
 * @returns the raw tools
 * @example Load
 * ```ts ignore
 * const tools = await loadCorpusTools();
 * ```
 */
export async function loadCorpusTools(): Promise<CorpusTool[]> {
  const url = new URL("./tools.json", import.meta.url);
  return JSON.parse(await Deno.readTextFile(url));
}

/**
 * Reads a query set: `queries.json` (the set the ranker was tuned on) or
 * `holdout_queries.json` (written after tuning, never tuned against).
 *
 * @param set which set
 * @returns the queries
 * @example Load
 * ```ts ignore
 * const queries = await loadCorpusQueries("tuning");
 * ```
 */
export async function loadCorpusQueries(
  set: "tuning" | "holdout" = "tuning",
): Promise<CorpusQuery[]> {
  const file = set === "tuning" ? "./queries.json" : "./holdout_queries.json";
  return JSON.parse(await Deno.readTextFile(new URL(file, import.meta.url)));
}

/**
 * Turns a corpus tool into a registry-like entry, parameters converted with
 * the real schema converter.
 *
 * @param tool a corpus tool
 * @param name an override of its name (benchmarks generate copies)
 * @returns the entry
 * @example Convert
 * ```ts ignore
 * const entry = toEntry(tool);
 * ```
 */
export function toEntry(
  tool: CorpusTool,
  name: string = tool.name,
): ListedTool {
  return {
    ...domainTool({
      name,
      description: tool.description,
      tags: tool.tags,
      toolkit: tool.toolkit,
      inputSchema: tool.parameters,
    }),
    origin: "file",
  };
}
