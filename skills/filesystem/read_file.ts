/**
 * `read_file`: reads a text file, or a range of its lines, with a size cap.
 *
 * @module
 */

import { constants, type FileHandle, open } from "node:fs/promises";
import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { withSummary } from "./_output.ts";
import { fsConfig, openedInside, resolveInRoot } from "./_paths.ts";
import { looksBinary } from "./_walk.ts";

interface Args {
  path: string;
  start_line?: number;
  end_line?: number;
  max_bytes?: number;
  line_numbers?: boolean;
}

const DEFAULT_MAX_BYTES = 100_000;
const LIMIT_MAX_BYTES = 2_000_000;

export default {
  kind: "tool",
  name: "read_file",
  toolkit: "filesystem",
  description:
    "Read a text file under the root, whole or a range of lines. Use it to look at source code, configs, logs or data files; use `grep` first to find where to look in large files.",
  tags: ["files", "read"],
  idempotent: true,
  input: {
    type: "object",
    properties: {
      path: { type: "string", description: "File path relative to root" },
      start_line: {
        type: "integer",
        minimum: 1,
        description: "First line to return, from 1 (default 1)",
      },
      end_line: {
        type: "integer",
        minimum: 1,
        description: "Last line to return, inclusive (default: end of file)",
      },
      max_bytes: {
        type: "integer",
        minimum: 1,
        maximum: LIMIT_MAX_BYTES,
        description:
          `Most bytes of content to return (default ${DEFAULT_MAX_BYTES}); the rest is cut at a line boundary and \`truncated\` is set`,
      },
      line_numbers: {
        type: "boolean",
        description: "Prefix each line with its number and a tab",
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      path: { type: "string" },
      content: { type: "string" },
      start_line: { type: "integer" },
      end_line: {
        type: "integer",
        description: "Last line included (0 when none)",
      },
      total_lines: {
        type: ["integer", "null"],
        description: "Lines in the file, when read to the end",
      },
      size: { type: "integer", description: "File size in bytes" },
      truncated: { type: "boolean" },
      next_start_line: {
        type: ["integer", "null"],
        description: "Where to continue when truncated",
      },
    },
  },
  async run(args, ctx) {
    const cfg = fsConfig(ctx.config);
    const { abs, rel } = await resolveInRoot(cfg, args.path);
    const start = args.start_line ?? 1;
    const end = args.end_line ?? Infinity;
    if (end < start) {
      throw new RangeError(
        `end_line (${end}) is before start_line (${start})`,
      );
    }
    const maxBytes = Math.min(
      args.max_bytes ?? DEFAULT_MAX_BYTES,
      LIMIT_MAX_BYTES,
    );
    // A FIFO is opened without waiting: a blocking open would hold the
    // call, and a thread of the shared process, until a writer came. What
    // the file is comes from this open handle, which is the one read: the
    // path may name another file by then.
    await using file = await open(
      abs,
      constants.O_RDONLY | constants.O_NONBLOCK,
    );
    const info = await file.stat();
    if (!await openedInside(cfg, abs, info)) {
      throw new Error(`"${rel}" was replaced while being opened`);
    }
    if (info.isDirectory()) {
      throw new Error(`"${rel}" is a directory: use list_dir`);
    }
    const fifo = info.isFIFO();
    const size = fifo ? 0 : info.size;
    const lines = new Lines(start, end, maxBytes, args.line_numbers ?? false);
    await readInto(
      fifo ? fifoChunks(file, rel, ctx.signal) : file.readableWebStream(),
      rel,
      size,
      lines,
    );
    const { out, lastIncluded, truncated, reachedEof, lineNo } = lines;

    const data = {
      path: rel,
      content: out.join("\n") + (out.length > 0 ? "\n" : ""),
      start_line: start,
      end_line: lastIncluded,
      total_lines: reachedEof ? lineNo : null,
      size,
      truncated,
      next_start_line: truncated ? lastIncluded + 1 : null,
    };
    const note = truncated
      ? ` (truncated at ${maxBytes} bytes; continue with start_line=${data.next_start_line})`
      : "";
    return withSummary(
      data,
      out.length === 0
        ? `No lines of "${rel}" in ${start}..${args.end_line ?? "end"}`
        : `Read lines ${start}-${lastIncluded} of "${rel}"${note}`,
    );
  },
} satisfies ToolDef<Args>;

/** Collects the requested lines of a file, up to a byte cap. */
class Lines {
  /** The lines kept, numbered when asked. */
  out: string[] = [];
  /** The last line seen, from 1. */
  lineNo = 0;
  /** The last line kept. */
  lastIncluded = 0;
  /** Stopped at the byte cap. */
  truncated = false;
  /** Read to the end of the file (false when stopped before). */
  reachedEof = true;
  /** Most bytes of content to keep. */
  readonly maxBytes: number;
  #outBytes = 0;
  #start: number;
  #end: number;
  #numbered: boolean;

  constructor(start: number, end: number, maxBytes: number, numbered: boolean) {
    this.#start = start;
    this.#end = end;
    this.maxBytes = maxBytes;
    this.#numbered = numbered;
  }

  /** Takes the file's next line; returns false to stop reading. */
  take(line: string): boolean {
    this.lineNo++;
    if (this.lineNo < this.#start) return true;
    if (this.lineNo > this.#end) {
      this.reachedEof = false;
      return false;
    }
    const text = this.#numbered ? `${this.lineNo}\t${line}` : line;
    const bytes = new TextEncoder().encode(text).length + 1;
    if (this.#outBytes + bytes > this.maxBytes) {
      if (this.out.length === 0) {
        // A single huge line: return its head rather than nothing.
        this.out.push(cutUtf8(text, this.maxBytes));
        this.lastIncluded = this.lineNo;
      }
      this.truncated = true;
      this.reachedEof = false;
      return false;
    }
    this.out.push(text);
    this.#outBytes += bytes;
    this.lastIncluded = this.lineNo;
    return true;
  }
}

/** How long a FIFO may stay without a writer before it is refused. */
const FIFO_WRITER_MS = 1_000;
/** The pause between reads of a FIFO that has nothing to read yet. */
const FIFO_POLL_MS = 10;

/**
 * The chunks of a FIFO opened without waiting. A read answers at once:
 * bytes, EAGAIN while a writer is there but silent, or nothing when no
 * writer is: the end once one has been seen, else a wait for one that
 * gives up after {@link FIFO_WRITER_MS}.
 */
async function* fifoChunks(
  handle: FileHandle,
  rel: string,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const since = Date.now();
  let writerSeen = false;
  while (true) {
    signal.throwIfAborted();
    const buf = new Uint8Array(1 << 16);
    let n: number;
    try {
      n = (await handle.read(buf, 0, buf.length, null)).bytesRead;
    } catch (err) {
      if ((err as { code?: string }).code !== "EAGAIN") throw err;
      writerSeen = true;
      await new Promise((wake) => setTimeout(wake, FIFO_POLL_MS));
      continue;
    }
    if (n > 0) {
      writerSeen = true;
      yield buf.subarray(0, n);
    } else if (writerSeen) {
      return;
    } else if (Date.now() - since > FIFO_WRITER_MS) {
      throw new Error(`"${rel}" is a FIFO that nothing writes to`);
    } else {
      await new Promise((wake) => setTimeout(wake, FIFO_POLL_MS));
    }
  }
}

/**
 * Streams a file's lines into `lines` until it stops taking them;
 * refuses a file whose first chunk looks binary.
 */
async function readInto(
  chunks: AsyncIterable<Uint8Array>,
  rel: string,
  size: number,
  lines: Lines,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  // Set once an overlong line was taken or skipped: its rest is dropped.
  let skipping = false;
  let first = true;
  read: for await (const chunk of chunks) {
    if (first) {
      first = false;
      if (looksBinary(chunk)) {
        throw new Error(
          `"${rel}" looks like a binary file (${size} bytes): read_file returns text only`,
        );
      }
    }
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl).replace(/\r$/, "");
      pending = pending.slice(nl + 1);
      if (skipping) skipping = false;
      else if (!lines.take(line)) break read;
    }
    // A line longer than the cap is never kept whole (its UTF-8 is at
    // least as long as its UTF-16), so it is taken now, not buffered.
    if (!skipping && pending.length > lines.maxBytes) {
      if (!lines.take(pending)) break read;
      skipping = true;
    }
    if (skipping) pending = "";
  }
  if (lines.reachedEof) {
    pending += decoder.decode();
    if (pending !== "") lines.take(pending.replace(/\r$/, ""));
  }
}

function cutUtf8(text: string, maxBytes: number): string {
  // encodeInto stops before a character that does not fit whole; a U+FFFD
  // the text holds is kept like any other.
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}
