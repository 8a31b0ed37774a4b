/**
 * A script run's workspace kept for the run's history record, when the
 * host's run store keeps files: the files the script wrote (inputs it left
 * unchanged are not), listed up to a count and with their content up to a
 * byte total; the rest are listed without content or counted. The store
 * applies the same caps to the whole skill run (`runtime/store/run_files.ts`).
 *
 * @module
 */

import { join, relative } from "node:path";
import type { StoredFile } from "../../store/store.ts";

// Files looked at in one workspace, at most.
const MAX_WALKED = 10_000;

/** Where a run's files go, and the caps. */
export interface WorkspaceKeep {
  /** Most bytes of content kept. */
  maxBytes: number;
  /** Most files listed. */
  maxFiles: number;
  /**
   * Receives the files (names relative to the workspace) and how many more
   * were not listed; returns what was kept.
   */
  attach(files: StoredFile[], unlisted: number): KeptSummary;
}

/** What the model is told was kept. */
export interface KeptSummary {
  /** Files kept with their content. */
  files: number;
  /** Bytes of content kept. */
  bytes: number;
  /** True when some file was not kept or not listed. */
  truncated: boolean;
}

/**
 * Reads the workspace within the caps and hands the files over.
 *
 * @param workspace the workspace (host path)
 * @param inputs the input files written before the run (path → text)
 * @param keep the caps and where the files go
 * @returns how much was kept
 * @example The second file is over the cap
 * ```ts
 * import { keepWorkspace } from "./workspace_keep.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "abc");
 * await Deno.writeTextFile(`${dir}/b.txt`, "defgh");
 * await Deno.writeTextFile(`${dir}/in.csv`, "x");
 * let got: { name: string; data: Uint8Array | null }[] = [];
 * await keepWorkspace(dir, new Map([["in.csv", "x"]]), {
 *   maxBytes: 4, maxFiles: 10,
 *   attach: (files) => (got = files, { files: 1, bytes: 3, truncated: true }),
 * });
 * assert.deepEqual(got.map((f) => [f.name, f.data?.length ?? null]), [["a.txt", 3], ["b.txt", null]]);
 * ```
 */
export async function keepWorkspace(
  workspace: string,
  inputs: ReadonlyMap<string, string>,
  keep: WorkspaceKeep,
): Promise<KeptSummary> {
  const all: { name: string; path: string; size: number }[] = [];
  const walk = async (dir: string, depth: number) => {
    if (depth > 8 || all.length >= MAX_WALKED) return;
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path, depth + 1);
      if (!entry.isFile || all.length >= MAX_WALKED) continue; // no symlinks
      const name = relative(workspace, path);
      all.push({ name, path, size: (await Deno.lstat(path)).size });
    }
  };
  await walk(workspace, 0);
  // The same files are listed whatever order the folder gives them in.
  all.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const found = all.slice(0, keep.maxFiles);
  const unlisted = all.length - found.length;
  const files: StoredFile[] = [];
  let bytes = 0;
  for (const { name, path, size } of found) {
    if (bytes + size > keep.maxBytes) {
      files.push({
        name,
        size,
        data: null,
        note: `not kept: over the ${keep.maxBytes}-byte cap`,
      });
      continue;
    }
    const data = await Deno.readFile(path);
    if (inputs.get(name) === new TextDecoder().decode(data)) continue;
    bytes += data.length;
    files.push({ name, size, data, note: null });
  }
  return keep.attach(files, unlisted);
}
