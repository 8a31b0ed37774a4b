/**
 * `write_file`: creates, overwrites or appends to a text file.
 *
 * @module
 */

import { dirname } from "node:path/posix";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, resolveInRoot } from "./_paths.ts";

interface Args {
  path: string;
  content: string;
  mode?: "overwrite" | "append" | "create";
}

export default {
  kind: "tool",
  name: "write_file",
  toolkit: "filesystem",
  description:
    "Write a text file under the root: create it, replace it, or append to it. Missing parent directories are created. Use it to save code, notes, configs or generated data; read the file first if you mean to edit part of it.",
  tags: ["files", "write"],
  input: {
    type: "object",
    properties: {
      path: { type: "string", description: "File path relative to root" },
      content: { type: "string", description: "The text to write" },
      mode: {
        type: "string",
        enum: ["overwrite", "append", "create"],
        description:
          '"overwrite" (default) replaces the file, "append" adds to its end, "create" fails if it exists',
      },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      path: { type: "string" },
      bytes_written: { type: "integer" },
      created: { type: "boolean", description: "Whether the file was new" },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    if (!cfg.writable) {
      throw new Error(
        'The filesystem toolkit is read-only: configure "writable": true to write files',
      );
    }
    if (typeof args.content !== "string") {
      throw new TypeError("content must be a string");
    }
    const mode = args.mode ?? "overwrite";
    const { abs, rel } = await resolveInRoot(cfg, args.path);
    if (rel === ".") throw new Error("Cannot write to the root directory");
    const existing = await Deno.stat(abs).catch((err) => {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    });
    if (existing?.isDirectory) throw new Error(`"${rel}" is a directory`);
    if (existing && mode === "create") {
      throw new Error(
        `"${rel}" already exists: use mode "overwrite" or "append"`,
      );
    }
    await Deno.mkdir(dirname(abs), { recursive: true });
    const bytes = new TextEncoder().encode(args.content);
    await Deno.writeFile(abs, bytes, {
      append: mode === "append",
      createNew: mode === "create",
    });
    const verb = mode === "append" ? "Appended" : "Wrote";
    return withSummary(
      { path: rel, bytes_written: bytes.length, created: existing === null },
      `${verb} ${bytes.length} bytes to "${rel}"`,
    );
  },
} satisfies ToolDef<Args>;
