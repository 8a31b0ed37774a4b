/**
 * MCP's newline-delimited JSON-RPC on stdin and stdout: the host's own
 * stdio transport, and an ordered stdout for servers built on the SDK's.
 *
 * ## The line transport
 *
 * The MCP stdio transport of the host (`deno run host --mcp`, served by
 * `serveMcpStdio` in `server.ts`): newline-delimited JSON-RPC read from
 * stdin into one reused buffer and split by the one size-capped line
 * splitter, answers written to stdout synchronously, in order.
 *
 * It implements the official SDK's `Transport` interface, so the SDK's
 * `Server` does all of JSON-RPC (routing, validation of every message,
 * errors). The SDK's own `StdioServerTransport` goes through node streams
 * (a `Readable` over stdin, a `Buffer.concat` per chunk) and parses each
 * message with zod, which the SDK's `Server` then does a second time; on a
 * call that cost about a sixth of the host's CPU. Unlike it, a line that is
 * not JSON, or is over the cap, gets a JSON-RPC error answer and the
 * session goes on (the SDK's closes on an overlong line).
 *
 * ## Ordered stdout for SDK servers
 *
 * A Node-style writable over `Deno.stdout` that writes synchronously, for
 * the SDK's `StdioServerTransport`: Deno's `process.stdout` can let a later
 * message overtake an earlier one on a pipe (a result before its progress
 * notifications); synchronous writes keep the order.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject } from "../../protocol/json.ts";
import { LineSplitter } from "../../protocol/lines.ts";
import { Writable } from "node:stream";

/** Where the transport reads from: `Deno.stdin` or a stand-in. */
export interface ByteSource {
  /** Reads into `buffer`; null at the end. */
  read(buffer: Uint8Array): Promise<number | null>;
}

/** Where the transport writes to: `Deno.stdout` or a stand-in. */
export interface ByteSink {
  /** Writes some of `bytes` at once; returns how many. */
  writeSync(bytes: Uint8Array): number;
}

/** Options of {@link StdioLineTransport}. */
export interface StdioLineTransportOptions {
  /** Where messages come from. @default Deno.stdin */
  input?: ByteSource;
  /** Where messages go. @default Deno.stdout */
  output?: ByteSink;
  /** The longest line taken, in bytes. @default 16 MiB */
  maxLineBytes?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CR = 0x0d;
// What one read of the input takes at most.
const READ_BYTES = 64 * 1024;

/**
 * An SDK `Transport` over newline-delimited JSON on a byte source and sink.
 * It ends (calls `onclose`) when its input ends or its output breaks.
 *
 * @example Answer a ping, and a line that is not JSON
 * ```ts
 * import { StdioLineTransport } from "./stdio.ts";
 * import { Server } from "@modelcontextprotocol/sdk/server/index.js";
 * import assert from "node:assert/strict";
 * const lines = [
 *   JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
 *   "not json",
 * ].map((l) => new TextEncoder().encode(l + "\n"));
 * const answers: { id: unknown; result?: unknown; error?: { code: number } }[] = [];
 * const both = Promise.withResolvers<void>();
 * const transport = new StdioLineTransport({
 *   input: {
 *     // Two lines, then nothing more until the transport is closed.
 *     read: (buffer) => {
 *       const next = lines.shift();
 *       if (next === undefined) return both.promise.then(() => null);
 *       buffer.set(next);
 *       return Promise.resolve(next.length);
 *     },
 *   },
 *   output: {
 *     writeSync: (bytes) => {
 *       answers.push(JSON.parse(new TextDecoder().decode(bytes)));
 *       if (answers.length === 2) both.resolve();
 *       return bytes.length;
 *     },
 *   },
 * });
 * const server = new Server({ name: "s", version: "1" }, { capabilities: {} });
 * await server.connect(transport);
 * await both.promise;
 * assert.deepEqual(answers.find((a) => a.id === 1)?.result, {});
 * assert.equal(answers.find((a) => a.id === null)?.error?.code, -32700);
 * await server.close();
 * ```
 */
export class StdioLineTransport implements Transport {
  /** Set by the server on connect. */
  onclose?: () => void;
  /** Set by the server on connect. */
  onerror?: (error: Error) => void;
  /** Set by the server on connect. */
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #input: ByteSource;
  readonly #output: ByteSink;
  readonly #splitter: LineSplitter;
  #started = false;
  #closed = false;

