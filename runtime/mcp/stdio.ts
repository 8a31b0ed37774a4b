/**
 * MCP over stdio (`deno run host --mcp`): one session on stdin/stdout,
 * through the official SDK's `StdioServerTransport`, trusted like `--stdio`
 * (no token). Logs go to stderr; the session ends, cancelling its calls,
 * when stdin closes.
 *
 * @module
 */

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { TransportContext } from "../transports/_context.ts";
import { openA2eLink } from "./a2e_link.ts";
import { orderedStdout } from "./stdout.ts";
import { stdinReadable } from "./stdin.ts";
import { createMcpServer, type McpServerOptions } from "./server.ts";

/**
 * Serves one MCP session on the process's stdin and stdout.
 *
 * @param context the host as transports see it
 * @param options tool facts
 * @returns resolves once stdin has closed
 * @throws {Error} when the host refuses a session (full or closing)
 * @example
 * ```ts ignore
 * await serveMcpStdio(context);
 * ```
 */
export async function serveMcpStdio(
  context: TransportContext,
  options: McpServerOptions = {},
): Promise<void> {
  const link = openA2eLink(context, {
    onPush: (message) => mcp.onPush(message),
  });
  if (typeof link === "string") {
    throw new Error(`Cannot serve MCP on stdio: ${link}`);
  }
  const mcp = createMcpServer(link, options);
  const closed = Promise.withResolvers<void>();
  mcp.server.onclose = () => {
    link.close("stdin closed");
    closed.resolve();
  };
  mcp.server.onerror = (error: Error) =>
    context.log(`MCP stdio: ${error.message}`);
  const stdin = stdinReadable();
  const transport = new StdioServerTransport(stdin, orderedStdout(), {
    maxBufferSize: context.dispatcher.maxMessageBytes,
  });
  const end = () => {
    transport.close().catch(() => {});
  };
  stdin.once("end", end);
  stdin.once("close", end);
  await mcp.server.connect(transport);
  await closed.promise;
}
