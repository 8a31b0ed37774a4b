/**
 * The floor of the MCP bench: a bare official-SDK MCP server with one
 * `echo` tool and no skillbox behind it (the handler answers at once, no
 * sandbox). `deno run -A _mcp_bare_server.ts` serves stdio; `--http` serves
 * Streamable HTTP (a server per session, answers as JSON like skillbox's quick calls)
 * on a free loopback port, printed as `listening: http://...` on stderr.
 * The echo result has the shape skillbox gives the same call
 * (`structuredContent` plus the JSON as text).
 *
 * @module
 */

import process from "node:process";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { orderedStdout } from "../runtime/mcp/stdio.ts";

function bareServer(): Server {
  const server = new Server({ name: "bare", version: "1" }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "echo", inputSchema: { type: "object" } }],
  }));
  server.setRequestHandler(
    CallToolRequestSchema,
    (request: CallToolRequest) => {
      const args = request.params.arguments ?? {};
      return {
        content: [{ type: "text", text: JSON.stringify(args) }],
        structuredContent: args,
      };
    },
  );
  return server;
}

if (import.meta.main) {
  if (Deno.args.includes("--http")) {
    const sessions = new Map<
      string,
      WebStandardStreamableHTTPServerTransport
    >();
    Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        // deno-lint-ignore no-console
        console.error(`listening: http://127.0.0.1:${port}/mcp`),
    }, async (request) => {
      const id = request.headers.get("mcp-session-id");
      let transport = id === null ? undefined : sessions.get(id);
      if (!transport) {
        const opened = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sid: string) => sessions.set(sid, opened),
        });
        await bareServer().connect(opened);
        transport = opened;
      }
      return await transport.handleRequest(request);
    });
  } else {
    await bareServer().connect(
      new StdioServerTransport(process.stdin, orderedStdout()),
    );
  }
}
