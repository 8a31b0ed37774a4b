/**
 * The stdio NDJSON transport the A2E Python SDK's `SubprocessTransport`
 * speaks: one session, one JSON message per line on stdin, answers one per
 * line on stdout and nothing else there. The session ends, cancelling its
 * calls, when stdin closes or the agent sends `shutdown`.
 *
 * @module
 */

import type { TransportContext } from "./_context.ts";

/** Options for {@link serveStdio}. */
export interface StdioOptions {
  /** Where messages come from. @default Deno.stdin.readable */
  stdin?: ReadableStream<Uint8Array>;
  /** Where answers go. @default Deno.stdout.writable */
  stdout?: WritableStream<Uint8Array>;
}

const NEWLINE = 0x0a;

/**
 * Serves one A2E session over NDJSON streams.
 *
 * @param context the host as transports see it
 * @param options the streams (stdin/stdout by default)
 * @returns resolves once stdin has closed (or `shutdown` was handled) and
 *   every answer has been written
 * @example Serve a ping from memory
 * ```ts ignore
 * import { serveStdio } from "./stdio.ts";
 * declare const context: import("./_context.ts").TransportContext;
 * const stdin = ReadableStream.from([new TextEncoder().encode('{"type":"ping"}\n')]);
 * await serveStdio(context, { stdin, stdout: new WritableStream() });
 * ```
 */
export async function serveStdio(
  context: TransportContext,
  options: StdioOptions = {},
): Promise<void> {
  const stdin = options.stdin ?? Deno.stdin.readable;
  const writer = (options.stdout ?? Deno.stdout.writable).getWriter();
  const encoder = new TextEncoder();
  let writes: Promise<void> = Promise.resolve();
  const reader = stdin.getReader();

  const session = context.openSession({
    transport: "stdio",
    send: (message) => {
      const line = encoder.encode(JSON.stringify(message) + "\n");
      // Chained so that lines never interleave and order is kept.
      writes = writes.then(() => writer.write(line)).catch((error) => {
        context.log(`Cannot write to stdout: ${(error as Error).message}`);
      });
    },
    onEnd: () => {
      reader.cancel().catch(() => {});
    },
  });
  if (typeof session === "string") {
    reader.releaseLock();
    throw new Error(`Cannot serve stdio: ${session}`);
  }

  const max = context.dispatcher.maxMessageBytes;
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let dropping = false; // inside a line already over the limit
  let droppedBytes = 0;
  let droppedHead = "";

  const line = (bytes: Uint8Array) => {
    const text = decoder.decode(bytes).trim();
    if (text !== "") context.dispatcher.receive(session, text);
  };

  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      let start = 0;
      while (start < value.length) {
        const end = value.indexOf(NEWLINE, start);
        const piece = value.subarray(start, end < 0 ? value.length : end);
        if (dropping) droppedBytes += piece.length;
        else if (pendingBytes + piece.length > max) {
          // Over the limit: stop buffering, keep the start for its id.
          dropping = true;
          droppedHead = decoder.decode(
            concat([...pending, piece]).subarray(0, 4096),
          );
          droppedBytes = pendingBytes + piece.length;
          pending = [];
          pendingBytes = 0;
        } else {
          pending.push(piece.slice());
          pendingBytes += piece.length;
        }
        if (end < 0) break;
        if (dropping) {
          context.dispatcher.rejectOversize(session, droppedBytes, droppedHead);
          dropping = false;
          droppedBytes = 0;
        } else {
          line(concat(pending));
        }
        pending = [];
        pendingBytes = 0;
        start = end + 1;
      }
    }
    // A last line without a newline still counts.
    if (!dropping && pendingBytes > 0) line(concat(pending));
  } catch (error) {
    if (!session.closed) {
      context.log(`Cannot read stdin: ${(error as Error).message}`);
    }
  } finally {
    session.close("stdin closed");
    await writes;
    writer.releaseLock();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1 && parts[0]) return parts[0];
  const size = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
