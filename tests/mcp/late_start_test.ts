/**
 * Imported MCP servers start in the background, end to end: the host
 * answers while a server has not finished starting (it waits on a named
 * pipe the test holds), and its tools join afterwards, announced to an MCP
 * SDK client (`notifications/tools/list_changed`) and over A2E
 * (`tools.changed`); a server that fails its first start is retried with
 * backoff and comes up when it can, logged once; a crashed server is
 * restarted; closing the host during a start or a backoff leaves no
 * server process (that no retry timer is left pending is
 * checked with timers the test holds, in `flapping_test.ts`: Deno's test
 * sanitizers do not see timers).
 *
 * These servers run unconfined (`sandbox.confinement: "off"`): their
 * signal files live outside their working folder, and how a server is
 * confined is `confined_import_test.ts`'s subject.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import {
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { createHost, type Host } from "../../runtime/host.ts";
import type { McpServerSpec } from "../../runtime/mcp/imported_servers.ts";
import { connectClient } from "../support/tools_harness.ts";
import { HOST_FLAGS, HOST_MAIN } from "../support/host_cli.ts";
import { denoServer, text, within } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";
import { testSandbox } from "../support/mcp_fixtures.ts";

const SERVER = fileURLToPath(new URL("./_late_server.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const late = (...args: string[]): McpServerSpec => denoServer(SERVER, ...args);

/** The host's log, and a wait for its n-th line matching a pattern. */
class Lines {
  readonly all: string[] = [];
  #waiters: { pattern: RegExp; nth: number; resolve: () => void }[] = [];
  readonly log = (line: string): void => {
    this.all.push(line);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.count(w.pattern) <= w.nth) return true;
      w.resolve();
      return false;
    });
  };
  /** Waits for the (`nth` + 1)-th line matching `pattern`. */
  async wait(pattern: RegExp, what: string, nth = 0): Promise<void> {
    if (this.count(pattern) > nth) return;
    const found = Promise.withResolvers<void>();
    this.#waiters.push({ pattern, nth, resolve: found.resolve });
    await within(found.promise, 60_000, what);
  }
  count(pattern: RegExp): number {
    return this.all.filter((l) => pattern.test(l)).length;
  }
}

async function withHost(
  servers: Record<string, McpServerSpec>,
  retry: { retryInitialMs: number; retryMaxMs: number },
  body: (host: Host, url: string, lines: Lines) => Promise<void>,
): Promise<void> {
  const skills = await Deno.makeTempDir();
  const lines = new Lines();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      mcpServers: servers,
      mcp: retry,
      sandbox: { ...testSandbox(), confinement: "off" },
    },
    log: lines.log,
  });
  try {
    await host.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    await body(host, url, lines);
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
  }
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success, "mkfifo failed");
}

/**
 * Follows a client's `tools/list_changed`: `listed(name)` resolves once the
 * tools list names `name`, listing again after each notification, and
 * fails unless at least one notification came.
 */
function listChanged(client: McpClient): (name: string) => Promise<void> {
  let seen = 0;
  let next = Promise.withResolvers<void>();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen++;
    next.resolve();
    next = Promise.withResolvers<void>();
  });
  return async (name) => {
    for (let i = 0; i < 100; i++) {
      const wait = next.promise;
      const { tools } = await client.listTools();
      if (tools.some((t: Tool) => t.name === name)) {
        assert.ok(seen > 0, "listed without a tools/list_changed");
        return;
      }
      await within(wait, 60_000, `no tools/list_changed naming "${name}"`);
    }
    assert.fail(`"${name}" never listed`);
  };
}

async function lineCount(path: string): Promise<number> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

