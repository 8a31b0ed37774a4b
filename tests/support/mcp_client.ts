/**
 * An official-SDK MCP client of a host's `/mcp` endpoint, as the end-to-end
 * and adversarial tests use it: one place that knows the endpoint's path and
 * how the bearer token travels; a session driven by plain requests, as a
 * hostile client would; and the command line of a host serving MCP
 * on stdio.
 *
 * @example Call a tool, the client closed afterwards
 * ```ts ignore
 * const result = await withMcpClient(url, "token", (client) =>
 *   client.callTool({ name: "hello__greet", arguments: {} }));
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { fileURLToPath } from "node:url";
import { initializeRequest } from "./mcp_fixtures.ts";

const HOST = fileURLToPath(new URL("../../host.ts", import.meta.url));

/**
 * An SDK client connected to `url`'s `/mcp`, sending `token` as a bearer
 * token if given. The caller closes it.
 *
 * @param url the host's base URL, e.g. `http://127.0.0.1:8080`
 * @param token the bearer token, if the host wants one
 * @returns the connected client
 */
export async function connectMcp(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
      requestInit: token
        ? { headers: { Authorization: `Bearer ${token}` } }
        : undefined,
    }),
  );
  return client;
}

/**
 * Runs `body` with a client connected as {@link connectMcp} does, and closes
 * the client however `body` ends.
 *
 * @param url the host's base URL
 * @param token the bearer token, or `undefined` for none
 * @param body what to do with the client
 * @returns what `body` returns
 */
export async function withMcpClient<T>(
  url: string,
  token: string | undefined,
  body: (client: Client) => Promise<T>,
): Promise<T> {
  const client = await connectMcp(url, token);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

/**
 * The arguments of `deno` (`Deno.execPath()`) that run the repo's `host.ts`
 * as an MCP server on stdio, with all permissions and the config file
 * `config`.
 *
 * @param config the config file's path
 * @returns the arguments
 */
export function stdioHostArgs(config: string): string[] {
  return [
    "run",
    "--no-prompt",
    "--unstable-worker-options",
    "-A",
    HOST,
    "--mcp",
    "--config",
    config,
  ];
}

/** The headers every plain-`fetch` POST to `/mcp` carries. */
export const MCP_POST_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** A session of {@link rawSession}. */
export interface RawSession {
  /** Its `mcp-session-id`. */
  id: string;
  /** The status the host answered the `initialized` notification with. */
  initializedStatus: number;
  /** Sends one JSON-RPC message on the session, raw. */
  post(body: unknown, signal?: AbortSignal): Promise<Response>;
}

/**
 * Opens a session on `url`'s `/mcp` with plain requests (`initialize`, which
 * must answer 200, then `initialized`), for the tests that drive the
 * endpoint as no SDK client would.
 *
 * @param url the host's base URL
 * @returns the session
 */
export async function rawSession(url: string): Promise<RawSession> {
  const post = (
    body: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ) =>
    fetch(url + "/mcp", {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, ...headers },
      body: JSON.stringify(body),
      signal,
    });
  const init = await post(initializeRequest("raw"));
  assert.equal(init.status, 200);
  await init.body?.cancel();
  const session = {
    "mcp-session-id": init.headers.get("mcp-session-id")!,
    "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
  };
  const ready = await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    session,
  );
  await ready.body?.cancel();
  return {
    id: session["mcp-session-id"],
    initializedStatus: ready.status,
    post: (body, signal) => post(body, session, signal),
  };
}
