/**
 * Hostile MCP clients against a real host: malformed JSON-RPC, a body over
 * the size limit, and clients that vanish mid-call (their calls are
 * cancelled). The host keeps serving a well-behaved client throughout.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createHost } from "../../runtime/host.ts";
import {
  created,
  testSandbox,
  writeFixtures,
} from "../support/mcp_fixtures.ts";
import { withHost } from "./_host.ts";
import {
  connectMcp,
  MCP_POST_HEADERS,
  rawSession,
  withMcpClient,
} from "../support/mcp_client.ts";

Deno.test("malformed, huge and abandoned MCP requests leave the host serving", async () => {
  const skills = await Deno.makeTempDir();
  const markers = await Deno.makeTempDir();
  await writeFixtures(skills, markers);
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      limits: { maxMessageBytes: 64 * 1024 },
      sandbox: testSandbox(),
      policy: { permissions: { write: [markers] } },
    },
  });
  await host.ready;
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await withMcpClient(url, undefined, async (steady) => {
      const echo = async (n: number) => {
        const r = await steady.callTool({
          name: "echo",
          arguments: { text: String(n) },
        }) as CallToolResult;
        assert.deepEqual(r.structuredContent, { text: String(n) });
      };

      for (
        const body of [
          "{not json",
          "[]",
          '{"jsonrpc":"1.0","id":1,"method":"initialize"}',
          '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call"}',
          "null",
        ]
      ) {
        const res = await fetch(url + "/mcp", {
          method: "POST",
          headers: MCP_POST_HEADERS,
          body,
        });
        assert.ok(
          res.status >= 400 && res.status < 500,
          `${body}: ${res.status}`,
        );
        await res.body?.cancel();
        await echo(1);
      }

      const huge = await fetch(url + "/mcp", {
        method: "POST",
        headers: MCP_POST_HEADERS,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { pad: "x".repeat(1 << 20) },
        }),
      });
      assert.equal(huge.status, 413);
      await huge.body?.cancel();
      await echo(2);

      // A client starts a call, then vanishes without a word.
      const marker = join(markers, "aborted");
      const leaver = new Client({ name: "leaver", version: "1" });
      const leaverTransport = new StreamableHTTPClientTransport(
        new URL(url + "/mcp"),
      );
      await leaver.connect(leaverTransport);
      const started = Promise.withResolvers<void>();
      const call = leaver.callTool(
        { name: "wait_for_abort", arguments: { marker } },
        undefined,
        { onprogress: () => started.resolve(), timeout: 60_000 },
      ).catch(() => "gone");
      await started.promise;
      await leaverTransport.close();
      assert.equal(await call, "gone");
      await echo(3);
      // Its session is still open on the host until it expires or is
      // deleted; deleting it cancels the call inside the sandbox.
      const del = await fetch(url + "/mcp", {
        method: "DELETE",
        headers: { "mcp-session-id": leaverTransport.sessionId! },
      });
      assert.equal(del.status, 200);
      await del.body?.cancel();
      await created(marker, 5000);
      await echo(4);
    });
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
});

Deno.test("a client that aborts its HTTP request mid-call gets the call cancelled inside the sandbox at once", async () => {
  await withHost({}, async ({ url, markers }) => {
    const session = await rawSession(url);
    assert.equal(session.initializedStatus, 202);

    const marker = join(markers, "vanished");
    const controller = new AbortController();
    const call = await session.post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "wait_for_abort",
          arguments: { marker },
          _meta: { progressToken: "p" },
        },
      },
      controller.signal,
    );
    assert.equal(call.headers.get("content-type"), "text/event-stream");
    // Read until the tool reports it started, then vanish.
    const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("notifications/progress")) {
      const { done, value } = await reader.read();
      assert.ok(!done, "the stream ended before the call started");
      seen += value;
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    // The sandbox call saw its signal abort, with the session still open.
    await created(marker, 10_000);
    assert.equal(await Deno.readTextFile(marker), "aborted");
    const client = await connectMcp(url);
    const echo = await client.callTool({
      name: "echo",
      arguments: { text: "still here" },
    }) as CallToolResult;
    assert.deepEqual(echo.structuredContent, { text: "still here" });

    // Without a progress token a silent call waits to be answered as JSON,
    // then (after the JSON grace time) streams: the client vanishing while
    // it waits has it cancelled too, at most that grace time late.
    const started = join(markers, "started");
    const held = join(markers, "held");
    const quiet = new AbortController();
    const waiting = session.post(
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "hold", arguments: { started, marker: held } },
      },
      quiet.signal,
    ).then((res) => res.text()).catch((error) => error);
    await created(started, 10_000);
    quiet.abort();
    assert.equal((await waiting as Error).name, "AbortError");
    await created(held, 10_000);
    assert.equal(await Deno.readTextFile(held), "aborted");
    await client.close();
  });
});