// Until the process is gone (reaped), bounded.
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    try {
      const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
      if (/^\d+ \(.*\) Z/.test(stat)) return true;
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

Deno.test("the host answers while an imported server is still starting; its tools join with list_changed (MCP) and tools.changed (A2E)", async () => {
  const dir = await Deno.makeTempDir();
  const fifo = join(dir, "go");
  await mkfifo(fifo);
  try {
    await withHost(
      { slow: late("--wait", fifo) },
      { retryInitialMs: 1_000, retryMaxMs: 300_000 },
      async (host, url) => {
        assert.deepEqual(host.mcpServers.starting(), ["slow"]);
        const mcp = await connectMcp(url);
        const listed = listChanged(mcp);
        await mcp.ping();
        const before = await mcp.listTools();
        assert.ok(!before.tools.some((t: Tool) => t.name.startsWith("slow__")));
        // A call to a tool of a server still starting fails at once.
        const early = await mcp.callTool({
          name: "slow__echo",
          arguments: { text: "hi" },
        });
        assert.equal(early.isError, true);
        assert.match(
          text(early as never),
          /Unknown tool "slow__echo": its MCP server "slow" is unavailable \(starting\)/,
        );

        const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
        const kits = await a2e.request("toolkit/list/req", {});
        const slow = (kits.final.toolkits as {
          name: string;
          description: string;
          tags: string[];
        }[]).find((k) => k.name === "slow");
        assert.match(slow?.description ?? "", /unavailable: starting/);
        assert.ok(slow?.tags.includes("unavailable"));
        const pushed = a2e.push(
          (m) =>
            m.kind === "tools.changed" &&
            ((m.data as { added: string[] }).added ?? []).includes(
              "slow__echo",
            ),
          60_000,
        );

        // The server may go on now.
        const writer = await Deno.open(fifo, { write: true });
        writer.close();
        await listed("slow__echo");
        await pushed;
        const echoed = await mcp.callTool({
          name: "slow__echo",
          arguments: { text: "hi" },
        });
        assert.equal(text(echoed as never), "hi");
        assert.deepEqual(host.mcpServers.starting(), []);
        await a2e.close();
        await mcp.close();
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server that fails its first start is retried in the background, logged once, and its tools appear when it comes up", async () => {
  const dir = await Deno.makeTempDir();
  const ready = join(dir, "ready");
  const count = join(dir, "count");
  try {
    await withHost(
      { flaky: late("--ready", ready, "--count", count) },
      { retryInitialMs: 20, retryMaxMs: 100 },
      async (host, url, lines) => {
        await host.mcpServers.ready;
        const mcp = await connectMcp(url);
        const listed = listChanged(mcp);
        const kits = await host.request({ type: "toolkit/list/req" });
        const flaky = (kits.toolkits as { name: string; description: string }[])
          .find((k) => k.name === "flaky");
        assert.match(flaky?.description ?? "", /unavailable: .*not ready yet/);
        // Several attempts fail, one line says so.
        for (let i = 0; i < 1_000 && await lineCount(count) < 4; i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        assert.ok(await lineCount(count) >= 4, "no retries");
        assert.equal(lines.count(/MCP server "flaky" failed/), 1);
        assert.match(
          lines.all.find((l) => /"flaky" failed/.test(l)) ?? "",
          /not ready yet.*retrying in the background \(20 ms doubling up to 100 ms\)/,
        );

        await Deno.writeTextFile(ready, "");
        await listed("flaky__echo");
        const echoed = await mcp.callTool({
          name: "flaky__echo",
          arguments: { text: "up" },
        });
        assert.equal(text(echoed as never), "up");
        await lines.wait(/MCP server "flaky" is ready/, "no ready line");
        assert.equal(lines.count(/MCP server "flaky" failed/), 1);
        await mcp.close();
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server that crashes is restarted in the background, and backs off when it crashes again soon", async () => {
  const dir = await Deno.makeTempDir();
  const count = join(dir, "count");
  try {
    await withHost(
      { crashy: late("--count", count) },
      { retryInitialMs: 50, retryMaxMs: 1_000 },
      async (host, url, lines) => {
        await host.mcpServers.ready;
        const mcp = await connectMcp(url);
        for (const round of [1, 2]) {
          const crashed = await mcp.callTool({
            name: "crashy__crash",
            arguments: {},
          });
          assert.equal(crashed.isError, true);
          // Restarted without a call asking for it.
          await lines.wait(
            /MCP server "crashy" is ready/,
            `no restart after crash ${round}`,
            round,
          );
          assert.equal(await lineCount(count), round + 1);
        }
        assert.equal(lines.count(/MCP server "crashy": the server exited/), 2);
        const echoed = await mcp.callTool({
          name: "crashy__echo",
          arguments: { text: "back" },
        });
        assert.equal(text(echoed as never), "back");
        await mcp.close();
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("closing the host while one server starts and another backs off leaves no server process", async () => {
  const dir = await Deno.makeTempDir();
  const fifo = join(dir, "never");
  const pid = join(dir, "pid");
  await mkfifo(fifo);
  const count = join(dir, "count");
  try {
    let started = 0;
    await withHost(
      {
        // Never told to go on: still starting when the host closes.
        // (its start timeout far away: closing must not wait for it).
        stuck: {
          ...late("--pid", pid, "--wait", fifo),
          startTimeoutMs: 600_000,
        },
        // Fails, then waits a minute for its retry: the host closes first.
        failing: late("--ready", join(dir, "missing"), "--count", count),
      },
      { retryInitialMs: 60_000, retryMaxMs: 300_000 },
      async (host, _url, lines) => {
        await lines.wait(/MCP server "failing" failed/, "no failure");
        for (let i = 0; i < 1_000 && started === 0; i++) {
          started = Number(await Deno.readTextFile(pid).catch(() => "0"));
          if (started === 0) await new Promise((r) => setTimeout(r, 10));
        }
        assert.ok(started > 0, "the stuck server never started");
        assert.deepEqual(host.mcpServers.starting(), ["stuck"]);
      },
    );
    assert.ok(await gone(started), `process ${started} outlived the host`);
    assert.equal(await lineCount(count), 1, "a retry after close");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task host listens while an imported server is still starting, and its banner says so", async () => {
  const dir = await Deno.makeTempDir();
  const fifo = join(dir, "go");
  await mkfifo(fifo);
  const skills = join(dir, "skills");
  await Deno.mkdir(skills);
  await Deno.writeTextFile(
    join(dir, "skillbox.jsonc"),
    JSON.stringify({
      skills: [skills],
      builtin_skills: false,
      store: null,
      sandbox: { cache_dir: null, confinement: "off" },
      mcp_servers: {
        slow: {
          command: Deno.execPath(),
          args: ["run", "-A", SERVER, "--wait", fifo],
          cwd: REPO,
        },
      },
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...HOST_FLAGS, HOST_MAIN, "--config", "skillbox.jsonc"]
      .concat(["--port", "0"]),
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = new Lines();
  const reading = (async () => {
    let carry = "";
    for await (
      const chunk of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      const parts = (carry + chunk).split("\n");
      carry = parts.pop() ?? "";
      for (const line of parts) lines.log(line);
    }
  })();
  try {
    await lines.wait(/skillbox listening: /, "no banner");
    const banner = lines.all.find((l) => /skillbox listening: /.test(l))!;
    assert.match(banner, /MCP servers still starting: slow;/);
    const url = /(http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(banner)![1]!;
    // Served while the server waits on its pipe.
    const mcp = await connectMcp(url);
    const listed = listChanged(mcp);
    await mcp.ping();
    const writer = await Deno.open(fifo, { write: true });
    writer.close();
    await listed("slow__echo");
    await lines.wait(
      /MCP server "slow" is ready: 4 tool\(s\)/,
      "no ready line",
    );
    const echoed = await mcp.callTool({
      name: "slow__echo",
      arguments: { text: "late" },
    });
    assert.equal(text(echoed as never), "late");
    await mcp.close();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
