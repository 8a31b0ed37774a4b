/**
 * The stdio NDJSON transport the A2E Python SDK's `SubprocessTransport`
 * speaks: one session, one JSON message per line on stdin, answers one per
 * line on stdout and nothing else there. The session ends, cancelling its
 * calls, when stdin closes or the agent sends `shutdown`.
 *
 * @module
 */

import { LineSplitter } from "../../protocol/lines.ts";
import type { TransportContext } from "./transport_context.ts";

/** Options for {@link serveStdio}. */
export interface StdioOptions {
  /** Where messages come from. @default Deno.stdin.readable */
  stdin?: ReadableStream<Uint8Array>;
  /** Where answers go. @default Deno.stdout.writable */
  stdout?: WritableStream<Uint8Array>;
}

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
 * declare const context: import("./transport_context.ts").TransportContext;
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

  const decoder = new TextDecoder();
  let ended = false;
  const splitter = new LineSplitter((bytes) => {
    const text = decoder.decode(bytes).trim();
    if (text !== "") context.dispatcher.receive(session, text);
  }, {
    maxLineBytes: context.dispatcher.maxMessageBytes,
    // Keep the start for its id; an unterminated one at the end is dropped.
    headBytes: 4096,
    onOversize: (bytes, head) => {
      if (ended) return;
      context.dispatcher.rejectOversize(session, bytes, decoder.decode(head));
    },
  });

  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      splitter.push(value);
    }
    // A last line without a newline still counts.
    ended = true;
    splitter.end();
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
