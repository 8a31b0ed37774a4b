/**
 * An MCP client transport over a child process's stdio, for imported stdio
 * servers: the official SDK frames and parses the messages (`ReadBuffer`,
 * `serializeMessage`); this only moves bytes, so that the process can be
 * started by {@link mcpServerCommand} (cleared environment, confinement)
 * instead of the SDK's own spawner.
 *
 * @module
 */

import {
  ReadBuffer,
  serializeMessage,
} from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Buffer } from "node:buffer";
import type { ConfinementLayout } from "../sandbox/confinement_args.ts";
import { type McpProcessSpec, mcpServerCommand } from "./spawn.ts";

/**
 * A transport that runs a stdio MCP server.
 *
 * @example
 * ```ts ignore
 * const client = new Client({ name: "skillbox", version: "1" });
 * await client.connect(new ProcessClientTransport({ command: "my-server" }));
 * ```
 */
export class ProcessClientTransport implements Transport {
  /** Called when the process exits or the transport closes. */
  onclose?: () => void;
  /** Called on a framing or pipe error. */
  onerror?: (error: Error) => void;
  /** Called with each message from the server. */
  onmessage?: (message: JSONRPCMessage) => void;
  /** The last lines the server wrote to stderr (for the failure reason). */
  stderrTail = "";

  #spec: McpProcessSpec;
  #layout: ConfinementLayout | null;
  #child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #buffer = new ReadBuffer();
  #closed = false;

  /**
   * @param spec what to run
   * @param layout the confinement layout, or null to run unconfined
   */
  constructor(spec: McpProcessSpec, layout: ConfinementLayout | null = null) {
    this.#spec = spec;
    this.#layout = layout;
  }

  /** The process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the process. */
  start(): Promise<void> {
    const child = mcpServerCommand(this.#spec, this.#layout).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#pump(child.stdout, async (chunk) => {
      this.#buffer.append(Buffer.from(chunk));
      while (true) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
        // The SDK handles a notification a microtask later but a response
        // at once: yield, so a progress notification is not overtaken by
        // the result that followed it in the same chunk.
        await new Promise<void>((resolve) => queueMicrotask(resolve));
        await Promise.resolve();
      }
    });
    const decoder = new TextDecoder();
    this.#pump(child.stderr, (chunk) => {
      this.stderrTail = (this.stderrTail + decoder.decode(chunk)).slice(-2000);
    });
    child.status.then(() => this.#finish());
    return Promise.resolve();
  }

  /** Writes one message to the server's stdin. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) {
      throw new Error("Cannot send: the MCP server process is not running");
    }
    await this.#writer.write(
      new TextEncoder().encode(serializeMessage(message)),
    );
  }

  /** Kills the process. */
  close(): Promise<void> {
    try {
      this.#child?.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    this.#finish();
    return Promise.resolve();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#writer?.close().catch(() => {});
    this.onclose?.();
  }

  async #pump(
    stream: ReadableStream<Uint8Array>,
    onChunk: (chunk: Uint8Array) => void | Promise<void>,
  ): Promise<void> {
    try {
      for await (const chunk of stream) await onChunk(chunk);
    } catch {
      // The process is gone; status settles and closes the transport.
    }
  }
}
