/**
 * A stdio MCP server for the confinement tests, built on the official SDK:
 * `add` (reports progress) and `probe`, which tries what a hostile server
 * would (read a host file outside its folder, see a host process, connect
 * to a loopback port, write its own folder) and reports each outcome.
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "probe", version: "1.0.0" }, {
  capabilities: { tools: {} },
});
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: "add", description: "Adds", inputSchema: { type: "object" } },
    { name: "probe", description: "Probes", inputSchema: { type: "object" } },
  ],
}));

async function attempt(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return "ok";
  } catch (error) {
    return `denied: ${(error as Error).name}`;
  }
}

server.setRequestHandler(CallToolRequestSchema, async (
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  if (request.params.name === "add") {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: 1,
          total: 1,
          message: "half",
        },
      });
    }
    const sum = Number(args.a) + Number(args.b);
    return {
      content: [{ type: "text", text: String(sum) }],
      structuredContent: { sum },
    };
  }
  const report = {
    read: await attempt(() => Deno.readTextFile(String(args.file))),
    process: await attempt(() => Deno.stat(`/proc/${args.pid}`)),
    connect: await attempt(async () => {
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: Number(args.port),
      });
      conn.close();
    }),
    write: await attempt(() =>
      Deno.writeTextFile(String(args.write), "planted")
    ),
  };
  return {
    content: [{ type: "text", text: JSON.stringify(report) }],
    structuredContent: report,
  };
});

await server.connect(new StdioServerTransport());
