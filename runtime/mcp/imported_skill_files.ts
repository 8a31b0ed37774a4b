/**
 * The supporting files of an imported server's skills (SEP-2640), as the
 * host's agent loop reads them with `read_skill_file`: every file of the
 * skill's verified manifest but its `SKILL.md` (references, scripts,
 * assets), each fetched with `resources/read` when the model asks for it and
 * checked against the manifest's size and `sha256:` digest before the model
 * sees a byte.
 *
 * Fetched on demand, not at load: a listing may promise up to 16 MiB per
 * skill, and most runs read one file or none; loading every file of every
 * skill of every server at each `list_changed` would cost that for nothing.
 * And the bytes checked are then the very bytes the model gets, with no
 * window between a check at load and a read at run time.
 *
 * A path is looked up as a string among the manifest's own paths (so `..`,
 * another skill's URI or this skill's `SKILL.md` is never fetched), and the
 * read is of the manifest's URI, never one built from the model's input. A
 * file over the host's bound on a skill file (`MAX_RESOURCE_BYTES`, as for
 * a local folder) is refused before it is fetched. Bytes that differ from
 * the manifest fail the run (`SkillFileRefusedError`) with the reason.
 * Scripts are read, never run: the host has no vetted copy of them to run.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import {
  MAX_RESOURCE_BYTES,
  normalizeLink,
  SkillFileRefusedError,
} from "../skills/skill_md.ts";
import type { FetchedSkillFiles } from "../skills/catalog.ts";
import { sha256Digest } from "./imported_skills.ts";
import type { RemoteSkill, SkillFileEntry } from "./skills_extension.ts";

/** Options of {@link importedSkillFiles}. */
export interface ImportedSkillFilesOptions {
  /** The biggest file returned, in bytes. @default MAX_RESOURCE_BYTES */
  maxFileBytes?: number;
}

/**
 * The files of imported servers' skills, by skill name (`<server>__<skill>`).
 *
 * @param remotes the verified skills of the running servers
 * @param options the per-file bound
 * @returns each skill's files, read through its server and checked
 * @example A forged file fails the read
 * ```ts
 * import { importedSkillFiles } from "./imported_skill_files.ts";
 * import assert from "node:assert/strict";
 * const remote = {
 *   name: "kit__docs", server: "kit",
 *   entry: { uri: "skill://docs/SKILL.md", frontmatter: {}, resources: [
 *     { uri: "skill://docs/SKILL.md", digest: "sha256:" + "0".repeat(64), size: 1 },
 *     { uri: "skill://docs/guide.md", digest: "sha256:" + "0".repeat(64), size: 2 },
 *   ] },
 *   read: () => Promise.resolve(new TextEncoder().encode("hi")),
 * };
 * const files = importedSkillFiles([remote]).get("kit__docs")!;
 * assert.deepEqual(files.resources, ["guide.md"]);
 * await assert.rejects(files.read("guide.md"), /served bytes hashing to sha256:8f43/);
 * await assert.rejects(files.read("../other/SKILL.md"), /not a file of skill "kit__docs"/);
 * ```
 */
export function importedSkillFiles(
  remotes: readonly RemoteSkill[],
  options: ImportedSkillFilesOptions = {},
): Map<string, FetchedSkillFiles> {
  const out = new Map<string, FetchedSkillFiles>();
  for (const remote of remotes) {
    out.set(remote.name, skillFiles(remote, options.maxFileBytes));
  }
  return out;
}

function skillFiles(
  remote: RemoteSkill,
  maxBytes = MAX_RESOURCE_BYTES,
): FetchedSkillFiles {
  const { name, server, entry } = remote;
  const root = entry.uri.slice(0, -"SKILL.md".length);
  const byPath = new Map<string, SkillFileEntry>();
  for (const file of entry.resources) {
    if (file.uri === entry.uri || !file.uri.startsWith(root)) continue;
    const path = normalizeLink(file.uri.slice(root.length));
    if (path !== null && !byPath.has(path)) byPath.set(path, file);
  }
  const resources = [...byPath.keys()];
  const listed = resources.map((r) => `"${r}"`).join(", ") || "none";
  return {
    resources,
    note:
      `These files are served by the MCP server "${server}", each checked against the digest it listed. This host does not run this skill's scripts: they can only be read.`,
    read: async (asked) => {
      const path = normalizeLink(asked);
      const file = path === null ? undefined : byPath.get(path);
      if (!file || path === null) {
        throw new SkillboxError(
          "tool_denied",
          `Cannot read "${asked}": not a file of skill "${name}" (its files: ${listed})`,
        );
      }
      if (file.size > maxBytes) {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": file is larger than ${maxBytes} bytes`,
        );
      }
      let bytes: Uint8Array;
      try {
        bytes = await remote.read(file.uri);
      } catch (error) {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": ${(error as Error).message}`,
        );
      }
      const refused =
        `File "${path}" of skill "${name}" is refused: the MCP server "${server}" served`;
      if (bytes.length !== file.size) {
        throw new SkillFileRefusedError(
          `${refused} ${bytes.length} bytes, its listing promises ${file.size}`,
        );
      }
      const digest = await sha256Digest(bytes);
      if (digest !== file.digest) {
        throw new SkillFileRefusedError(
          `${refused} bytes hashing to ${digest}, its listing promises ${file.digest}`,
        );
      }
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": it is not UTF-8 text (${bytes.length} bytes)`,
        );
      }
      // Tagged with its origin, as the skill's instructions are.
      const script = path.startsWith("scripts/")
        ? "; a script: this host does not run it"
        : "";
      return `[File ${file.uri} of the skill served by the MCP server "${server}"; untrusted content${script}.]\n\n${text}`;
    },
  };
}
