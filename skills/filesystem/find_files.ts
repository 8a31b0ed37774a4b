/**
 * `find_files`: finds files by glob pattern.
 *
 * @module
 */

import { relative } from "node:path/posix";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, resolveInRoot } from "./_paths.ts";
import { compileGlob, walk } from "./_walk.ts";

interface Args {
  pattern: string;
  path?: string;
  type?: "file" | "dir" | "any";
  include_hidden?: boolean;
  max_results?: number;
}

const DEFAULT_MAX_RESULTS = 500;

export default {
  kind: "tool",
  name: "find_files",
  toolkit: "filesystem",
  description:
    'Find files under the root whose path matches a glob such as "**/*.ts", "src/**/test_*.py" or "*.{json,yaml}". Use it to locate files by name or extension; to search inside files, use `grep`.',
  tags: ["files", "find", "glob", "search"],
  idempotent: true,
  input: {
    type: "object",
    properties: {
      pattern: {
        type: "string",
        description:
          "Glob over paths relative to `path`: `*` and `?` within a name, `**` across directories, `[a-z]`, `{a,b}`. Without a `/` it matches the file name at any depth",
      },
      path: {
        type: "string",
        description: 'Directory to search, relative to root (default ".")',
      },
      type: {
        type: "string",
        enum: ["file", "dir", "any"],
        description: 'What to match (default "file")',
      },
      include_hidden: {
        type: "boolean",
        description:
          "Also search names starting with . such as .github (default false)",
      },
      max_results: {
        type: "integer",
        minimum: 1,
        maximum: 10_000,
        description: `Most paths to return (default ${DEFAULT_MAX_RESULTS})`,
      },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      paths: {
        type: "array",
        items: { type: "string" },
        description: "Matching paths relative to root, sorted",
      },
      truncated: { type: "boolean" },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    const { abs, rel } = await resolveInRoot(cfg, args.path ?? ".");
    const glob = compileGlob(args.pattern);
    const want = args.type ?? "file";
    // The host held max_results to the input schema's bounds.
    const max = args.max_results ?? DEFAULT_MAX_RESULTS;
    // A pattern naming a dot-directory (".github/**") means the agent wants
    // hidden entries even without the flag.
    const includeHidden = args.include_hidden ??
      /(^|\/)\.[^./]/.test(args.pattern);
    const paths: string[] = [];
    let truncated = false;
    const entries = walk(abs, { includeHidden });
    for await (const e of entries) {
      const isDir = e.type === "dir";
      if (want === "file" && isDir) continue;
      if (want === "dir" && !isDir) continue;
      if (!glob.test(e.rel)) continue;
      if (paths.length >= max) {
        truncated = true;
        break;
      }
      paths.push(relative(cfg.root, e.abs));
    }
    truncated ||= entries.truncated;
    return withSummary(
      { paths, truncated },
      `${paths.length} paths match "${args.pattern}" in "${rel}"${
        truncated ? " (truncated)" : ""
      }`,
    );
  },
} satisfies ToolDef<Args>;
