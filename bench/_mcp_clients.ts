/**
 * The clients of the MCP bench, each keeping one connection (one session):
 *
 * - `a2eSocket`: a raw `WebSocket` sending hand-written A2E JSON and
 *   `JSON.parse`-ing what comes back;
 * - `thinHttp` and `thinStdio`: MCP clients of the same weight, a `fetch`
 *   POST of hand-written JSON-RPC with the session header reading one JSON
 *   (or SSE) answer, and a line written to a child's stdin with lines read
 *   from its stdout into one reused buffer;
 * - `rawHttp`: the same POST written by hand as HTTP/1.1 on one TCP
 *   connection, its JSON answer read by `Content-Length` (what `fetch`
 *   costs the client, about twice the WebSocket client's CPU, left out);
 * - `sdkHttp` and `sdkStdio`: the official SDK `Client` (what MCP clients
 *   use: zod parsing of every message, result schema checks).
 *
 * Every `call` fails on an error answer, so a bench never times failures.
 * The servers are the real ones (skillbox, or the official SDK's).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

/** A connected bench client. */
export interface BenchClient {
  /** Calls a tool; rejects on an error answer. */
  call(tool: string, args: Record<string, unknown>): Promise<void>;
  /** The process serving this client's session, when it is a child. */
  readonly pid?: number;
  /** Its MCP session id, for a client over HTTP. */
  readonly session?: string;
  /** Closes the connection (and the child, if any). */
  close(): Promise<void>;
}

/** A command that serves MCP on its stdio. */
export interface StdioCommand {
  /** The program. */
  command: string;
  /** Its arguments. */
  args: string[];
  /** Its working folder. */
  cwd?: string;
}

type Json = Record<string, unknown>;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "bench", version: "1" },
  },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

const toolCall = (id: number, name: string, args: Json) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });

function checkAnswer(message: Json): void {
  const result = message.result as Json | undefined;
  if (!result || result.isError) {
    throw new Error(`MCP call failed: ${JSON.stringify(message)}`);
  }
}

/**
 * A raw A2E WebSocket client.
 *
 * @param url the host's `ws://.../a2e`
 * @returns the client
 */
export async function a2eSocket(url: string): Promise<BenchClient> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const waiting = new Map<string, (message: Json) => void>();
  socket.onmessage = (e) => {
    const msg = JSON.parse(String(e.data));
    if (!String(msg.type).endsWith("/event")) waiting.get(msg.req_id)?.(msg);
  };
  let n = 0;
  return {
    call(tool, args) {
      const id = String(++n).padStart(32, "0");
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, (msg) => {
          waiting.delete(id);
          if (msg.type === "error") reject(new Error(JSON.stringify(msg)));
          else resolve();
        });
        socket.send(JSON.stringify({
          type: "tool/call/req",
          id,
          version: "1.0",
          ts: Date.now() / 1000,
          tool_name: tool,
          arguments: args,
        }));
      });
    },
    close: () => Promise.resolve(socket.close()),
  };
}

// One JSON-RPC message out of a JSON or SSE answer.
async function answerOf(response: Response): Promise<Json> {
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  }
  if (response.headers.get("content-type")?.includes("application/json")) {
    return await response.json();
  }
  const data = (await response.text()).split("\n")
    .filter((line) => line.startsWith("data: "));
  return JSON.parse(data[data.length - 1]!.slice(6));
}

/**
 * A thin Streamable HTTP client: one `fetch` POST per call.
 *
 * @param url the server's `/mcp` URL
 * @returns the client
 */
export async function thinHttp(url: string): Promise<BenchClient> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const post = (body: string) => fetch(url, { method: "POST", headers, body });
  const init = await post(JSON.stringify(INITIALIZE));
  const session = init.headers.get("mcp-session-id");
  await answerOf(init);
  if (session === null) throw new Error("No MCP session id");
  headers["mcp-session-id"] = session;
  headers["mcp-protocol-version"] = LATEST_PROTOCOL_VERSION;
  await (await post(JSON.stringify(INITIALIZED))).body?.cancel();
  let n = 0;
  return {
    session,
    async call(tool, args) {
      checkAnswer(await answerOf(await post(toolCall(++n, tool, args))));
    },
    async close() {
      await (await fetch(url, { method: "DELETE", headers })).body?.cancel();
    },
  };
}

/**
 * A raw Streamable HTTP client: the session is opened with `fetch`, then
 * every call is an HTTP/1.1 POST written by hand on one keep-alive TCP
 * connection, its answer's body read by `Content-Length` (the server
 * answers a plain call as JSON). The HTTP counterpart of {@link a2eSocket}.
 *
 * @param url the server's `/mcp` URL
 * @returns the client
 */
