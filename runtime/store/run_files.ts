/**
 * The files kept with one run's record (skill scripts' workspaces), within
 * the store's caps: at most `maxFiles` listed (the rest counted in a last
 * entry), content kept only while the run's total stays within `maxBytes`
 * (a file over it is listed with a note), the operator's secrets scrubbed
 * from text, and a binary file holding one not kept.
 *
 * @module
 */

import type { Redactor } from "./redact.ts";
import type { RunStore, StoredFile } from "./store.ts";
import type { RunFiles } from "./recorder.ts";

/** What of a script's files was kept. */
export interface FilesKept {
  /** Files kept with their content. */
  files: number;
  /** Bytes of content kept. */
  bytes: number;
  /** True when some file was not kept (over a cap, a secret) or not listed. */
  truncated: boolean;
}

// Runs whose files wait to be written; beyond it the oldest are dropped (a
// run dropped from the recorder's pending writes never takes its files).
const MAX_RUNS = 1000;
// Bytes of content kept for all those runs together: 1000 runs of 4 MiB
// (the default cap a run) were 4 GiB of the host's memory. Past it a file
// is listed without content.
const MAX_HELD_BYTES = 128 << 20;

/** The files of the runs in progress, taken when a run is written. */
export interface RunFileKeeper extends RunFiles {
  /**
   * The files kept for a run, forgotten here.
   *
   * @param runId the run
   * @returns its files, in order
   */
  take(runId: string): StoredFile[];
}

/**
 * The recorder's keeper of runs' files, when it keeps any.
 *
 * @param store the run store, or null (then none are kept)
 * @param caps most bytes and files per run @default 4 MiB, 100 files
 * @param redactor scrubs the operator's secrets
 * @param runs whether a run is still in progress (only those get files)
 * @returns the keeper, or null when nothing is kept
 * @example
 * ```ts
 * import { keepRunFiles } from "./run_files.ts";
 * import { Redactor } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const open = new Set(["r1"]);
 * const store = {} as never;
 * assert.equal(keepRunFiles(null, undefined, new Redactor(), { isOpen: () => true }), null);
 * const keeper = keepRunFiles(store, undefined, new Redactor(), { isOpen: (id) => open.has(id) })!;
 * keeper.attach("r1", [{ name: "1/a.txt", size: 1, data: new Uint8Array([65]), note: null }]);
 * keeper.attach("r2", [{ name: "1/b.txt", size: 1, data: new Uint8Array([66]), note: null }]);
 * assert.deepEqual(keeper.take("r1").map((f) => f.name), ["1/a.txt"]);
 * assert.deepEqual(keeper.take("r2"), []);
 * ```
 */
export function keepRunFiles(
  store: RunStore | null,
  caps: { maxBytes: number; maxFiles: number } | undefined,
  redactor: Redactor,
  runs: { isOpen(runId: string): boolean },
): RunFileKeeper | null {
  const { maxBytes, maxFiles } = caps ?? { maxBytes: 4 << 20, maxFiles: 100 };
  if (store === null || maxBytes <= 0 || maxFiles <= 0) return null;
  const kept = new Map<string, KeptFiles>();
  const host = { held: 0, max: MAX_HELD_BYTES };
  const forget = (run: KeptFiles | undefined) => {
    if (run) host.held -= run.bytes;
  };
  return {
    maxBytes,
    maxFiles,
    attach(runId, files, unlisted = 0) {
      if (!runs.isOpen(runId)) return { files: 0, bytes: 0, truncated: true };
      let run = kept.get(runId);
      if (!run) {
        if (kept.size >= MAX_RUNS) {
          const oldest = kept.keys().next().value!;
          forget(kept.get(oldest));
          kept.delete(oldest);
        }
        run = new KeptFiles({ maxBytes, maxFiles }, redactor, host);
        kept.set(runId, run);
      }
      return run.add(files, unlisted);
    },
    take(runId) {
      const run = kept.get(runId);
      kept.delete(runId);
      forget(run);
      return run?.list() ?? [];
    },
  };
}

