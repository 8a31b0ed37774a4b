/**
 * A small MCP server for the import tests and bench, built on the official
 * SDK. `deno run -A _test_server.ts` serves stdio; `--http PORT_FILE`
 * serves Streamable HTTP on a free port (written to PORT_FILE) and checks an
 * `x-api-key: k` header; `--hang-start` never answers anything.
 * Tools: `add` (reports progress), `crash` (exits the process), `hang`
 * (never answers), `env` (returns the env it sees), `grow` (adds a tool
 * `grown` and says its tool list changed), `cancellations` (how many
 * `notifications/cancelled` it has been sent).
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type MessageExtraInfo,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import process from "node:process";
import { orderedStdout } from "../../runtime/mcp/stdio.ts";

// The server and the count of cancellations its transport brought.
function makeServer(): { server: Server; counted: (t: Transport) => void } {
  let cancellations = 0;
  const server = new Server({ name: "test-server", version: "1.0.0" }, {
    capabilities: { tools: { listChanged: true } },
  });
  let grown = false;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      ...(grown
        ? [{
          name: "grown",
          description: "Grew",
          inputSchema: { type: "object" as const },
        }]
        : []),
      { name: "grow", description: "Grows", inputSchema: { type: "object" } },
      {
        name: "add",
        description: "Adds two numbers",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
        },
        annotations: { idempotentHint: true },
      },
      { name: "crash", description: "Exits", inputSchema: { type: "object" } },
      {
        name: "hang",
        description: "Never answers",
        inputSchema: { type: "object" },
      },
      {
        name: "env",
        description: "Shows env",
        inputSchema: { type: "object" },
      },
      {
        name: "cancellations",
        description: "Counts cancellations",
        inputSchema: { type: "object" },
      },
    ],
  }));
  server.setRequestHandler(
    CallToolRequestSchema,
    async (
      request: CallToolRequest,
      extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
    ) => {
      const args = request.params.arguments ?? {};
      const token = extra._meta?.progressToken;
      switch (request.params.name) {
        case "add": {
          if (token !== undefined) {
            for (const p of [1, 2]) {
              await extra.sendNotification({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress: p,
                  total: 2,
                  message: `part ${p}`,
                },
              });
            }
          }
          const sum = Number(args.a) + Number(args.b);
          return {
            content: [{ type: "text", text: String(sum) }],
            structuredContent: { sum },
          };
        }
        case "crash":
          Deno.exit(3);
          break;
        case "hang":
          await new Promise((resolve) =>
            extra.signal.addEventListener("abort", resolve)
          );
          return { content: [{ type: "text", text: "cancelled" }] };
        case "grow":
          grown = true;
          await server.sendToolListChanged();
          return { content: [{ type: "text", text: "grown" }] };
        case "cancellations":
          return {
            content: [{ type: "text", text: String(cancellations) }],
            structuredContent: { count: cancellations },
          };
        case "env":
          return {
            content: [{
              type: "text",
              text: JSON.stringify(Deno.env.toObject()),
            }],
          };
      }
      return {
        isError: true,
        content: [{ type: "text", text: "no such tool" }],
      };
    },
  );
  return {
    server,
    // Call after connect: counts what the transport hands the server.
    counted(transport) {
      const deliver = transport.onmessage!;
      transport.onmessage = (
        message: JSONRPCMessage,
        extra?: MessageExtraInfo,
      ) => {
        if (
          "method" in message && message.method === "notifications/cancelled"
        ) {
          cancellations++;
        }
        deliver(message, extra);
      };
    },
  };
}

async function serve(transport: Transport): Promise<void> {
  const { server, counted } = makeServer();
  await server.connect(transport);
  counted(transport);
}

if (import.meta.main) {
  const args = Deno.args;
  if (args.includes("--hang-start")) {
    await new Promise(() => {});
  }
  const http = args.indexOf("--http");
  if (http >= 0) {
    const portFile = args[http + 1]!;
    const transports = new Map<
      string,
      WebStandardStreamableHTTPServerTransport
    >();
    Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => Deno.writeTextFileSync(portFile, String(port)),
    }, async (req) => {
      if (req.headers.get("x-api-key") !== "k") {
        return new Response("no key", { status: 401 });
      }
      const id = req.headers.get("mcp-session-id");
      let transport = id ? transports.get(id) : undefined;
      if (!transport) {
        transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (sid: string) =>
            transports.set(sid, transport!),
        });
        await serve(transport);
      }
      return transport.handleRequest(req);
    });
  } else {
    await serve(new StdioServerTransport(process.stdin, orderedStdout()));
  }
}
