/**
 * The filesystem toolkit: read, write, list, find and search files under
 * one configured root directory.
 *
 * @module
 */

import type { ToolkitDef } from "../../sandbox/sdk/types.ts";

export default {
  kind: "toolkit",
  name: "filesystem",
  alias: "Files",
  category: "system",
  description:
    "Read, write, list, find (glob) and search (regex) files confined to one root directory. Configure `root`; writes need `writable: true`.",
  tags: ["files", "filesystem", "io"],
  config: {
    type: "object",
    properties: {
      root: {
        type: "string",
        description:
          "Absolute path of the directory the tools may access; nothing outside it is reachable",
      },
      writable: {
        type: "boolean",
        default: false,
        description: "Allow write_file to create and change files under root",
      },
    },
    required: ["root"],
    additionalProperties: false,
  },
  // The sandbox grants exactly root, and write only when writable; the
  // tools also check every path themselves (symlinks, `..`).
  permissions: (c) =>
    typeof c.root === "string" && c.root !== ""
      ? { read: [c.root], write: c.writable === true ? [c.root] : [] }
      : {},
  prompt: [
    "Paths are relative to the configured root (absolute paths inside root also work).",
    "- Use `find_files` to locate files by name, `grep` to locate content, then `read_file` with `start_line`/`end_line` to read just the part you need.",
    "- `read_file` caps output; when `truncated` is true, continue from the `next_start_line` it reports.",
    '- `write_file` overwrites by default; use `mode: "append"` to add, or `mode: "create"` to fail if the file exists.',
    "- Paths that leave root (`..`, or symlinks pointing outside) are refused.",
  ].join("\n"),
} satisfies ToolkitDef;
