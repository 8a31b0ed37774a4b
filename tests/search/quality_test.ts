/**
 * Search quality over a corpus of realistic tools: hit@1 and hit@3 of
 * queries phrased as people phrase them. Two query sets: `queries.json`,
 * written before the ranker and used to tune it, and `holdout_queries.json`,
 * written after tuning and never tuned against (the honest figure). The
 * floors sit a little under what the ranker achieves, so a change that makes
 * search worse fails here.
 */

import assert from "node:assert/strict";
import { ToolIndex } from "../../runtime/search/tool_index.ts";
import {
  type CorpusQuery,
  loadCorpusQueries,
  loadCorpusTools,
  toEntry,
} from "./corpus.ts";

/** Result of running one query set. */
interface Quality {
  at1: number;
  at3: number;
  report: string;
}

function evaluate(
  { index, size }: Corpus,
  queries: CorpusQuery[],
): Quality {
  let hit1 = 0;
  let hit3 = 0;
  const misses: string[] = [];
  for (const { query, expected } of queries) {
    const top = index.search(query, { limit: 3 }).map((h) => h.entry.name);
    const rank = top.findIndex((name) => expected.includes(name));
    if (rank === 0) hit1++;
    if (rank >= 0) hit3++;
    if (rank !== 0) {
      misses.push(
        `  ${rank < 0 ? "miss" : `@${rank + 1}`}  "${query}" -> [${
          top.join(", ")
        }], want ${expected.join(" | ")}`,
      );
    }
  }
  const at1 = hit1 / queries.length;
  const at3 = hit3 / queries.length;
  const report = `${queries.length} queries over ${size} tools: ` +
    `hit@1 = ${at1.toFixed(3)}, hit@3 = ${at3.toFixed(3)}\n${
      misses.join("\n")
    }`;
  return { at1, at3, report };
}

// The corpus's tools indexed, and how many they are.
interface Corpus {
  index: ToolIndex;
  size: number;
}

async function corpusIndex(): Promise<Corpus> {
  const tools = await loadCorpusTools();
  return {
    index: new ToolIndex(tools.map((t) => toEntry(t))),
    size: tools.length,
  };
}

Deno.test("the search corpus is large and every expected answer exists", async () => {
  const tools = await loadCorpusTools();
  const names = new Set(tools.map((t) => t.name));
  assert.ok(tools.length >= 200, `${tools.length} tools`);
  assert.equal(names.size, tools.length, "tool names are unique");
  for (const set of ["tuning", "holdout"] as const) {
    const queries = await loadCorpusQueries(set);
    assert.ok(queries.length >= 40, `${set}: ${queries.length} queries`);
    for (const q of queries) {
      for (const name of q.expected) {
        assert.ok(names.has(name), `"${q.query}" expects unknown "${name}"`);
      }
    }
  }
});

Deno.test("ToolIndex.search() finds the right tool for the tuning queries", async () => {
  const q = evaluate(await corpusIndex(), await loadCorpusQueries("tuning"));
  // deno-lint-ignore no-console
  console.log(`search quality (tuning set), ${q.report}`);
  assert.ok(q.at1 >= 0.9, `hit@1 ${q.at1} < 0.9`);
  assert.ok(q.at3 >= 0.95, `hit@3 ${q.at3} < 0.95`);
});

Deno.test("ToolIndex.search() finds the right tool for the held-out queries", async () => {
  const q = evaluate(await corpusIndex(), await loadCorpusQueries("holdout"));
  // deno-lint-ignore no-console
  console.log(`search quality (held-out set), ${q.report}`);
  assert.ok(q.at1 >= 0.85, `hit@1 ${q.at1} < 0.85`);
  assert.ok(q.at3 >= 0.95, `hit@3 ${q.at3} < 0.95`);
});

Deno.test("ToolIndex.search() ranks a csv reader above a generic file writer", async () => {
  const names = (await corpusIndex()).index.search("read a csv file").map((h) =>
    h.entry.name
  );
  assert.equal(names[0], "read_csv");
  assert.ok(names.indexOf("read_csv") < names.indexOf("write_file"));
});
