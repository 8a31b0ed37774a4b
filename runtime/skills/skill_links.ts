/**
 * The files a skill's instructions link to: found in the Markdown body,
 * checked to stay inside the skill's folder, and read on demand by the
 * agent loop's `read_skill_file` tool.
 *
 * @module
 */

import { isAbsolute, join, relative } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";

/** The biggest linked file `readSkillFile` returns, in bytes. */
export const MAX_RESOURCE_BYTES = 256 * 1024;

/**
 * A skill file whose bytes are not what its listing promised (a fetched
 * file of an imported skill whose size or digest differs): the run that
 * asked for it fails with this, and the model never sees the bytes.
 *
 * @example
 * ```ts
 * import { SkillFileRefusedError } from "./skill_links.ts";
 * import assert from "node:assert/strict";
 * const error = new SkillFileRefusedError('File "a.md" of skill "kit__a" is refused: its digest differs');
 * assert.equal(error.code, "skill_error");
 * ```
 */
export class SkillFileRefusedError extends SkillboxError {
  /** @param message what differs, sentence case */
  constructor(message: string) {
    super("skill_error", message);
    this.name = "SkillFileRefusedError";
  }
}

/**
 * Finds the relative link targets of a Markdown body: inline links, images
 * and reference definitions, without URLs, anchors, or paths that climb out
 * of the folder.
 *
 * @param markdown the body
 * @returns unique relative paths, in order of first appearance
 * @example
 * ```ts
 * import { findLinks } from "./skill_links.ts";
 * import assert from "node:assert/strict";
 * const body = "See [a](ref/a.md#top), [web](https://x.dev), [up](../secret) and\n[b]: ./b.txt";
 * assert.deepEqual(findLinks(body), ["ref/a.md", "b.txt"]);
 * ```
 */
export function findLinks(markdown: string): string[] {
  const found: string[] = [];
  const patterns = [
    /!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm,
  ];
  for (const pattern of patterns) {
    for (const match of markdown.matchAll(pattern)) {
      const target = normalizeLink(match[1] ?? "");
      if (target !== null && !found.includes(target)) found.push(target);
    }
  }
  return found;
}

/**
 * Normalizes a link target to a path relative to the skill folder.
 *
 * @param raw the target as written
 * @returns the path, or null for URLs, anchors, absolute paths and paths
 *   that climb out
 * @example
 * ```ts
 * import { normalizeLink } from "./skill_links.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeLink("./ref/a%20b.md#x"), "ref/a b.md");
 * assert.equal(normalizeLink("../up.md"), null);
 * ```
 */
export function normalizeLink(raw: string): string | null {
  let target = raw.split("#")[0]!.split("?")[0]!;
  if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  try {
    target = decodeURIComponent(target);
  } catch {
    return null;
  }
  if (isAbsolute(target) || target.startsWith("/")) return null;
  const parts = target.replaceAll("\\", "/").split("/").filter((p) =>
    p !== "" && p !== "."
  );
  if (parts.length === 0 || parts.includes("..")) return null;
  return parts.join("/");
}

/**
 * Resolves a relative path inside a folder, following links, and tells
 * whether it is a regular file that stays inside.
 *
 * @param dir the folder (a real path)
 * @param rel the relative path
 * @returns the file's real path, or null when it leaves the folder, is
 *   missing or is not a regular file
 * @example
 * ```ts
 * import { insideFolder } from "./skill_links.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(`${dir}/a.md`, "a");
 * assert.equal(await insideFolder(dir, "a.md"), `${dir}/a.md`);
 * assert.equal(await insideFolder(dir, "../etc/passwd"), null);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function insideFolder(
  dir: string,
  rel: string,
): Promise<string | null> {
  try {
    const real = await Deno.realPath(join(dir, rel));
    const back = relative(dir, real);
    if (back === "" || back.startsWith("..") || isAbsolute(back)) return null;
    const info = await Deno.stat(real);
    return info.isFile ? real : null;
  } catch {
    return null;
  }
}

/**
 * Reads one of a skill folder's linked files, on demand.
 *
 * @param skill the loaded folder (only its `resources` are readable)
 * @param path a path relative to the folder, as linked
 * @param options size cap
 * @returns the file's text
 * @throws {SkillboxError} `tool_denied` for a file that is not a listed
 *   resource, `tool_error` when it is too big or unreadable
 * @example Read a linked file
 * ```ts
 * import { readSkillFile } from "./skill_links.ts";
 * import { loadSkillFolder } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: demo\ndescription: Demo\n---\nSee [notes](notes.md).");
 * await Deno.writeTextFile(`${dir}/notes.md`, "hi");
 * const skill = await loadSkillFolder(dir);
 * assert.equal(await readSkillFile(skill, "./notes.md"), "hi");
 * await assert.rejects(readSkillFile(skill, "SKILL.md"), /not a file linked/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readSkillFile(
  skill: { name: string; folder: string; resources: readonly string[] },
  path: string,
  options: { maxBytes?: number } = {},
): Promise<string> {
  const rel = normalizeLink(path);
  if (rel === null || !skill.resources.includes(rel)) {
    throw new SkillboxError(
      "tool_denied",
      `Cannot read "${path}": not a file linked from skill "${skill.name}" (linked: ${
        skill.resources.map((r) => `"${r}"`).join(", ") || "none"
      })`,
    );
  }
  // Re-check on every read: the folder may have changed since it was loaded.
  const real = await insideFolder(skill.folder, rel);
  if (real === null) {
    throw new SkillboxError(
      "tool_denied",
      `Cannot read "${path}": it no longer resolves inside the skill folder`,
    );
  }
  const maxBytes = options.maxBytes ?? MAX_RESOURCE_BYTES;
  const info = await Deno.stat(real);
  if (info.size > maxBytes) {
    throw new SkillboxError(
      "tool_error",
      `Cannot read "${path}": file is larger than ${maxBytes} bytes`,
    );
  }
  return await Deno.readTextFile(real);
}
