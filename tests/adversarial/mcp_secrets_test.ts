/**
 * Item 7 of issue 22: the secrets in an imported MCP server's entry (its
 * `env` values, its `headers` values) are operator secrets. A server that
 * prints its environment on stderr and dies, or echoes its request headers
 * into a tool result, must not carry them to clients (A2E and MCP), the
 * console's catalog and history, or the host's log. Against a host in its
 * own process, configured as an operator would.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { withMcpClient } from "../support/mcp_client.ts";
import { connectClient } from "../support/tools_harness.ts";
import {
  assertNoSecret,
  consoleText,
  startHostProcess,
} from "./_host_process.ts";
import { serveEchoHeaders } from "../fixtures/mcp_secrets/echo_headers_server.ts";

const LEAKY = fileURLToPath(
  new URL("../fixtures/mcp_secrets/leaky_server.ts", import.meta.url),
);
const STDIO_SECRET = "stdio-secret-7f3a9c";
const TENANT_SECRET = "tenant-secret-51be20";
const BEARER_SECRET = "bearer-secret-d04e77";

// Calls `tool` (no arguments) as an MCP client of the host does.
function callOverMcp(url: string, tool: string): Promise<CallToolResult> {
  return withMcpClient(
    url,
    undefined,
    async (mcp) =>
      await mcp.callTool({ name: tool, arguments: {} }) as CallToolResult,
  );
}

Deno.test("a stdio MCP server's env secret, printed on stderr as it dies, is redacted for clients, the console and the log", async () => {
  // The server runs from a folder of its own it may write (its marker).
  const folder = await Deno.makeTempDir({ prefix: "leaky-" });
  await Deno.copyFile(LEAKY, join(folder, "leaky_server.ts"));
  try {
    await using host = await startHostProcess({
      skills: [folder],
      mcp_servers: {
        leaky: {
          command: Deno.execPath(),
          args: [
            "run",
            "--allow-env=LEAK_TOKEN",
            "--allow-read=.",
            "--allow-write=.",
            "leaky_server.ts",
          ],
          // "1" and "true" are too common to scrub (toolkits/secrets.ts).
          env: { LEAK_TOKEN: STDIO_SECRET, VERBOSE: "1", COLOR: "true" },
          cwd: folder,
          writable: true,
        },
      },
    });
    // The host listens before its imported servers are up.
    await host.waitForLine(/MCP server "leaky" is ready/, 30_000);
    const a2e = await connectClient(`${host.url.replace("http", "ws")}/a2e`);
    try {
      const first = await a2e.request("tool/call/req", {
        tool_name: "leaky__boom",
        arguments: {},
      });
      assert.equal((first.final.data as { success: boolean }).success, false);
      await host.waitForLine(/MCP server "leaky": the server exited/, 30_000);
      // The restart fails: the answer carries the reason, stderr and all.
      const second = await a2e.request("tool/call/req", {
        tool_name: "leaky__boom",
        arguments: {},
      });
      const answer = JSON.stringify(second.final);
      assert.match(answer, /stderr: /);
      assert.match(answer, /\[redacted\]/);
      assertNoSecret(answer, [STDIO_SECRET], "the A2E answer");

      const kits = await a2e.request("toolkit/list/req", {});
      const kitText = JSON.stringify(kits.final);
      assert.match(kitText, /unavailable: .*\[redacted\]/);
      assertNoSecret(kitText, [STDIO_SECRET], "the A2E toolkit list");
    } finally {
      await a2e.close();
    }

    const result = await callOverMcp(host.url, "leaky__boom");
    assert.equal(result.isError, true);
    assertNoSecret(JSON.stringify(result), [STDIO_SECRET], "the MCP result");

    const shown = await consoleText(host);
    assert.match(shown, /\[redacted\]/);
    assertNoSecret(shown, [STDIO_SECRET], "the console");
    assertNoSecret(host.lines.join("\n"), [STDIO_SECRET], "the host's log");
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("a URL MCP server that echoes its configured headers has them redacted in results over A2E and MCP and in the history", async () => {
  await using echo = serveEchoHeaders();
  const skills = await Deno.makeTempDir({ prefix: "echo-" });
  try {
    await using host = await startHostProcess({
      skills: [skills],
      egress: { allow_private_hosts: ["127.0.0.1"] },
      mcp_servers: {
        echo: {
          url: echo.url,
          // A header name that does not look secret: only its value says so.
          headers: {
            "x-tenant": TENANT_SECRET,
            authorization: `Bearer ${BEARER_SECRET}`,
          },
        },
      },
    });
    const secrets = [TENANT_SECRET, BEARER_SECRET];
    await host.waitForLine(/MCP server "echo" is ready/, 30_000);
    const a2e = await connectClient(`${host.url.replace("http", "ws")}/a2e`);
    try {
      const called = await a2e.request("tool/call/req", {
        tool_name: "echo__echo",
        arguments: {},
      });
      const answer = JSON.stringify(called.final);
      assert.equal(
        (called.final.data as { success: boolean }).success,
        true,
        answer,
      );
      // The server did echo them: they are there, redacted.
      assert.match(answer, /x-tenant/);
      assert.match(answer, /\[redacted\]/);
      assertNoSecret(answer, secrets, "the A2E result");
    } finally {
      await a2e.close();
    }

    const text = JSON.stringify(await callOverMcp(host.url, "echo__echo"));
    assert.match(text, /x-tenant/);
    assertNoSecret(text, secrets, "the MCP result");

    const shown = await consoleText(host);
    assert.match(shown, /x-tenant/);
    assertNoSecret(shown, secrets, "the console's history");
    assertNoSecret(host.lines.join("\n"), secrets, "the host's log");
  } finally {
    await Deno.remove(skills, { recursive: true });
  }
});