  /** @param options the input, output and line cap */
  constructor(options: StdioLineTransportOptions = {}) {
    this.#input = options.input ?? Deno.stdin;
    this.#output = options.output ?? Deno.stdout;
    const maxLineBytes = options.maxLineBytes ?? 16 * 1024 * 1024;
    this.#splitter = new LineSplitter((line) => this.#onLine(line), {
      maxLineBytes,
      onOversize: (bytes) =>
        this.#refuse(
          ErrorCode.InvalidRequest,
          `Message too large: ${bytes} bytes (limit ${maxLineBytes})`,
        ),
    });
  }

  /**
   * Starts reading (the server does this on connect).
   *
   * @throws {Error} when started twice
   */
  start(): Promise<void> {
    if (this.#started) {
      throw new Error("The stdio transport is started already");
    }
    this.#started = true;
    this.#read().catch((error: Error) => {
      this.onerror?.(error);
      void this.close();
    });
    return Promise.resolve();
  }

  /**
   * Writes one message as one line, synchronously, so that answers and
   * notifications leave in the order they were sent.
   *
   * @param message the message
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    try {
      writeAllSync(
        this.#output,
        encoder.encode(JSON.stringify(message) + "\n"),
      );
    } catch (error) {
      // Nobody reads our answers any more: the session is over.
      this.onerror?.(error as Error);
      void this.close();
    }
    return Promise.resolve();
  }

  /** Stops taking messages and tells the server. Idempotent. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.onclose?.();
    }
    return Promise.resolve();
  }

  async #read(): Promise<void> {
    const buffer = new Uint8Array(READ_BYTES);
    while (!this.#closed) {
      const n = await this.#input.read(buffer);
      if (n === null) break;
      // The splitter copies what it keeps: the buffer is reused at once.
      this.#splitter.push(buffer.subarray(0, n));
    }
    this.#splitter.end();
    await this.close();
  }

  #onLine(bytes: Uint8Array): void {
    if (this.#closed) return;
    // A CRLF line ends with CR; an empty line is no message.
    const end = bytes[bytes.length - 1] === CR
      ? bytes.length - 1
      : bytes.length;
    if (end === 0) return;
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(decoder.decode(bytes.subarray(0, end)));
    } catch (error) {
      this.#refuse(
        ErrorCode.ParseError,
        `Parse error: ${(error as Error).message}`,
      );
      return;
    }
    // The SDK's Server drops, unanswered, a message its schemas refuse: a
    // client waiting on its id would wait forever. Its own schema judges
    // here (0.4 µs for a tools/call); one with no id to answer goes on to
    // the SDK, which logs it.
    if (!JSONRPCMessageSchema.safeParse(message).success) {
      const id = requestId(message);
      if (id !== null) {
        this.#refuse(
          ErrorCode.InvalidRequest,
          "Invalid Request: not a JSON-RPC 2.0 request, notification or response the MCP schema accepts",
          id,
        );
        return;
      }
    }
    this.onmessage?.(message);
  }

  // An answer to a line that is no message: JSON-RPC says `id: null`
  // unless the request's id can be read.
  #refuse(
    code: number,
    message: string,
    id: string | number | null = null,
  ): void {
    this.onerror?.(new Error(message));
    void this.send(
      {
        jsonrpc: "2.0",
        id,
        error: { code, message },
      } as unknown as JSONRPCMessage,
    );
  }
}

/**
 * A message's JSON-RPC id, to answer it with: a string or an integer, or
 * null when it has none that can be read (JSON-RPC's id for such answers).
 *
 * @param message a parsed message, valid or not
 * @returns its id, or null
 * @example
 * ```ts
 * import { requestId } from "./stdio.ts";
 * import assert from "node:assert/strict";
 * assert.equal(requestId({ jsonrpc: "2.0", id: 7, method: "ping" }), 7);
 * assert.equal(requestId({ id: 1.5 }), null);
 * assert.equal(requestId("not an object"), null);
 * ```
 */
export function requestId(message: unknown): string | number | null {
  const id = isPlainObject(message) ? message.id : undefined;
  return typeof id === "string" || Number.isInteger(id)
    ? id as string | number
    : null;
}

// A sink may take only some of the bytes at a time.
function writeAllSync(sink: ByteSink, bytes: Uint8Array): void {
  while (bytes.length > 0) bytes = bytes.subarray(sink.writeSync(bytes));
}

/**
 * Creates the writable.
 *
 * @param out where bytes go @default Deno.stdout
 * @returns a writable that writes each chunk whole, in order
 * @example
 * ```ts
 * import { orderedStdout } from "./stdio.ts";
 * import assert from "node:assert/strict";
 * const seen: number[] = [];
 * const w = orderedStdout({ writeSync: (b) => (seen.push(b.length), b.length) });
 * await new Promise((r) => w.write("abc", r));
 * assert.deepEqual(seen, [3]);
 * ```
 */
export function orderedStdout(out: ByteSink = Deno.stdout): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      try {
        writeAllSync(
          out,
          typeof chunk === "string" ? encoder.encode(chunk) : chunk,
        );
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
