/**
 * `grep`: searches file contents with a regular expression.
 *
 * @module
 */

import { relative } from "node:path/posix";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, realInside, resolveInRoot } from "./_paths.ts";
import { readRegularFile } from "./_read.ts";
import {
  compileGlob,
  looksBinary,
  MAX_WALK_ENTRIES,
  walk,
  type WalkEntry,
} from "./_walk.ts";

interface Args {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
  fixed_strings?: boolean;
  context?: number;
  max_matches?: number;
  include_hidden?: boolean;
}

interface Match {
  path: string;
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

const DEFAULT_MAX_MATCHES = 100;
const MAX_FILE_BYTES = 10_000_000;
const MAX_LINE_CHARS = 500;

export default {
  kind: "tool",
  name: "grep",
  toolkit: "filesystem",
  description:
    "Search the contents of text files under the root for a regular expression and return matching lines with line numbers and optional context lines. Use it to find where a function, setting, error message or word appears; binary files are skipped.",
  tags: ["files", "search", "grep", "regex"],
  idempotent: true,
  input: {
    type: "object",
    properties: {
      pattern: {
        type: "string",
        description:
          "JavaScript regular expression matched against each line (or a literal with fixed_strings)",
      },
      path: {
        type: "string",
        description:
          'File or directory to search, relative to root (default ".")',
      },
      glob: {
        type: "string",
        description:
          'Only search files whose path matches this glob, e.g. "*.ts" or "src/**/*.py"',
      },
      ignore_case: { type: "boolean", description: "Case-insensitive match" },
      fixed_strings: {
        type: "boolean",
        description: "Treat pattern as a literal string, not a regex",
      },
      context: {
        type: "integer",
        minimum: 0,
        maximum: 20,
        description: "Lines of context before and after each match (default 0)",
      },
      max_matches: {
        type: "integer",
        minimum: 1,
        maximum: 5_000,
        description:
          `Stop after this many matches (default ${DEFAULT_MAX_MATCHES})`,
      },
      include_hidden: {
        type: "boolean",
        description: "Also search names starting with . (default false)",
      },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      matches: {
        type: "array",
        description:
          "Matches with `path`, `line` (from 1), `text`, and `before`/`after` context lines",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            line: { type: "integer" },
            text: { type: "string" },
            before: { type: "array", items: { type: "string" } },
            after: { type: "array", items: { type: "string" } },
          },
        },
      },
      files_searched: { type: "integer" },
      files_matched: { type: "integer" },
      skipped_binary: { type: "integer" },
      truncated: { type: "boolean" },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    const { abs, rel } = await resolveInRoot(cfg, args.path ?? ".");
    const regex = compilePattern(args);
    const filter = args.glob ? compileGlob(args.glob) : null;
    // The host held the numbers to the input schema's bounds.
    const context = args.context ?? 0;
    const max = args.max_matches ?? DEFAULT_MAX_MATCHES;

    const info = await Deno.stat(abs);
    const walked = info.isDirectory
      ? walk(abs, { includeHidden: args.include_hidden ?? false })
      : null;
    // A file is searched as a walk of one entry: the glob sees its name.
    const files = walked ?? [{
      abs,
      rel: rel.slice(rel.lastIndexOf("/") + 1),
      type: "file" as const,
    }];

    const matches: Match[] = [];
    let searched = 0;
    let matched = 0;
    let binary = 0;
    let truncated = false;
    for await (const f of files) {
      if (f.type !== "file" && f.type !== "symlink") continue;
      if (filter && !filter.test(f.rel)) continue;
      const lines = await readLines(cfg, f);
      if (lines === null) continue;
      if (lines === "binary") {
        binary++;
        continue;
      }
      searched++;
      const path = relative(cfg.root, f.abs);
      const found = matchLines(lines, regex, { path, context, max }, matches);
      if (found.full) {
        truncated = true;
        break;
      }
      if (found.hit) matched++;
    }
    const capped = walked?.truncated ?? false;
    return withSummary(
      {
        matches,
        files_searched: searched,
        files_matched: matched,
        skipped_binary: binary,
        truncated: truncated || capped,
      },
      `${matches.length} matches in ${matched} of ${searched} files${
        truncated
          ? " (stopped at max_matches)"
          : capped
          ? ` (stopped after ${MAX_WALK_ENTRIES} entries)`
          : ""
      }`,
    );
  },
} satisfies ToolDef<Args>;

/** The pattern as a RegExp (escaped with `fixed_strings`). */
function compilePattern(args: Args): RegExp {
  const source = args.fixed_strings
    ? RegExp.escape(args.pattern)
    : args.pattern;
  try {
    return new RegExp(source, args.ignore_case ? "i" : "");
  } catch (err) {
    throw new SyntaxError(
      `Invalid regular expression "${args.pattern}": ${(err as Error).message}`,
    );
  }
}

/**
 * A file's lines; null to skip it (a symlink leaving the root, not a
 * regular file, more than MAX_FILE_BYTES), "binary" for a binary file.
 */
async function readLines(
  cfg: ReturnType<typeof fsConfig>,
  f: Pick<WalkEntry, "abs" | "type">,
): Promise<string[] | "binary" | null> {
  if (f.type === "symlink" && !(await realInside(cfg, f.abs))) return null;
  const bytes = await readRegularFile(cfg, f.abs, MAX_FILE_BYTES);
  if (bytes === null) return null;
  if (looksBinary(bytes)) return "binary";
  const lines = new TextDecoder().decode(bytes).split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * Adds a file's matching lines to `matches`. `full` when a match was found
 * with `max` matches already kept: the search stops there, and the file
 * is not counted as matched.
 */
function matchLines(
  lines: string[],
  regex: RegExp,
  at: { path: string; context: number; max: number },
  matches: Match[],
): { hit: boolean; full: boolean } {
  let hit = false;
  for (let i = 0; i < lines.length; i++) {
    if (!regex.test(lines[i]!)) continue;
    if (matches.length >= at.max) return { hit, full: true };
    hit = true;
    const m: Match = { path: at.path, line: i + 1, text: clip(lines[i]!) };
    if (at.context > 0) {
      m.before = lines.slice(Math.max(0, i - at.context), i).map(clip);
      m.after = lines.slice(i + 1, i + 1 + at.context).map(clip);
    }
    matches.push(m);
  }
  return { hit, full: false };
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS
    ? line.slice(0, MAX_LINE_CHARS) + "…"
    : line;
}
