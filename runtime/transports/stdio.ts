/**
 * The stdio NDJSON transport the A2E Python SDK's `SubprocessTransport`
 * speaks: one session, one JSON message per line on stdin, answers one per
 * line on stdout and nothing else there. The session ends, cancelling its
 * calls, when stdin closes or the agent sends `shutdown`. An agent that
 * stops reading stdout meets the WebSocket path's rule (`client_bounds.ts`):
 * past 8 MiB waiting, live events are dropped; past 64 MiB the session
 * ends.
 *
 * @module
 */

import { LineSplitter } from "../../protocol/lines.ts";
import type { TransportContext } from "./transport_context.ts";
import { Session } from "../session.ts";
import { slowClientRule } from "./client_bounds.ts";
import { SALVAGE_BYTES } from "../../protocol/request_schemas.ts";
import type { OutgoingMessage } from "../capability.ts";

const encoder = new TextEncoder();

/**
 * Options for {@link serveStdio}.
 *
 * @example Serve a session from memory instead of stdin/stdout
 * ```ts
 * import { createHost } from "../host.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * const ping = new TextEncoder().encode('{"type":"ping","id":"p1"}\n');
 * let written = "";
 * await host.serveStdio({
 *   stdin: ReadableStream.from([ping]),
 *   stdout: new WritableStream({
 *     write(chunk) {
 *       written += new TextDecoder().decode(chunk);
 *     },
 *   }),
 * });
 * const pong = JSON.parse(written);
 * assert.equal(pong.type, "pong");
 * assert.equal(pong.req_id, "p1");
 * await host.close();
 * ```
 */
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
  const reader = stdin.getReader();
  const opened: { session?: { close(reason: string): void } } = {};
  const lines = stdoutLines(writer, context, () => {
    opened.session?.close("The client stopped reading");
  });
  const session = context.admitSession({
    transport: "stdio",
    send: (message) => lines.send(message),
    onEnd: () => {
      reader.cancel().catch(() => {});
    },
  });
  if (!(session instanceof Session)) {
    reader.releaseLock();
    throw new Error(`Cannot serve stdio: ${session.reason}`);
  }
  opened.session = session;

  const decoder = new TextDecoder();
  let ended = false;
  const splitter = new LineSplitter((bytes) => {
    const text = decoder.decode(bytes).trim();
    if (text !== "") context.dispatcher.receive(session, text);
  }, {
    maxLineBytes: context.dispatcher.maxMessageBytes,
    // Keep the start for its id, as much as an HTTP body's; an
    // unterminated one at the end is dropped.
    headBytes: SALVAGE_BYTES,
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
    await lines.written();
    writer.releaseLock();
  }
}

// The lines for stdout, written in order, with the bytes still waiting
// counted: an agent that stops reading meets the backlog rule.
function stdoutLines(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  context: TransportContext,
  onStalled: () => void,
): { send(message: OutgoingMessage): void; written(): Promise<void> } {
  let writes: Promise<void> = Promise.resolve();
  let waiting = 0;
  const decide = slowClientRule({
    client: "A stdio client",
    stopping: "Ending a stdio session whose client stopped reading",
    log: (line) => context.log(line),
  });
  return {
    send(message) {
      const decision = decide(waiting, message);
      if (decision === "disconnect") onStalled();
      if (decision !== "send") return;
      const line = encoder.encode(JSON.stringify(message) + "\n");
      waiting += line.byteLength;
      // Chained so that lines never interleave and order is kept.
      writes = writes.then(() => writer.write(line)).catch((error) => {
        context.log(`Cannot write to stdout: ${(error as Error).message}`);
      }).finally(() => {
        waiting -= line.byteLength;
      });
    },
    // Resolves once every line handed over so far is written.
    written: () => writes,
  };
}
