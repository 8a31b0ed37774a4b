/**
 * Which scripts a skill carries: the files under its `scripts/` folder and
 * the linked files with a script extension (`interpreters.ts` says which
 * program runs one).
 *
 * @module
 */

import { extname, join, relative } from "node:path";

/** Extensions that count as scripts among a skill's linked files. */
const SCRIPT_EXTENSIONS = new Set([".py", ".sh", ".js", ".ts", ".bash"]);
const MAX_SCRIPTS = 200;

/**
 * Lists a skill's scripts, as paths relative to its folder, sorted.
 *
 * @param folder the skill's folder
 * @param resources the skill's linked files
 * @returns the script paths (files only, no symlinks, at most 200)
 * @example
 * ```ts
 * import { listSkillScripts } from "./script_files.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/scripts`);
 * await Deno.writeTextFile(`${dir}/scripts/a.py`, "");
 * await Deno.writeTextFile(`${dir}/tool.sh`, "");
 * assert.deepEqual(await listSkillScripts(dir, ["tool.sh", "ref.md"]), ["scripts/a.py", "tool.sh"]);
 * ```
 */
export async function listSkillScripts(
  folder: string,
  resources: readonly string[],
): Promise<string[]> {
  const found = new Set<string>();
  // Read entry by entry, to stop at the cap: a folder of 100,000 files was
  // read whole on every run of the skill.
  const walk = async (dir: string, depth: number) => {
    if (depth > 4) return;
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (found.size >= MAX_SCRIPTS) return;
        const path = join(dir, entry.name);
        if (entry.isFile) found.add(relative(folder, path));
        else if (entry.isDirectory && entry.name !== "__pycache__") {
          await walk(path, depth + 1);
        }
      }
    } catch {
      // unreadable: no scripts from it
    }
  };
  // Links inside are never followed (isFile and isDirectory are false for
  // them); nor is a `scripts` that is itself a link, out to a host folder.
  const scripts = join(folder, "scripts");
  if ((await Deno.lstat(scripts).catch(() => null))?.isDirectory) {
    await walk(scripts, 0);
  }
  for (const r of resources) {
    if (!SCRIPT_EXTENSIONS.has(extname(r))) continue;
    const info = await Deno.lstat(join(folder, r)).catch(() => null);
    if (info?.isFile) found.add(r);
  }
  return [...found].sort();
}
