/**
 * `csv_profile`: profiles a CSV file — row count, column types, empty
 * cells, numeric statistics (min, max, mean, median, standard deviation),
 * distinct counts, most frequent and sample values — streaming progress as
 * it reads. No LLM.
 *
 * Where the data comes from: `path` is read page by page through the
 * filesystem toolkit's `read_file` (so the session's `filesystem` `root`
 * decides what is reachable, and the skill itself needs no file
 * permission); `csv` takes the text inline for data the agent already has.
 *
 * @module
 */

import type { Context, Output, SkillDef } from "../../sandbox/sdk/types.ts";
import { type CsvProfile, CsvProfiler } from "./_csv_profiler.ts";
import { sniffDelimiter } from "./_sniff.ts";

interface Args {
  path?: string;
  csv?: string;
  delimiter?: string;
  header?: boolean;
  sample_size?: number;
  max_distinct?: number;
}

/** Bytes asked of `read_file` per page (its cap is 2 MB). */
const PAGE_BYTES = 1_000_000;
/** Inline text is profiled in slices so progress moves. */
const SLICE_CHARS = 256 * 1024;

/** The fields of a `read_file` result this skill reads. */
interface ReadPage {
  content: string;
  end_line: number;
  truncated: boolean;
  next_start_line: number | null;
  size: number;
}

export default {
  kind: "skill",
  name: "csv_profile",
  version: "1.0.0",
  description:
    "Profile a CSV file: row count, column types, empty cells, numeric min/max/mean/median/stddev, distinct counts, top and sample values. Reads `path` through the filesystem toolkit, or takes the text inline as `csv`.",
  triggers: [
    "profile this csv",
    "what columns does this csv have",
    "summarize the data file",
  ],
  when_to_use:
    "Before analysing or transforming tabular data: to learn its shape, types and data quality (empty cells, ragged rows) without reading it all into the conversation.",
  argument_hint:
    '{"path": "data/sales.csv"} (relative to the filesystem root) or {"csv": "a,b\\n1,2"}',
  category: "data",
  tags: ["csv", "data", "profiling"],
  tools: ["read_file"],
  timeout_seconds: 300,
  input_schema: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "CSV file path, relative to the filesystem toolkit root",
      },
      csv: { type: "string", description: "CSV text, when there is no file" },
      delimiter: {
        type: "string",
        minLength: 1,
        maxLength: 1,
        description:
          "Field delimiter; guessed from the first lines when omitted",
      },
      header: {
        type: "boolean",
        description: "Whether the first row names the columns (default true)",
      },
      sample_size: { type: "integer", minimum: 0, maximum: 50 },
      max_distinct: { type: "integer", minimum: 1, maximum: 1_000_000 },
    },
    anyOf: [{ required: ["path"] }, { required: ["csv"] }],
    additionalProperties: false,
  },
  output_schema: {
    type: "object",
    required: ["rows", "columns", "delimiter"],
    properties: {
      source: { type: "string" },
      rows: { type: "integer" },
      delimiter: { type: "string" },
      header: { type: "boolean" },
      ragged_rows: { type: "integer" },
      columns: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "type", "nulls", "distinct"],
          properties: {
            name: { type: "string" },
            type: { type: "string" },
            nulls: { type: "integer" },
            distinct: { type: "integer" },
          },
        },
      },
    },
  },
  async run(args: Args, ctx: Context): Promise<Output> {
    // CsvProfiler applies the defaults.
    const options = {
      header: args.header,
      sampleSize: args.sample_size,
      maxDistinct: args.max_distinct,
    };
    const start = (firstText: string) => {
      const delimiter = args.delimiter ?? sniffDelimiter(firstText);
      ctx.status(
        `Delimiter ${delimiter === "\t" ? "tab" : `"${delimiter}"`}`,
      );
      return new CsvProfiler(delimiter, options);
    };
    // The input schema asks for one of the two.
    const profiler = args.path !== undefined
      ? await profilePath(args.path, ctx, start)
      : profileInline(args.csv!, ctx, start);
    return report(profiler.finish(), ctx, args.path ?? "inline");
  },
} satisfies SkillDef<Args>;

/** Reads `path` page by page through `read_file`, profiling each page. */
async function profilePath(
  path: string,
  ctx: Context,
  start: (firstText: string) => CsvProfiler,
): Promise<CsvProfiler> {
  ctx.status(`Reading "${path}"`);
  let profiler: CsvProfiler | null = null;
  let line = 1;
  let bytes = 0;
  while (true) {
    ctx.signal.throwIfAborted();
    // The host hands a code skill the tool's data, not its output marker.
    const page = await ctx.tools.call("read_file", {
      path,
      start_line: line,
      // Room for the partial character (3 bytes at most) a cut drops: a
      // line cut at the cap then comes back longer than a page.
      max_bytes: PAGE_BYTES + 4,
    }) as ReadPage;
    const pageBytes = new TextEncoder().encode(page.content).length;
    // read_file cuts a line longer than the page and still moves on:
    // profiling half a record would be silently wrong.
    if (page.end_line === line && pageBytes > PAGE_BYTES + 1) {
      throw new Error(
        `Line ${line} of "${path}" is longer than ${PAGE_BYTES} bytes`,
      );
    }
    profiler ??= start(page.content);
    profiler.feed(page.content);
    bytes += pageBytes;
    const pct = page.size > 0
      ? Math.min(99, Math.floor((bytes / page.size) * 100))
      : 99;
    ctx.progress(pct, `${profiler.rows} rows read`);
    if (!page.truncated || page.next_start_line === null) return profiler;
    line = page.next_start_line;
  }
}

/** Profiles inline text in slices, so progress moves. */
function profileInline(
  text: string,
  ctx: Context,
  start: (firstText: string) => CsvProfiler,
): CsvProfiler {
  const profiler = start(text);
  for (let i = 0; i < text.length; i += SLICE_CHARS) {
    ctx.signal.throwIfAborted();
    profiler.feed(text.slice(i, i + SLICE_CHARS));
    const pct = Math.min(
      99,
      Math.floor(((i + SLICE_CHARS) / text.length) * 100),
    );
    ctx.progress(pct, `${profiler.rows} rows read`);
  }
  return profiler;
}

/** Final progress, warnings about the data's shape, and the output. */
function report(profile: CsvProfile, ctx: Context, source: string): Output {
  ctx.progress(100, `${profile.rows} rows profiled`);
  if (profile.ragged_rows > 0) {
    ctx.log(
      "warn",
      `${profile.ragged_rows} rows have a different number of fields than the header (first: ${
        profile.ragged_examples.join(", ")
      })`,
    );
  }
  if (profile.unterminated_quote) {
    ctx.log("warn", "The data ends inside a quoted field");
  }
  const types = profile.columns.map((c) => `${c.name}:${c.type}`).join(", ");
  return {
    __skillbox_output: true,
    data: { source, ...profile },
    summary:
      `${profile.rows} rows × ${profile.columns.length} columns (${types})`,
  };
}
