/**
 * `stat`: tells whether a path exists and what it is.
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, realInside, resolveInRoot } from "./_paths.ts";
import { entryType } from "./_walk.ts";

interface Args {
  path: string;
}

export default {
  kind: "tool",
  name: "stat",
  toolkit: "filesystem",
  description:
    "Check whether a path under the root exists and get its type, size, modification time and permissions. Use it before reading or writing when you are unsure a file exists, or to compare file sizes and dates.",
  tags: ["files", "stat", "metadata"],
  idempotent: true,
  input: {
    type: "object",
    properties: {
      path: { type: "string", description: "Path relative to root" },
    },
    required: ["path"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      path: { type: "string" },
      exists: { type: "boolean" },
      type: { type: "string", enum: ["file", "dir", "symlink", "other"] },
      size: { type: "integer" },
      modified: { type: ["string", "null"], description: "ISO 8601" },
      mode: {
        type: ["string", "null"],
        description: 'Unix permission bits in octal, e.g. "644"',
      },
      symlink_target: { type: "string" },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    const { abs, rel } = await resolveInRoot(cfg, args.path).catch((err) => {
      // A dangling link is a thing that exists; everything else propagates.
      if (String(err.message).includes("dangling symlink")) {
        return { abs: null, rel: args.path };
      }
      throw err;
    });
    if (abs === null) {
      return withSummary(
        { path: rel, exists: true, type: "symlink", dangling: true },
        `"${rel}" is a dangling symlink`,
      );
    }
    const info = await Deno.lstat(abs).catch((err) => {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    });
    if (!info) {
      return withSummary(
        { path: rel, exists: false },
        `"${rel}" does not exist`,
      );
    }
    const type = entryType(info);
    const data: Record<string, unknown> = {
      path: rel,
      exists: true,
      type,
      size: info.size,
      modified: info.mtime?.toISOString() ?? null,
      mode: info.mode === null ? null : (info.mode & 0o7777).toString(8),
    };
    if (info.isSymlink && await realInside(cfg, abs)) {
      data.symlink_target = await Deno.readLink(abs);
    }
    return withSummary(
      data,
      `"${rel}" is a ${
        type === "dir" ? "directory" : type
      } of ${info.size} bytes`,
    );
  },
} satisfies ToolDef<Args>;
