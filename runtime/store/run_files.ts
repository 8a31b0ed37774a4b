/**
 * The files kept with one run's record (skill scripts' workspaces), within
 * the store's caps: at most `maxFiles` listed (the rest counted in a last
 * entry), content kept only while the run's total stays within `maxBytes`
 * (a file over it is listed with a note), the operator's secrets scrubbed
 * from names and text, and a binary file holding one not kept.
 *
 * @module
 */

import { isUtf8 } from "node:buffer";
import type { Redactor } from "./redact.ts";
import type { StoredFile } from "./store.ts";
import type { FilesKept } from "./recorder.ts";

// Bytes of content kept for the runs whose files are not written yet
// together: 1000 runs of 4 MiB (the default cap a run) were 4 GiB of the
// host's memory. Past it a file is listed without content.
const MAX_HELD_BYTES = 128 << 20;
// And for one owner's runs (a client token, or the operator): half of it,
// so one client's skill runs going at once cannot leave none for another.
// Nothing kept is taken back (a run's scripts were told what was kept).
const MAX_OWNER_BYTES = MAX_HELD_BYTES / 2;

/**
 * The recorder's maker of a run's kept files, when it keeps any: each run
 * that leaves files gets its own {@link KeptFiles}, which shares the
 * host's budget and its owner's with the other runs not written yet (the
 * recorder keeps it with the run, and takes it when the run is written).
 *
 * @param caps most bytes and files per run @default 4 MiB, 100 files
 * @param redactor scrubs the operator's secrets
 * @returns a run's kept files, given whose run it is (`ownerOf` in
 *   `store.ts`, or null: the operator's); null when nothing is kept
 * @example Two runs of one owner share its budget; taken, a run gives its bytes back
 * ```ts
 * import { keepRunFiles } from "./run_files.ts";
 * import { Redactor } from "./redact.ts";
 * import assert from "node:assert/strict";
 * assert.equal(keepRunFiles({ maxBytes: 0, maxFiles: 10 }, new Redactor()), null);
 * const keep = keepRunFiles({ maxBytes: 40 << 20, maxFiles: 10 }, new Redactor())!;
 * const data = new Uint8Array(40 << 20);
 * const file = { name: "1/a.bin", size: data.length, data, note: null };
 * const first = keep("sha256:0a0b0c0d");
 * assert.equal(first.add([file]).bytes, 40 << 20);
 * assert.equal(keep("sha256:0a0b0c0d").add([file]).bytes, 0); // over its 64 MiB
 * assert.deepEqual(first.take().map((f) => f.name), ["1/a.bin"]);
 * assert.equal(keep("sha256:0a0b0c0d").add([file]).bytes, 40 << 20);
 * ```
 */
export function keepRunFiles(
  caps: { maxBytes: number; maxFiles: number } | undefined,
  redactor: Redactor,
): ((owner: string | null) => KeptFiles) | null {
  const { maxBytes, maxFiles } = caps ?? { maxBytes: 4 << 20, maxFiles: 100 };
  if (maxBytes <= 0 || maxFiles <= 0) return null;
  const host: FilesBudget = {
    held: 0,
    max: MAX_HELD_BYTES,
    note:
      `not kept: the host holds ${MAX_HELD_BYTES} bytes of runs' files not yet written`,
  };
  // Each owner's budget, kept: an owner is a configured token's, or the
  // operator's, so there are few.
  const shares = new Map<string | null, FilesBudget>();
  return (owner) => {
    const share = shares.getOrInsertComputed(owner, () => ({
      held: 0,
      max: MAX_OWNER_BYTES,
      note:
        `not kept: one client's runs' files not yet written are capped at ${MAX_OWNER_BYTES} bytes`,
    }));
    return new KeptFiles({ maxBytes, maxFiles }, redactor, [host, share]);
  };
}

/**
 * Bytes of kept files that several runs share, and their most: each run
 * adds what it keeps, and a file that would pass `max` is listed without
 * content, with `note` as the reason.
 *
 * @example A budget two runs share
 * ```ts
 * import { type FilesBudget, KeptFiles } from "./run_files.ts";
 * import { Redactor } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const budget: FilesBudget = { held: 0, max: 4, note: "not kept: spent" };
 * const caps = { maxBytes: 100, maxFiles: 10 };
 * const data = new Uint8Array([65, 66, 67]);
 * const file = (name: string) => ({ name, size: 3, data, note: null });
 * new KeptFiles(caps, new Redactor(), [budget]).add([file("1/a")]);
 * const second = new KeptFiles(caps, new Redactor(), [budget]);
 * assert.equal(second.add([file("1/b")]).bytes, 0);
 * assert.equal(second.list()[0]!.note, "not kept: spent");
 * assert.equal(budget.held, 3);
 * ```
 */
export interface FilesBudget {
  /** Bytes kept by every run sharing it. */
  held: number;
  /** The most. */
  readonly max: number;
  /** Why a file over it is not kept (`not kept: ...`). */
  readonly note: string;
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
  #budgets: readonly FilesBudget[];

  /**
   * @param caps most bytes of content and most files listed, per run
   * @param redactor scrubs the operator's secrets
   * @param budgets bounds shared with other runs (the host's, the
   *   owner's); this one adds what it keeps to each @default none
   */
  constructor(
    caps: { maxBytes: number; maxFiles: number },
    redactor: Redactor,
    budgets: readonly FilesBudget[] = [],
  ) {
    this.#caps = caps;
    this.#redactor = redactor;
    this.#budgets = budgets;
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
      let over = data === null ? null : this.#over(data.length);
      if (data !== null && over === null) {
        data = this.#scrub(data);
        if (data === null) note = "not kept: it holds an operator secret";
        // A secret's stand-in may be longer than the secret: the caps
        // hold for the bytes kept.
        else over = this.#over(data.length);
      }
      if (over !== null) data = null, note = over;
      this.#bytes += data?.length ?? 0;
      for (const budget of this.#budgets) budget.held += data?.length ?? 0;
      if (data === null) kept.truncated = true;
      else kept.files++, kept.bytes += data.length;
      this.#files.push({
        name: this.#redactor.name(file.name, { maxChars: 500 }),
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

  /**
   * The files to store ({@link list}), their bytes given back to the
   * budgets it shares: the run is being written.
   *
   * @returns the files
   */
  take(): StoredFile[] {
    for (const budget of this.#budgets) budget.held -= this.#bytes;
    this.#budgets = [];
    return this.list();
  }

  // Why `length` more bytes are not kept (over the run's cap, or a budget
  // it shares), or null when they fit.
  #over(length: number): string | null {
    if (this.#bytes + length > this.#caps.maxBytes) {
      return `not kept: over the ${this.#caps.maxBytes}-byte cap of a run's files`;
    }
    for (const budget of this.#budgets) {
      if (budget.held + length > budget.max) return budget.note;
    }
    return null;
  }

  // Text with the secrets replaced; a binary file holding one: null.
  #scrub(data: Uint8Array): Uint8Array | null {
    const text = new TextDecoder().decode(data);
    const clean = this.#redactor.text(text, { maxString: Infinity });
    if (clean === text) return data;
    return isUtf8(data) ? new TextEncoder().encode(clean) : null;
  }
}
