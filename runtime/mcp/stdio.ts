/**
 * MCP over stdio (`deno run host --mcp`): one session on stdin/stdout,
 * through the official SDK's `Server` on our line transport (`stdio_transport.ts`), trusted like `--stdio`
 * (no token). Logs go to stderr; the session ends, cancelling its calls,
 * when stdin closes.
 *
 * @module
 */

import type { TransportContext } from "../transports/transport_context.ts";
import { openA2eLink } from "./a2e_link.ts";
import { StdioLineTransport } from "./stdio_transport.ts";
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
  const transport = new StdioLineTransport({
    maxLineBytes: context.dispatcher.maxMessageBytes,
  });
  await mcp.server.connect(transport);
  await closed.promise;
}