export async function rawHttp(url: string): Promise<BenchClient> {
  const opened = await thinHttp(url);
  const session = opened.session!;
  const target = new URL(url);
  const conn = await Deno.connect({
    hostname: target.hostname,
    port: Number(target.port),
  });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const head = `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\n` +
    "content-type: application/json\r\n" +
    "accept: application/json, text/event-stream\r\n" +
    `mcp-session-id: ${session}\r\n` +
    `mcp-protocol-version: ${LATEST_PROTOCOL_VERSION}\r\ncontent-length: `;
  let buffer = new Uint8Array(64 * 1024);
  let n = 0;
  // Reads until `have` bytes are buffered.
  let have = 0;
  const fill = async (need: number) => {
    while (have < need) {
      if (buffer.length < need) {
        const bigger = new Uint8Array(need * 2);
        bigger.set(buffer.subarray(0, have));
        buffer = bigger;
      }
      const got = await conn.read(buffer.subarray(have));
      if (got === null) throw new Error("The server closed the connection");
      have += got;
    }
  };
  const headEnd = () => {
    for (let i = 3; i < have; i++) {
      if (
        buffer[i] === 10 && buffer[i - 1] === 13 && buffer[i - 2] === 10 &&
        buffer[i - 3] === 13
      ) return i + 1;
    }
    return -1;
  };
  return {
    async call(tool, args) {
      const body = encoder.encode(toolCall(++n, tool, args));
      const request = encoder.encode(`${head}${body.length}\r\n\r\n`);
      const out = new Uint8Array(request.length + body.length);
      out.set(request);
      out.set(body, request.length);
      for (let at = 0; at < out.length;) {
        at += await conn.write(out.subarray(at));
      }
      let end: number;
      while ((end = headEnd()) < 0) await fill(have + 1);
      const lines = decoder.decode(buffer.subarray(0, end)).toLowerCase();
      const status = lines.slice(9, 12);
      const length = /\r\ncontent-length: *(\d+)/.exec(lines)?.[1];
      if (length === undefined) {
        throw new Error(`Expected a JSON answer with a length: ${lines}`);
      }
      await fill(end + Number(length));
      const text = decoder.decode(buffer.subarray(end, end + Number(length)));
      buffer.copyWithin(0, end + Number(length), have);
      have -= end + Number(length);
      if (status !== "200") throw new Error(`HTTP ${status}: ${text}`);
      checkAnswer(JSON.parse(text));
    },
    async close() {
      conn.close();
      await opened.close();
    },
  };
}

/**
 * A thin stdio client: writes a line, reads lines until the answer.
 *
 * @param server the command serving MCP on stdio
 * @returns the client
 */
export async function thinStdio(server: StdioCommand): Promise<BenchClient> {
  const child = new Deno.Command(server.command, {
    args: server.args,
    cwd: server.cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  // As lean as the WebSocket client: one reused buffer read in place (no
  // decoder stream, no chunk per read), a line decoded once it is whole.
  const reader = child.stdout.getReader({ mode: "byob" });
  let buffer = new Uint8Array(64 * 1024);
  let have = 0;
  const next = async (): Promise<Json> => {
    for (;;) {
      const end = buffer.subarray(0, have).indexOf(10);
      if (end >= 0) {
        const message = JSON.parse(decoder.decode(buffer.subarray(0, end)));
        buffer.copyWithin(0, end + 1, have);
        have -= end + 1;
        if (message.id !== undefined) return message;
        continue; // A notification.
      }
      if (have === buffer.length) {
        const bigger = new Uint8Array(buffer.length * 2);
        bigger.set(buffer);
        buffer = bigger;
      }
      const { done, value } = await reader.read(buffer.subarray(have));
      if (done || value === undefined) {
        throw new Error("The stdio server ended");
      }
      buffer = new Uint8Array(value.buffer);
      have += value.length;
    }
  };
  const send = (text: string) => writer.write(encoder.encode(text + "\n"));
  await send(JSON.stringify(INITIALIZE));
  await next();
  await send(JSON.stringify(INITIALIZED));
  let n = 0;
  return {
    pid: child.pid,
    async call(tool, args) {
      await send(toolCall(++n, tool, args));
      checkAnswer(await next());
    },
    async close() {
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

/**
 * The official SDK client over Streamable HTTP.
 *
 * @param url the server's `/mcp` URL
 * @returns the client
 */
export async function sdkHttp(url: string): Promise<BenchClient> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return sdkCalls(client);
}

/**
 * The official SDK client over stdio.
 *
 * @param server the command serving MCP on stdio
 * @returns the client
 */
export async function sdkStdio(server: StdioCommand): Promise<BenchClient> {
  const client = new Client({ name: "bench", version: "1" });
  const transport = new StdioClientTransport({ ...server, stderr: "ignore" });
  await client.connect(transport);
  return sdkCalls(client, transport.pid ?? undefined);
}

function sdkCalls(client: Client, pid?: number): BenchClient {
  return {
    pid,
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(JSON.stringify(result));
    },
    close: () => client.close(),
  };
}

/**
 * Starts a server process that prints `listening: <url>` on stderr.
 *
 * @param command the program and its arguments
 * @param pattern finds the URL in what it prints
 * @param cwd its working folder
 * @returns its URL, pid and a way to stop it
 */
export async function spawnListening(
  command: StdioCommand,
  pattern: RegExp,
): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child = new Deno.Command(command.command, {
    args: command.args,
    cwd: command.cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | undefined;
  while (url === undefined) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`The bench server did not start: ${seen}`);
    seen += value;
    url = seen.match(pattern)?.[1];
  }
  // Keeps reading, so that its log never fills the pipe.
  const drained = (async () => {
    while (!(await lines.read()).done) { /* discard */ }
  })();
  return {
    url,
    pid: child.pid,
    async close() {
      child.kill("SIGTERM");
      await child.status;
      await drained.catch(() => {});
    },
  };
}
