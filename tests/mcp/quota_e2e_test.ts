/**
 * An MCP session is a session of its token: `policy.tokens` quotas
 * (`max_sessions`, `max_parallel`, `calls_per_minute`) count MCP sessions
 * and calls exactly as they count A2E ones, across both protocols.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { connectClient } from "../support/tools_harness.ts";
import { created } from "../support/mcp_fixtures.ts";
import { text, withHost, within } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

const QUOTAS = {
  tokens: {
    one: { max_sessions: 1 },
    par: { max_parallel: 1 },
    rate: { calls_per_minute: 3 },
  },
};
const TOKENS = ["one", "par", "rate", "free"];

Deno.test("an MCP session counts against its token's max_sessions, with A2E sessions of that token", async () => {
  await withHost({ tokens: TOKENS, policy: QUOTAS }, async ({ url }) => {
    const first = await connectMcp(url, "one");
    await assert.rejects(connectMcp(url, "one"), /503|quota/);
    await assert.rejects(
      connectClient(url.replace(/^http/, "ws") + "/a2e", "one"),
      /quota/,
    );
    // Another token is not affected.
    const free = await connectMcp(url, "free");
    await free.close();
    // Ending the MCP session gives the slot back.
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await first.close();
    const again = await connectMcp(url, "one");
    const echo = await again.callTool({
      name: "echo",
      arguments: { text: "back" },
    }) as CallToolResult;
    assert.deepEqual(echo.structuredContent, { text: "back" });
    await again.close();
  });
});

Deno.test("an MCP session's calls count against its token's max_parallel and calls_per_minute", async () => {
  await withHost({ tokens: TOKENS, policy: QUOTAS }, async (f) => {
    const client = await connectMcp(f.url, "par");
    const first = join(f.markers, "first");
    const hold = new AbortController();
    const holding = Promise.withResolvers<void>();
    const held = client.callTool(
      { name: "wait_for_abort", arguments: { marker: first } },
      undefined,
      { signal: hold.signal, onprogress: () => holding.resolve() },
    ).catch(() => "cancelled");
    await within(holding.promise, 20_000, "the first call did not start");

    // A second session of the token waits for the token's one slot.
    const other = await connectMcp(f.url, "par");
    const second = Promise.withResolvers<void>();
    const next = other.callTool(
      { name: "wait_for_abort", arguments: { marker: join(f.markers, "2") } },
      undefined,
      { onprogress: () => second.resolve(), timeout: 60_000 },
    ).catch(() => "ended");
    await assert.rejects(
      within(second.promise, 2000, "the second call waited"),
      /the second call waited/,
    );
    hold.abort("free the slot");
    assert.equal(await held, "cancelled");
    await created(first, 10_000);
    await within(second.promise, 20_000, "the second call did not start");
    // Ending the session cancels the call; closing the client ends its wait.
    await (other.transport as StreamableHTTPClientTransport).terminateSession();
    await other.close();
    assert.equal(await next, "ended");
    await client.close();

    const rated = await connectMcp(f.url, "rate");
    for (let i = 0; i < 3; i++) {
      const ok = await rated.callTool({
        name: "echo",
        arguments: { text: String(i) },
      }) as CallToolResult;
      assert.equal(ok.isError, undefined, text(ok));
    }
    const refused = await rated.callTool({
      name: "echo",
      arguments: { text: "3" },
    }) as CallToolResult;
    assert.equal(refused.isError, true);
    assert.match(text(refused), /quota of 3 calls per minute/);
    await rated.close();
  });
});
