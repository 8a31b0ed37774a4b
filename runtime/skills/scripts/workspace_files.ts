/**
 * The keeper's report of a script run, parsed within the caps while it
 * arrives (see `workspace_mount.ts` for what the keeper sends): the exit
 * code, whether the workspace was full, and the files the script left,
 * already bounded by the keeper (regular files only, at most `maxFiles` by
 * name, content only while the total stays within `maxBytes`). The host
 * holds no more than those caps allow, whatever arrives: bytes past them
 * are dropped and the report counts as cut. One read serves the artifacts
 * sent to the model and the files kept for the run's history.
 *
 * @module
 */

/** The caps of what is read back (`store.script_files_max_bytes`, `store.script_files_max`). */
export interface CollectCaps {
  /** Most bytes of content, all files together. @default 4 MiB */
  maxBytes: number;
  /** Most files listed. @default 100 */
  maxFiles: number;
}

/** The caps when the configuration names none. */
export const DEFAULT_COLLECT_CAPS: CollectCaps = {
  maxBytes: 4 * 1024 * 1024,
  maxFiles: 100,
};

/** One file found. */
export interface CollectedFile {
  /** Relative to the workspace. */
  name: string;
  /** Its size (apparent, as `stat` says). */
  size: number;
  /** Its content, or null when left out (`note` says why). */
  data: Uint8Array | null;
  note: string | null;
}

/** What came back from the workspace. */
export interface Collected {
  /** The files listed, sorted by name. */
  files: CollectedFile[];
  /** Regular files found (listed or not). */
  found: number;
  /** Why some were left out, for the model; null when none was. */
  note: string | null;
}

/** The keeper's report. */
export interface KeeperReport {
  /** The script's exit code. */
  code: number;
  /** No byte of the workspace's quota was left when the script ended. */
  bytesFull: boolean;
  /** No file of the workspace's quota was left when the script ended. */
  filesFull: boolean;
  files: Collected;
}

// A header line ("R code free inodes found" or "size send namelen") and a
// name, at most; longer means the stream is not the keeper's.
const MAX_LINE = 128;
const MAX_NAME = 4096;

/**
 * Parses the keeper's stream within the caps.
 *
 * @example A report and two files, the second over the byte cap
 * ```ts
 * import { KeeperStream } from "./workspace_files.ts";
 * import assert from "node:assert/strict";
 * const stream = new KeeperStream({ maxBytes: 4, maxFiles: 10 });
 * stream.push(new TextEncoder().encode("R 0 12 3 2\n3 1 5\na.txtabc5 0 5\nb.txt"));
 * const report = stream.end()!;
 * assert.equal(report.code, 0);
 * assert.deepEqual(report.files.files.map((f) => [f.name, f.size, f.data?.length ?? null]),
 *   [["a.txt", 3, 3], ["b.txt", 5, null]]);
 * assert.equal(report.files.note, "Script files over 4 bytes: 1 of 2 files left out");
 * ```
 */
export class KeeperStream {
  #caps: CollectCaps;
  // An incomplete header line and name (at most MAX_LINE + MAX_NAME).
  #pending: Uint8Array = new Uint8Array(0);
  // The file whose content is arriving, its buffer of its announced size.
  #body: { file: CollectedFile; data: Uint8Array; filled: number } | null =
    null;
  #head: { code: number; free: number; inodes: number; found: number } | null =
    null;
  #files: CollectedFile[] = [];
  #bytes = 0;
  #broken = false;

  /** @param caps what may be held */
  constructor(caps: CollectCaps) {
    this.#caps = caps;
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk bytes after the marker
   */
  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length && !this.#broken) {
      const body = this.#body;
      if (body) {
        const n = Math.min(chunk.length - at, body.data.length - body.filled);
        body.data.set(chunk.subarray(at, at + n), body.filled);
        body.filled += n;
        at += n;
        if (body.filled === body.data.length) this.#endBody();
        continue;
      }
      const limit = MAX_LINE + 1 + MAX_NAME;
      const take = Math.min(limit - this.#pending.length, chunk.length - at);
      const all = new Uint8Array(this.#pending.length + take);
      all.set(this.#pending);
      all.set(chunk.subarray(at, at + take), this.#pending.length);
      const used = this.#header(all);
      if (used === 0) {
        if (all.length >= limit) this.#broken = true;
        this.#pending = all;
        at += take;
        continue;
      }
      at += used - this.#pending.length;
      this.#pending = new Uint8Array(0);
    }
  }

  /**
   * The report, once the stream ended.
   *
   * @returns the report, or null when no report came
   */
  end(): KeeperReport | null {
    const head = this.#head;
    if (!head) return null;
    const caps = this.#caps;
    const files = this.#files;
    const sent = files.filter((f) => f.data !== null).length;
    const overBytes = files.some((f) => f.data === null);
    const overFiles = head.found > caps.maxFiles;
    const reasons = [
      ...overBytes ? [`${caps.maxBytes} bytes`] : [],
      ...overFiles ? [`${caps.maxFiles} files`] : [],
    ];
    let note = reasons.length > 0
      ? `Script files over ${reasons.join(" and ")}: ${
        count(head.found - sent)
      } of ${count(head.found)} files left out`
      : null;
    if (this.#broken || this.#pending.length > 0 || this.#body) {
      note = `${
        note ?? "Script files left out"
      } (the workspace's listing was cut)`;
    }
    return {
      code: head.code,
      bytesFull: head.free === 0,
      filesFull: head.inodes === 0,
      files: { files, found: head.found, note },
    };
  }

  // Reads one header (and name) from the start of `bytes`; returns how many
  // bytes it used, 0 when it is not complete yet.
  #header(bytes: Uint8Array): number {
    const eol = bytes.subarray(0, MAX_LINE + 1).indexOf(10);
    if (eol < 0) return bytes.length > MAX_LINE ? this.#break() : 0;
    const line = new TextDecoder().decode(bytes.subarray(0, eol)).split(" ");
    const numbers = line.slice(line[0] === "R" ? 1 : 0).map(Number);
    if (numbers.some((n) => !Number.isSafeInteger(n) || n < 0)) {
      return this.#break();
    }
    if (!this.#head) {
      if (line[0] !== "R" || numbers.length !== 4) return this.#break();
      const [code, free, inodes, found] = numbers as [
        number,
        number,
        number,
        number,
      ];
      this.#head = { code, free, inodes, found };
      return eol + 1;
    }
    if (numbers.length !== 3) return this.#break();
    const [size, send, nameLength] = numbers as [number, number, number];
    if (nameLength > MAX_NAME || this.#files.length >= this.#caps.maxFiles) {
      return this.#break();
    }
    if (send === 1 && this.#bytes + size > this.#caps.maxBytes) {
      return this.#break();
    }
    const used = eol + 1 + nameLength;
    if (bytes.length < used) return 0;
    const file: CollectedFile = {
      name: new TextDecoder().decode(bytes.subarray(eol + 1, used)),
      size,
      data: null,
      note: null,
    };
    if (send === 1) {
      this.#bytes += size;
      this.#body = { file, data: new Uint8Array(size), filled: 0 };
      if (size === 0) this.#endBody();
    } else {
      file.note =
        `not collected: over the ${this.#caps.maxBytes}-byte cap of a script's files`;
      this.#files.push(file);
    }
    return used;
  }

  #endBody(): void {
    const body = this.#body!;
    body.file.data = body.data;
    this.#files.push(body.file);
    this.#body = null;
  }

  #break(): number {
    this.#broken = true;
    return 0;
  }
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}
