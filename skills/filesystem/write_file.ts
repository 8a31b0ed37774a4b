/**
 * `write_file`: creates, overwrites or appends to a text file.
 *
 * @module
 */

import { dirname } from "node:path/posix";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import {
  type FsConfig,
  fsConfig,
  openedInside,
  resolveInRoot,
  type RootPath,
} from "./_paths.ts";

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
    const mode = args.mode ?? "overwrite";
    const { abs, rel } = await resolveInRoot(cfg, args.path);
    if (rel === ".") throw new Error("Cannot write to the root directory");
    const existing = await Deno.stat(abs).catch((err) => {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    });
    if (existing?.isDirectory) throw new Error(`"${rel}" is a directory`);
    await Deno.mkdir(dirname(abs), { recursive: true });
    const bytes = new TextEncoder().encode(args.content);
    if (!existing || mode === "create") await createFile(abs, rel, bytes);
    else await writeExisting(cfg, { abs, rel }, bytes, mode);
    const verb = mode === "append" ? "Appended" : "Wrote";
    return withSummary(
      { path: rel, bytes_written: bytes.length, created: existing === null },
      `${verb} ${bytes.length} bytes to "${rel}"`,
    );
  },
} satisfies ToolDef<Args>;

// The file may be swapped for a symlink after resolveInRoot's check, and Deno
// opens a path by resolving its symlinks first (O_NOFOLLOW does not help), so
// neither write below opens the path to create or truncate a file.

/** Creates `abs` from a temporary file: `link` never follows a symlink. */
async function createFile(abs: string, rel: string, bytes: Uint8Array) {
  const temp = `${dirname(abs)}/.write_file-${crypto.randomUUID()}`;
  try {
    await Deno.writeFile(temp, bytes, { createNew: true });
    await Deno.link(temp, abs);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    throw new Error(
      `"${rel}" already exists: use mode "overwrite" or "append"`,
    );
  } finally {
    // A write that failed before creating the file leaves nothing to remove.
    await Deno.remove(temp).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
  }
}

/** Writes into an existing file once it is known to be the one inside root. */
async function writeExisting(
  cfg: FsConfig,
  { abs, rel }: RootPath,
  bytes: Uint8Array,
  mode: "overwrite" | "append",
) {
  using file = await Deno.open(abs, { write: true, append: mode === "append" });
  if (!await openedInside(cfg, abs, await file.stat())) {
    throw new Error(`"${rel}" was replaced while being written: not written`);
  }
  if (mode === "overwrite") await file.truncate();
  for (let n = 0; n < bytes.length;) n += await file.write(bytes.subarray(n));
}
