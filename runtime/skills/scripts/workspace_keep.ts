/**
 * A script run's workspace kept for the run's history record, when the
 * host's run store keeps files: the files the script wrote (inputs it left
 * unchanged are not), listed up to a count and with their content up to a
 * byte total; the rest are listed without content or counted. The content
 * is what `workspace_files.ts` read (once, bounded) for the artifacts. The store
 * applies the same caps to the whole skill run (`runtime/store/run_files.ts`).
 *
 * @module
 */

import type { StoredFile } from "../../store/store.ts";
import type { Collected } from "./workspace_files.ts";

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
 * Hands the collected workspace over within the caps (the files were read
 * once, bounded, by `collectWorkspace`).
 *
 * @param collected the workspace's files (see `workspace_files.ts`)
 * @param inputs the input files written before the run (path → text)
 * @param keep the caps and where the files go
 * @returns how much was kept
 * @example The second file is over the cap
 * ```ts
 * import { keepWorkspace } from "./workspace_keep.ts";
 * import assert from "node:assert/strict";
 * const bytes = (t: string) => new TextEncoder().encode(t);
 * let got: { name: string; data: Uint8Array | null }[] = [];
 * keepWorkspace({
 *   files: [{ name: "a.txt", size: 3, data: bytes("abc"), note: null },
 *     { name: "b.txt", size: 5, data: bytes("defgh"), note: null },
 *     { name: "in.csv", size: 1, data: bytes("x"), note: null }],
 *   found: 3, leftOut: 0, note: null,
 * }, new Map([["in.csv", "x"]]), {
 *   maxBytes: 4, maxFiles: 10,
 *   attach: (files) => (got = files, { files: 1, bytes: 3, truncated: true }),
 * });
 * assert.deepEqual(got.map((f) => [f.name, f.data?.length ?? null]), [["a.txt", 3], ["b.txt", null]]);
 * ```
 */
export function keepWorkspace(
  collected: Collected,
  inputs: ReadonlyMap<string, string>,
  keep: WorkspaceKeep,
): KeptSummary {
  const found = collected.files.slice(0, keep.maxFiles);
  const unlisted = collected.found - found.length;
  const files: StoredFile[] = [];
  let bytes = 0;
  for (const { name, size, data, note } of found) {
    if (data === null || bytes + data.length > keep.maxBytes) {
      files.push({
        name,
        size,
        data: null,
        note: note ?? `not kept: over the ${keep.maxBytes}-byte cap`,
      });
      continue;
    }
    if (inputs.get(name) === new TextDecoder().decode(data)) continue;
    bytes += data.length;
    files.push({ name, size, data, note: null });
  }
  return keep.attach(files, unlisted);
}
