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
        maximum: 2_000_000,
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
    // The host held max_bytes to the input schema's bounds.
    const maxBytes = args.max_bytes ?? DEFAULT_MAX_BYTES;
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
    const numbered = args.line_numbers ?? false;
    const out: string[] = [];
    let lineNo = 0;
    let lastIncluded = 0;
    let outBytes = 0;
    let truncated = false;
    // Set when reading stopped before the end: past end_line, or at the cap.
    let stopped = false;
    const chunks = fifo
      ? fifoChunks(file, rel, ctx.signal)
      : file.readableWebStream();
    read: for await (const lines of linesOf(chunks, rel, size, maxBytes)) {
      for (const line of lines) {
        if (++lineNo < start) continue;
        if (lineNo > end) {
          stopped = true;
          break read;
        }
        const text = numbered ? `${lineNo}\t${line}` : line;
        const bytes = new TextEncoder().encode(text).length + 1;
        if (outBytes + bytes > maxBytes) {
          // A single huge line: return its head rather than nothing.
          if (out.length === 0) {
            out.push(cutUtf8(text, maxBytes));
            lastIncluded = lineNo;
          }
          truncated = stopped = true;
          break read;
        }
        out.push(text);
        outBytes += bytes;
        lastIncluded = lineNo;
      }
    }

    const data = {
      path: rel,
      content: out.join("\n") + (out.length > 0 ? "\n" : ""),
      start_line: start,
      end_line: lastIncluded,
      total_lines: stopped ? null : lineNo,
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
 * A file's lines, without their ends, a read's worth at a time (not one
 * await per line); a line longer than `maxChars` is given by its head, the
 * rest dropped. Refuses a file whose first chunk looks binary.
 */
async function* linesOf(
  chunks: AsyncIterable<Uint8Array>,
  rel: string,
  size: number,
  maxChars: number,
): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let pending = "";
  // Set once an overlong line was given: its rest is dropped.
  let skipping = false;
  let first = true;
  for await (const chunk of chunks) {
    if (first) {
      first = false;
      if (looksBinary(chunk)) {
        throw new Error(
          `"${rel}" looks like a binary file (${size} bytes): read_file returns text only`,
        );
      }
    }
    const lines: string[] = [];
    // Only the new text can hold a newline: the held line is not searched
    // again for each read.
    const [head = "", ...ends] = decoder.decode(chunk, { stream: true })
      .split("\n");
    pending += head;
    for (const next of ends) {
      if (skipping) skipping = false;
      else lines.push(pending.replace(/\r$/, ""));
      pending = next;
    }
    // A line longer than the cap is never kept whole (its UTF-8 is at
    // least as long as its UTF-16), so it is given now, not buffered.
    if (!skipping && pending.length > maxChars) {
      lines.push(pending);
      skipping = true;
    }
    if (skipping) pending = "";
    yield lines;
  }
  pending += decoder.decode();
  if (pending !== "") yield [pending.replace(/\r$/, "")];
}

function cutUtf8(text: string, maxBytes: number): string {
  // encodeInto stops before a character that does not fit whole; a U+FFFD
  // the text holds is kept like any other.
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}
