/**
 * `list_dir`: lists a directory, optionally recursively.
 *
 * @module
 */

import { relative } from "node:path/posix";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, resolveInRoot } from "./_paths.ts";
import { type EntryType, walk } from "./_walk.ts";

interface Args {
  path?: string;
  recursive?: boolean;
  max_depth?: number;
  include_hidden?: boolean;
  max_entries?: number;
}

interface Entry {
  path: string;
  type: EntryType;
  size?: number;
}

const DEFAULT_MAX_ENTRIES = 500;

export default {
  kind: "tool",
  name: "list_dir",
  toolkit: "filesystem",
  description:
    "List the files and subdirectories of a directory under the root, with type and size. Use it to explore a project's layout; set `recursive` for a tree (depth-capped). To find files by name pattern, use `find_files` instead.",
  tags: ["files", "list", "directory"],
  idempotent: true,
  input: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: 'Directory relative to root (default ".")',
      },
      recursive: {
        type: "boolean",
        description: "Also list subdirectories' contents",
      },
      max_depth: {
        type: "integer",
        minimum: 1,
        maximum: 10,
        description: "Levels to descend when recursive (default 3)",
      },
      include_hidden: {
        type: "boolean",
        description: "Include names starting with . (default true)",
      },
      max_entries: {
        type: "integer",
        minimum: 1,
        maximum: 10_000,
        description: `Most entries to return (default ${DEFAULT_MAX_ENTRIES})`,
      },
    },
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      path: { type: "string" },
      entries: {
        type: "array",
        description:
          "Entries with `path` (relative to root), `type` (file, dir, symlink, other) and `size` (files)",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            type: { type: "string", enum: ["file", "dir", "symlink", "other"] },
            size: { type: "integer" },
          },
        },
      },
      truncated: { type: "boolean" },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    const { abs, rel } = await resolveInRoot(cfg, args.path ?? ".");
    const info = await Deno.stat(abs);
    if (!info.isDirectory) throw new Error(`"${rel}" is not a directory`);
    const entries: Entry[] = [];
    // The host held the numbers to the input schema's bounds.
    const walked = walk(abs, {
      maxDepth: args.recursive ? args.max_depth ?? 3 : 1,
      includeHidden: args.include_hidden ?? true,
      maxVisited: args.max_entries ?? DEFAULT_MAX_ENTRIES,
    });
    for await (const e of walked) {
      const entry: Entry = {
        path: relative(cfg.root, e.abs),
        type: e.type,
      };
      if (e.type === "file") {
        entry.size = (await Deno.lstat(e.abs).catch(() => null))?.size ?? 0;
      }
      entries.push(entry);
    }
    const dirs = entries.filter((e) => e.type === "dir").length;
    return withSummary(
      { path: rel, entries, truncated: walked.truncated },
      `${entries.length - dirs} files and ${dirs} directories in "${rel}"${
        walked.truncated ? " (truncated)" : ""
      }`,
    );
  },
} satisfies ToolDef<Args>;
