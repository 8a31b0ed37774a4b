/**
 * MCP sessions over HTTP expire when unused, like the A2E HTTP+SSE
 * transport's: a session with no call under way, no request and no stream
 * open for `limits.sse_idle_seconds` is closed, and a client listening on
 * its GET stream is not unused however long it stays quiet.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { MCP_POST_HEADERS, withMcpClient } from "../support/mcp_client.ts";
import { initializeRequest } from "../support/mcp_fixtures.ts";

// A session opened with plain requests and no GET stream; its id.
async function quietSession(url: string): Promise<string> {
  const init = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: MCP_POST_HEADERS,
    body: JSON.stringify(initializeRequest("quiet", 0)),
  });
  await init.body?.cancel();
  return init.headers.get("mcp-session-id")!;
}

async function ping(url: string, session: string): Promise<number> {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS, "mcp-session-id": session },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("an unused MCP session expires; one listening on its GET stream does not", async () => {
  const host = createHost({
    config: {
      builtinSkills: false,
      // The sweep looks every second at the least. Two seconds, not less:
      // on a loaded machine the SDK client's GET stream, or the quiet
      // session's first ping, can come a few tenths after its initialize.
      limits: { sseIdleSeconds: 2 },
    },
  });
  await host.ready;
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  // The SDK client opens its GET stream once initialized.
  try {
    await withMcpClient(url, undefined, async (listening) => {
      const quiet = await quietSession(url);
      assert.equal(await ping(url, quiet), 200);
      // Wait for the sweep to take the quiet one (each ping counts as use,
      // so look at the session count instead).
      const end = Date.now() + 20_000;
      while (host.sessionCount > 1 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(await ping(url, quiet), 404, "the unused session was kept");
      // The listening client was quiet just as long and is still served.
      assert.deepEqual(await listening.ping(), {});
    });
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
