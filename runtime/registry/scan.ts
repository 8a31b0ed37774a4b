/**
 * Finds definition modules and Agent Skills folders under the skills folders,
 * without reading or running any of them.
 *
 * @module
 */

import { join, resolve } from "node:path";
import type { Origin, RegistryError } from "./types.ts";
import { Semaphore } from "../slots.ts";
import { compareCodeUnits } from "../tools/filter.ts";

// An Agent Skills folder's file; A2E's reference skill spells it `skill.md`.
const SKILL_FILES = new Set(["SKILL.md", "skill.md"]);

/** A folder to scan, and the origin of what is found in it. */
export interface SkillDir {
  /** The folder (made absolute against the working directory). */
  path: string;
  /** @default "file" */
  origin?: Origin;
}

/** A candidate module file. */
export interface ScannedFile {
  /** Absolute path. */
  path: string;
  origin: Origin;
  /** The skills folder it was found under. */
  root: string;
  /** Last modification, for the describe cache. */
  mtimeMs: number;
  size: number;
}

/** What a scan found. */
export interface ScanResult {
  files: ScannedFile[];
  /** Folders holding a `SKILL.md` or `skill.md`, absolute. */
  agentSkills: string[];
  /** Folders that could not be read (a missing skills folder is not one). */
  errors: RegistryError[];
}

/**
 * Tells whether a file name is a definition module: `.ts` or `.js`, not
 * private (`_x.ts`) and not a test (`x_test.ts`, `x.test.ts`).
 *
 * @param name a file name, without folders
 * @returns true when the registry should describe the file
 * @example
 * ```ts
 * import { isDefinitionFile } from "./scan.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isDefinitionFile("read_file.ts"));
 * assert.ok(!isDefinitionFile("_helpers.ts"));
 * assert.ok(!isDefinitionFile("read_file_test.ts"));
 * assert.ok(!isDefinitionFile("notes.md"));
 * ```
 */
export function isDefinitionFile(name: string): boolean {
  if (name.startsWith("_") || name.startsWith(".")) return false;
  if (!/\.(ts|js)$/.test(name) || name.endsWith(".d.ts")) return false;
  return !/(_test|\.test)\.(ts|js)$/.test(name);
}

/**
 * Walks the skills folders. Hidden folders and `node_modules` are skipped; a
 * folder with a `SKILL.md` (or `skill.md`) is recorded as an Agent Skill and not descended
 * into (its scripts are not definitions). Symbolic links are followed once.
 *
 * @param dirs the skills folders, in order
 * @returns the module files sorted by path, Agent Skills folders, errors
 * @example Scan a folder
 * ```ts
 * import { scanSkillDirs } from "./scan.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/echo.ts`, "export default {}");
 * await Deno.writeTextFile(`${dir}/_util.ts`, "");
 * const { files } = await scanSkillDirs([{ path: dir }]);
 * assert.deepEqual(files.map((f) => f.path), [`${dir}/echo.ts`]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
// Long (about 110 lines) because `walk` lives inside it: the walk, the
// semaphore bounding I/O and the sets of folders and files already seen are
// one scan's state, shared by closures rather than passed through each call.
export async function scanSkillDirs(
  dirs: readonly SkillDir[],
): Promise<ScanResult> {
  const result: ScanResult = { files: [], agentSkills: [], errors: [] };
  const seenDirs = new Set<string>();
  // Folders and files are visited in parallel; each readDir, stat and
  // realPath is a thread-pool job, so bound how many run at once.
  const io = new Semaphore(16);

  // `known` is the folder's real path when its parent's is known and it is
  // no link: a cached load of 1,000 folders then pays no realPath each.
  // Long (about 80 lines): one folder's visit in one place: its entries
  // read, links resolved (a folder reached twice, through a link or a
  // cycle, is walked once; a link may lead out of the skills folder, as
  // the operator who made it chose), files and subfolders sorted out, in
  // the order the rules are checked.
  const walk = async (
    dir: string,
    root: string,
    origin: Origin,
    known?: string,
  ) => {
    let real: string;
    try {
      real = known ?? await io.run(() => Deno.realPath(dir));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || dir !== root) {
        result.errors.push(unreadable(dir, error));
      }
      return;
    }
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let entries: Deno.DirEntry[];
    try {
      entries = await io.run(() => Array.fromAsync(Deno.readDir(dir)));
    } catch (error) {
      result.errors.push(unreadable(dir, error));
      return;
    }
    if (entries.some((e) => SKILL_FILES.has(e.name) && !e.isDirectory)) {
      result.agentSkills.push(dir);
      return;
    }
    // Entries in parallel: a skills folder of 1,000 files would otherwise
    // wait for 1,000 stats one after the other.
    await Promise.all(entries.map(async (entry) => {
      const path = join(dir, entry.name);
      let isDir = entry.isDirectory;
      let isFile = entry.isFile;
      if (entry.isSymlink) {
        try {
          const info = await io.run(() => Deno.stat(path));
          isDir = info.isDirectory;
          isFile = info.isFile;
        } catch {
          return; // a dangling link is not a module
        }
      }
      if (isDir) {
        if (entry.name.startsWith(".") || entry.name === "node_modules") {
          return;
        }
        await walk(
          path,
          root,
          origin,
          entry.isSymlink ? undefined : join(real, entry.name),
        );
      } else if (isFile && isDefinitionFile(entry.name)) {
        // No file is seen twice: its folder's path is walked once (by
        // real path, in seenDirs), and a path names one folder.
        try {
          const info = await io.run(() => Deno.stat(path));
          result.files.push({
            path,
            origin,
            root,
            mtimeMs: info.mtime?.getTime() ?? 0,
            size: info.size,
          });
        } catch {
          // Removed between readDir and stat: the next scan will not see it.
        }
      }
    }));
  };

  for (const dir of dirs) {
    const root = resolve(dir.path);
    await walk(root, root, dir.origin ?? "file");
  }
  result.files.sort((a, b) => compareCodeUnits(a.path, b.path));
  result.agentSkills.sort();
  result.errors.sort((a, b) => compareCodeUnits(a.path, b.path));
  return result;
}

function unreadable(path: string, error: unknown): RegistryError {
  const why = error instanceof Error ? error.message : String(error);
  return { path, name: null, message: `Cannot read folder "${path}": ${why}` };
}
