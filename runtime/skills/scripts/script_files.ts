/**
 * Which scripts a skill carries: the files under its `scripts/` folder and
 * the linked files with a script extension, and which interpreter runs one
 * by the policy's `interpreters` map (extension → program name).
 *
 * @module
 */

import { extname, join, relative } from "node:path";
import { DENO_INTERPRETER } from "./interpreters.ts";

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
  const walk = async (dir: string, depth: number) => {
    if (depth > 4) return;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.size >= MAX_SCRIPTS) return;
      const path = join(dir, entry.name);
      if (entry.isFile) found.add(relative(folder, path));
      else if (entry.isDirectory && entry.name !== "__pycache__") {
        await walk(path, depth + 1);
      }
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

/** Where the confinement looks for interpreters (the bound system). */
const SYSTEM_BIN = ["/usr/local/bin", "/usr/bin", "/bin"];

/**
 * The interpreter of a script by the policy, or why it cannot run.
 *
 * @param script the script's relative path
 * @param interpreters the policy's extension → program map
 * @returns the program's absolute path, `deno` for the sandboxed Deno,
 *   or a message the model can read
 * @example
 * ```ts
 * import { findInterpreter } from "./script_files.ts";
 * import assert from "node:assert/strict";
 * assert.ok("path" in await findInterpreter("a.sh", { ".sh": "sh" }));
 * assert.ok("deno" in await findInterpreter("a.ts", { ".ts": "deno" }));
 * const refused = await findInterpreter("a.rb", { ".sh": "sh" });
 * assert.ok("error" in refused && /no interpreter for "\.rb"/.test(refused.error));
 * ```
 */
export async function findInterpreter(
  script: string,
  interpreters: Readonly<Record<string, string>>,
): Promise<{ path: string } | { deno: true } | { error: string }> {
  const ext = extname(script);
  const program = Object.hasOwn(interpreters, ext)
    ? interpreters[ext]
    : undefined;
  if (!program) {
    const allowed = Object.keys(interpreters).sort().join(", ") || "none";
    return {
      error: `Cannot run "${script}": the policy allows no interpreter for ` +
        `"${ext || "(no extension)"}" files (allowed: ${allowed})`,
    };
  }
  if (program === DENO_INTERPRETER) return { deno: true };
  if (program.includes("/")) {
    return {
      error: `Cannot run "${script}": interpreter "${program}" must be a ` +
        "program name, found in /usr/local/bin, /usr/bin or /bin",
    };
  }
  for (const dir of SYSTEM_BIN) {
    const path = join(dir, program);
    const info = await Deno.stat(path).catch(() => null);
    if (info?.isFile && (info.mode ?? 0) & 0o111) return { path };
  }
  return {
    error: `Cannot run "${script}": its interpreter "${program}" is not ` +
      "installed on this machine",
  };
}
