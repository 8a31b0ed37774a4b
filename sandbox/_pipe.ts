/**
 * NDJSON framing between the host and a sandbox process.
 *
 * The sandbox's stdout is shared with untrusted code (`node:fs` can write to
 * fd 1 from a worker), so every frame the sandbox writes starts with a
 * per-process random nonce that only the host and the sandbox's own main
 * thread know. Lines without it are noise: counted, never parsed. Lines are
 * bounded in length so a skill printing 100 MB without a newline cannot grow
 * host memory.
 *
 * @module
 */

const NEWLINE = 0x0a;

/**
 * Makes a fresh nonce for one sandbox process.
 *
 * @returns 32 hex characters from the CSPRNG
 * @example
 * ```ts
 * import { makeNonce } from "./_pipe.ts";
 * import assert from "node:assert/strict";
 * assert.match(makeNonce(), /^[0-9a-f]{32}$/);
 * ```
 */
export function makeNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Encodes one frame: the nonce, then one line of JSON.
 *
 * @param nonce the process's nonce ("" for host-to-sandbox frames)
 * @param json the message, already serialized (must not contain a newline)
 * @returns the framed line
 * @example
 * ```ts
 * import { encodeFrame } from "./_pipe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeFrame("n0", '{"t":"ready"}'), 'n0{"t":"ready"}\n');
 * ```
 */
export function encodeFrame(nonce: string, json: string): string {
  return nonce + json + "\n";
}

/** Options for {@link readFrames}. */
export interface ReadFramesOptions {
  /** Only lines carrying this nonce are frames. @default "" (every line) */
  nonce?: string;
  /** Longer lines are dropped whole. @default 16 MiB */
  maxLineBytes?: number;
  /** Told about each line that is not a frame (its byte length). */
  onNoise?: (bytes: number) => void;
}

/**
 * Reads frames from a byte stream: splits lines, drops over-long ones, keeps
 * only those carrying the nonce, and parses the JSON after it. A garbage
 * prefix before the nonce (a skill printing without a newline) is skipped.
 *
 * @param stream the sandbox's stdout (or the host's stdin, nonce "")
 * @param options nonce, line bound, noise callback
 * @returns the parsed messages, in order
 * @example Skip noise
 * ```ts
 * import { readFrames } from "./_pipe.ts";
 * import assert from "node:assert/strict";
 * const text = 'hello\nxx{"bad":1}\ngarbageN1{"t":"ok"}\n';
 * const stream = new Blob([text]).stream();
 * const got = [];
 * for await (const m of readFrames(stream, { nonce: "N1" })) got.push(m);
 * assert.deepEqual(got, [{ t: "ok" }]);
 * ```
 */
export async function* readFrames(
  stream: ReadableStream<Uint8Array>,
  options: ReadFramesOptions = {},
): AsyncGenerator<unknown> {
  const nonce = options.nonce ?? "";
  const max = options.maxLineBytes ?? 16 * 1024 * 1024;
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  const finish = (): unknown => {
    if (dropping) {
      options.onNoise?.(size);
      return undefined;
    }
    const line = concat(parts, size);
    const text = decoder.decode(line);
    const at = nonce === "" ? 0 : text.lastIndexOf(nonce);
    if (at < 0) {
      options.onNoise?.(size);
      return undefined;
    }
    try {
      return JSON.parse(text.slice(at + nonce.length));
    } catch {
      options.onNoise?.(size);
      return undefined;
    }
  };
  for await (const chunk of stream) {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!dropping) {
        if (size + (end - start) > max) {
          // Keep counting but stop holding bytes: the line is noise anyway.
          dropping = true;
          parts = [];
        } else parts.push(chunk.subarray(start, end));
      }
      size += end - start;
      if (nl < 0) break;
      const message = finish();
      parts = [];
      size = 0;
      dropping = false;
      if (message !== undefined) yield message;
      start = nl + 1;
    }
  }
  if (size > 0 && !dropping) {
    const message = finish();
    if (message !== undefined) yield message;
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
