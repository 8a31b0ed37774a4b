/**
 * The keeper's report of a script run, held within the caps and parsed
 * once it ended (see `workspace_mount.ts` for what the keeper sends): the exit
 * code, whether the workspace was full, and the files the script left,
 * already bounded by the keeper (regular files only, at most `maxFiles` by
 * name, content only while the total stays within `maxBytes`). The host
 * holds no more than those caps allow, whatever arrives: bytes past them
 * are dropped and the report counts as cut. One read serves the artifacts
 * sent to the model and the files kept for the run's history.
 *
 * @module
 */

import { Buffer } from "node:buffer";

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
 * Holds the keeper's stream within the most a keeper within the caps can
 * send, and parses it once it ended.
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
  readonly #caps: CollectCaps;
  // The report's line, and for each file listed its header and name, and
  // the content of all together: a stream past this is not the keeper's,
  // and the rest of it is dropped unread.
  readonly #limit: number;
  readonly #chunks: Uint8Array[] = [];
  #held = 0;
  #over = false;

  /** @param caps what may be held */
  constructor(caps: CollectCaps) {
    this.#caps = caps;
    this.#limit = (MAX_LINE + 1) * (caps.maxFiles + 1) +
      MAX_NAME * caps.maxFiles + caps.maxBytes;
  }

  /** Bytes held so far: never more than a keeper within the caps sends. */
  get held(): number {
    return this.#held;
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk bytes after the marker
   */
  push(chunk: Uint8Array): void {
    const room = this.#limit - this.#held;
    if (chunk.length > room) this.#over = true;
    if (room === 0 || chunk.length === 0) return;
    // A copy: a view, even an empty one, keeps its whole chunk alive, and
    // what follows the bound is not the keeper's and may not end.
    const kept = chunk.slice(0, room);
    this.#chunks.push(kept);
    this.#held += kept.length;
  }

  /**
   * The report, once the stream ended.
   *
   * @returns the report, or null when no report came
   */
  end(): KeeperReport | null {
    const bytes = Buffer.concat(this.#chunks);
    let at = 0;
    // The next whole header line's words, or null.
    const line = (): string[] | null => {
      const eol = bytes.subarray(at, at + MAX_LINE + 1).indexOf(10);
      if (eol < 0) return null;
      const words = text(bytes.subarray(at, at + eol)).split(" ");
      at += eol + 1;
      return words;
    };
    const first = line();
    const report = first?.[0] === "R" ? numbers(first.slice(1)) : null;
    if (report?.length !== 4) return null;
    const [code = 0, free = 0, inodes = 0, found = 0] = report;
    const { maxBytes, maxFiles } = this.#caps;
    const files: CollectedFile[] = [];
    let sent = 0;
    let bytesSent = 0;
    let cut = this.#over;
    while (at < bytes.length) {
      const header = numbers(line() ?? []);
      const [size = 0, send = 0, nameLength = 0] = header ?? [];
      const end = at + nameLength + (send === 1 ? size : 0);
      if (
        header?.length !== 3 || nameLength > MAX_NAME ||
        files.length >= maxFiles ||
        (send === 1 && bytesSent + size > maxBytes) || end > bytes.length
      ) {
        cut = true;
        break;
      }
      const name = text(bytes.subarray(at, at + nameLength));
      if (send === 1) {
        bytesSent += size;
        sent++;
        // A copy of its own: the file outlives the stream's bytes.
        const data = new Uint8Array(bytes.subarray(at + nameLength, end));
        files.push({ name, size, data, note: null });
      } else {
        files.push({
          name,
          size,
          data: null,
          note:
            `not collected: over the ${maxBytes}-byte cap of a script's files`,
        });
      }
      at = end;
    }
    const reasons = [
      ...sent < files.length ? [`${maxBytes} bytes`] : [],
      ...found > maxFiles ? [`${maxFiles} files`] : [],
    ];
    let note = reasons.length > 0
      ? `Script files over ${reasons.join(" and ")}: ${
        count(found - sent)
      } of ${count(found)} files left out`
      : null;
    if (cut) {
      note = `${
        note ?? "Script files left out"
      } (the workspace's listing was cut)`;
    }
    return {
      code,
      bytesFull: free === 0,
      filesFull: inodes === 0,
      files: { files, found, note },
    };
  }
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

// A header's numbers, or null when one is not a whole number.
function numbers(words: readonly string[]): number[] | null {
  const all = words.map(Number);
  return all.every((n) => Number.isSafeInteger(n) && n >= 0) ? all : null;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}
