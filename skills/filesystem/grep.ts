/**
 * `grep`: searches file contents with a regular expression.
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, realInside, resolveInRoot } from "./_paths.ts";
import { globToRegExp, looksBinary, walk, type WalkEntry } from "./_walk.ts";

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
const LIMIT_MAX_MATCHES = 5_000;
const MAX_FILE_BYTES = 10_000_000;
const MAX_LINE_CHARS = 500;
const MAX_VISITED = 200_000;

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
        maximum: LIMIT_MAX_MATCHES,
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
    const source = args.fixed_strings
      ? args.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      : args.pattern;
    let regex: RegExp;
    try {
      regex = new RegExp(source, args.ignore_case ? "i" : "");
    } catch (err) {
      throw new SyntaxError(
        `Invalid regular expression "${args.pattern}": ${
          (err as Error).message
        }`,
      );
    }
    const filter = args.glob ? globToRegExp(args.glob) : null;
    const context = Math.min(Math.max(args.context ?? 0, 0), 20);
    const max = Math.min(
      args.max_matches ?? DEFAULT_MAX_MATCHES,
      LIMIT_MAX_MATCHES,
    );

    const info = await Deno.stat(abs);
    const files: AsyncIterable<Pick<WalkEntry, "abs" | "rel" | "type">> =
      info.isDirectory
        ? walk(abs, {
          maxDepth: 64,
          includeHidden: args.include_hidden ?? false,
          maxVisited: MAX_VISITED,
        })
        : oneFile(abs, rel);
    const prefix = info.isDirectory && rel !== "." ? `${rel}/` : "";

    const matches: Match[] = [];
    let searched = 0;
    let matched = 0;
    let binary = 0;
    let truncated = false;
    outer: for await (const f of files) {
      if (f.type !== "file" && f.type !== "symlink") continue;
      if (filter && !filter.test(f.rel)) continue;
      if (f.type === "symlink" && !(await realInside(cfg, f.abs))) continue;
      const st = await Deno.stat(f.abs).catch(() => null);
      if (!st?.isFile || st.size > MAX_FILE_BYTES) continue;
      const bytes = await Deno.readFile(f.abs);
      if (looksBinary(bytes)) {
        binary++;
        continue;
      }
      searched++;
      const lines = new TextDecoder().decode(bytes).split(/\r?\n/);
      if (lines.at(-1) === "") lines.pop();
      let hit = false;
      for (let i = 0; i < lines.length; i++) {
        if (!regex.test(lines[i]!)) continue;
        if (matches.length >= max) {
          truncated = true;
          break outer;
        }
        hit = true;
        const m: Match = {
          path: info.isDirectory ? prefix + f.rel : rel,
          line: i + 1,
          text: clip(lines[i]!),
        };
        if (context > 0) {
          m.before = lines.slice(Math.max(0, i - context), i).map(clip);
          m.after = lines.slice(i + 1, i + 1 + context).map(clip);
        }
        matches.push(m);
      }
      if (hit) matched++;
    }
    return withSummary(
      {
        matches,
        files_searched: searched,
        files_matched: matched,
        skipped_binary: binary,
        truncated,
      },
      `${matches.length} matches in ${matched} of ${searched} files${
        truncated ? " (stopped at max_matches)" : ""
      }`,
    );
  },
} satisfies ToolDef<Args>;

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS
    ? line.slice(0, MAX_LINE_CHARS) + "…"
    : line;
}

async function* oneFile(
  abs: string,
  rel: string,
): AsyncGenerator<Pick<WalkEntry, "abs" | "rel" | "type">> {
  yield { abs, rel: rel.slice(rel.lastIndexOf("/") + 1), type: "file" };
}