/**
 * One run's kept files.
 *
 * @example The second file is over the cap: listed, not kept
 * ```ts
 * import { KeptFiles } from "./run_files.ts";
 * import { Redactor } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const kept = new KeptFiles({ maxBytes: 4, maxFiles: 10 }, new Redactor());
 * const bytes = (t: string) => new TextEncoder().encode(t);
 * const summary = kept.add([{ name: "1/a", size: 3, data: bytes("abc"), note: null },
 *   { name: "1/b", size: 3, data: bytes("def"), note: null }]);
 * assert.deepEqual(summary, { files: 1, bytes: 3, truncated: true });
 * const [a, b] = kept.list();
 * assert.equal(new TextDecoder().decode(a!.data!), "abc");
 * assert.equal(b!.data, null);
 * assert.match(b!.note!, /over the 4-byte cap/);
 * ```
 */
export class KeptFiles {
  #caps: { maxBytes: number; maxFiles: number };
  #redactor: Redactor;
  #files: StoredFile[] = [];
  #bytes = 0;
  #dropped = 0;
  #host: { held: number; readonly max: number } | undefined;

  /**
   * @param caps most bytes of content and most files listed, per run
   * @param redactor scrubs the operator's secrets
   * @param host bytes held by every run's files, and their most (shared by
   *   the runs; this one adds what it keeps) @default no bound across runs
   */
  constructor(
    caps: { maxBytes: number; maxFiles: number },
    redactor: Redactor,
    host?: { held: number; readonly max: number },
  ) {
    this.#caps = caps;
    this.#redactor = redactor;
    this.#host = host;
  }

  /** Bytes of content kept. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Adds files, in order, within the caps.
   *
   * @param files the files as the run left them
   * @param unlisted files left out before (counted, not listed) @default 0
   * @returns what of these was kept
   */
  add(files: readonly StoredFile[], unlisted = 0): FilesKept {
    const kept = { files: 0, bytes: 0, truncated: unlisted > 0 };
    this.#dropped += unlisted;
    for (const file of files) {
      if (this.#files.length >= this.#caps.maxFiles) {
        this.#dropped++;
        kept.truncated = true;
        continue;
      }
      let { data, note } = file;
      if (data !== null && this.#bytes + data.length > this.#caps.maxBytes) {
        data = null;
        note =
          `not kept: over the ${this.#caps.maxBytes}-byte cap of a run's files`;
      }
      const host = this.#host;
      if (data !== null && host && host.held + data.length > host.max) {
        data = null;
        note =
          `not kept: the host holds ${host.max} bytes of runs' files not yet written`;
      }
      if (data !== null) {
        data = this.#scrub(data);
        if (data === null) note = "not kept: it holds an operator secret";
      }
      this.#bytes += data?.length ?? 0;
      if (host) host.held += data?.length ?? 0;
      if (data === null) kept.truncated = true;
      else kept.files++, kept.bytes += data.length;
      this.#files.push({
        name: file.name.slice(0, 500),
        size: file.size,
        data,
        note,
      });
    }
    return kept;
  }

  /**
   * The files to store, and a last entry counting those not listed.
   *
   * @returns the files
   */
  list(): StoredFile[] {
    if (this.#dropped === 0) return [...this.#files];
    return [...this.#files, {
      name: "…",
      size: 0,
      data: null,
      note:
        `${this.#dropped} more files not listed (cap: ${this.#caps.maxFiles} per run)`,
    }];
  }

  // Text with the secrets replaced; a binary file holding one: null.
  #scrub(data: Uint8Array): Uint8Array | null {
    const text = new TextDecoder().decode(data);
    const clean = this.#redactor.text(text, { maxString: Infinity });
    if (clean === text) return data;
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(data);
    } catch {
      return null;
    }
    return new TextEncoder().encode(clean);
  }
}
