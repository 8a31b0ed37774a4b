/**
 * Importing MCP servers by config, end to end: a small SDK-built server
 * (stdio and Streamable HTTP) becomes toolkit `<name>` with tools
 * `<name>__<tool>`, called over A2E (WebSocket) with progress; its crash is
 * reported and it restarts on the next call; a hanging call times out; a
 * server that never starts is listed unavailable. Stdio servers see only
 * their declared environment.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import type { McpServerSpec } from "../../runtime/mcp/imported_servers.ts";
import {
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { connectClient } from "../support/tools_harness.ts";
import { within } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";
import { testSandbox } from "../support/mcp_fixtures.ts";

const SERVER = fileURLToPath(new URL("./_test_server.ts", import.meta.url));
const DENO = Deno.execPath();
// The server's working folder: confined, the only host folder it sees (its
// script, deno.json and the modules it imports are there).
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const stdioServer = (...extra: string[]): McpServerSpec => ({
  command: DENO,
  args: ["run", "-A", SERVER, ...extra],
  env: { DECLARED: "yes", DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
  cwd: REPO,
});

async function withHost(
  servers: Record<string, McpServerSpec>,
  body: (host: Host, wsUrl: string) => Promise<void>,
  allowPrivateHosts: string[] = [],
) {
  const skills = await Deno.makeTempDir();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      mcpServers: servers,
      egress: { ...defaultConfig().egress, allowPrivateHosts },
      sandbox: testSandbox(),
    },
  });
  try {
    await host.ready;
    await host.mcpServers.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    await body(host, url.replace("http", "ws") + "/a2e");
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
  }
}

Deno.test("an imported stdio MCP server's tools are listed and called over A2E with progress; crash, restart, hang", async () => {
  await withHost({ calc: stdioServer() }, async (_host, wsUrl) => {
    const client = await connectClient(wsUrl);
    const listed = await client.request("tool/list/req", {
      filter_kind: "mcp",
    });
    const names = (listed.final.tools as { name: string }[]).map((t) => t.name);
    assert.deepEqual(names.sort(), [
      "calc__add",
      "calc__cancellations",
      "calc__crash",
      "calc__env",
      "calc__grow",
      "calc__hang",
    ]);
    const kits = await client.request("toolkit/list/req", {});
    const calc = (kits.final.toolkits as { name: string; tools: string[] }[])
      .find((k) => k.name === "calc");
    assert.equal(calc?.tools.length, 6);

    const added = await client.request("tool/call/req", {
      tool_name: "calc__add",
      arguments: { a: 2, b: 3 },
      streaming: true,
    });
    const result = added.final.data as { success: boolean; data: unknown };
    assert.equal(result.success, true);
    assert.deepEqual(result.data, { sum: 5 });
    const progress = added.events.filter((e) => e.kind === "progress");
    assert.deepEqual(progress.map((e) => (e.data as { pct: number }).pct), [
      50,
      100,
    ]);

    // Validation is skillbox's, before the server is asked.
    const bad = await client.request("tool/call/req", {
      tool_name: "calc__add",
      arguments: { a: "x" },
    });
    assert.equal(
      (bad.final.data as { error_code: string }).error_code,
      "schema_violation",
    );

    // Only the declared environment reaches the server.
    const env = await client.request("tool/call/req", {
      tool_name: "calc__env",
      arguments: {},
    });
    const seen = JSON.parse((env.final.data as { data: string }).data);
    assert.equal(seen.DECLARED, "yes");
    // Unconfined HOME is unset; confined it is the private /tmp.
    assert.ok(seen.HOME === undefined || seen.HOME === "/tmp", seen.HOME);

    // A hanging call times out.
    const hung = await client.request("tool/call/req", {
      tool_name: "calc__hang",
      arguments: {},
      timeout: 1,
    });
    assert.equal(
      (hung.final.data as { error_code: string }).error_code,
      "timeout",
    );

    // A crash fails the call clearly; the next call restarts the server.
    const crashed = await client.request("tool/call/req", {
      tool_name: "calc__crash",
      arguments: {},
    });
    const crash = crashed.final.data as {
      success: boolean;
      error_code: string;
      error: string;
    };
    assert.equal(crash.success, false);
    assert.equal(crash.error_code, "tool_error");
    assert.match(crash.error, /calc/);
    const again = await client.request("tool/call/req", {
      tool_name: "calc__add",
      arguments: { a: 1, b: 1 },
    });
    assert.deepEqual((again.final.data as { data: unknown }).data, { sum: 2 });

    // The server's tools/list_changed reaches an MCP client of the host.
    const mcp = await connectMcp(
      wsUrl.replace(/^ws/, "http").replace(/\/a2e$/, ""),
    );
    const changed = Promise.withResolvers<void>();
    mcp.setNotificationHandler(
      ToolListChangedNotificationSchema,
      () => changed.resolve(),
    );
    await mcp.callTool({ name: "calc__grow", arguments: {} });
    await within(changed.promise, 10_000, "no list_changed after calc__grow");
    const { tools } = await mcp.listTools();
    assert.ok(tools.some((t: Tool) => t.name === "calc__grown"));
    await mcp.close();
    await client.close();
  });
});

Deno.test("an imported HTTP MCP server is reached under the egress address rules (loopback only when allowed by name) with its headers; a server that never starts is listed unavailable", async () => {
  const dir = await Deno.makeTempDir();
  const portFile = join(dir, "port");
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", SERVER, "--http", portFile],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    let port = "";
    for (let i = 0; i < 200 && port === ""; i++) {
      try {
        port = await Deno.readTextFile(portFile);
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await withHost({
      // Loopback by a name the operator allows: reached.
      remote: {
        url: `http://localhost:${port}/mcp`,
        headers: { "x-api-key": "k" },
      },
      // The same server by an address nobody allowed: refused.
      loopback: {
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { "x-api-key": "k" },
      },
      stuck: { ...stdioServer("--hang-start"), startTimeoutMs: 1500 },
    }, async (_host, wsUrl) => {
      const client = await connectClient(wsUrl);
      const added = await client.request("tool/call/req", {
        tool_name: "remote__add",
        arguments: { a: 20, b: 22 },
      });
      assert.deepEqual((added.final.data as { data: unknown }).data, {
        sum: 42,
      });
      const kits = await client.request("toolkit/list/req", {});
      const stuck = (kits.final.toolkits as {
        name: string;
        description: string;
        tags: string[];
      }[])
        .find((k) => k.name === "stuck");
      assert.ok(stuck, "the stuck server's toolkit is listed");
      assert.match(stuck.description, /unavailable/);
      assert.ok(stuck.tags.includes("unavailable"));
      const loopback = (kits.final.toolkits as {
        name: string;
        description: string;
      }[]).find((k) => k.name === "loopback");
      assert.match(
        loopback?.description ?? "",
        /unavailable.*127\.0\.0\.1, which is not a public address/,
      );
      await client.close();
    }, ["localhost"]);
  } finally {
    child.kill();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a session that made many imported calls sends the server no cancellation of them when it ends", async () => {
  await withHost({ calc: stdioServer() }, async (host, wsUrl) => {
    const before = host.sessionCount;
    const first = await connectClient(wsUrl);
    for (let i = 0; i < 10; i++) {
      const added = await first.request("tool/call/req", {
        tool_name: "calc__add",
        arguments: { a: i, b: 1 },
      });
      assert.deepEqual((added.final.data as { data: unknown }).data, {
        sum: i + 1,
      });
    }
    await first.close();
    // Until the host has ended that session (its calls' signals abort).
    const bound = Date.now() + 10_000;
    while (host.sessionCount > before) {
      assert.ok(Date.now() < bound, "the first session never ended");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await connectClient(wsUrl);
    const counted = await second.request("tool/call/req", {
      tool_name: "calc__cancellations",
      arguments: {},
    });
    // Notifications travel before this call on the server's stdin.
    assert.deepEqual((counted.final.data as { data: unknown }).data, {
      count: 0,
    });
    await second.close();
  });
});
