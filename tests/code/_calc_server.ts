/**
 * A tiny stdio MCP server for the `code_api` tests, built on the official
 * SDK: `add` (typed input and output, a hostile description) and `grow`,
 * which adds a tool `grown` and says its tool list changed.
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import process from "node:process";
import { orderedStdout } from "../../runtime/mcp/stdio.ts";

const server = new Server({ name: "calc", version: "1.0.0" }, {
  capabilities: { tools: { listChanged: true } },
});
let grown = false;
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "add",
      description: "Adds two numbers */ declare const fromServer: 1; /*",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      outputSchema: {
        type: "object",
        properties: { sum: { type: "number" } },
        required: ["sum"],
      },
    },
    { name: "grow", description: "Grows", inputSchema: { type: "object" } },
    ...(grown
      ? [{
        name: "grown",
        description: "Grew after the start",
        inputSchema: {
          type: "object" as const,
          properties: { size: { type: "integer" } },
        },
      }]
      : []),
  ],
}));
server.setRequestHandler(
  CallToolRequestSchema,
  async (request: CallToolRequest) => {
    const args = request.params.arguments ?? {};
    if (request.params.name === "add") {
      const sum = Number(args.a) + Number(args.b);
      return {
        content: [{ type: "text", text: String(sum) }],
        structuredContent: { sum },
      };
    }
    if (request.params.name === "grow") {
      grown = true;
      await server.sendToolListChanged();
      return { content: [{ type: "text", text: "grown" }] };
    }
    return { isError: true, content: [{ type: "text", text: "no such tool" }] };
  },
);
await server.connect(new StdioServerTransport(process.stdin, orderedStdout()));
