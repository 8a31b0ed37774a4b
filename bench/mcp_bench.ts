/**
 * MCP overhead: a trivial tool call over MCP Streamable HTTP and MCP stdio
 * (the official SDK client) vs the same call over the A2E WebSocket; and an
 * imported MCP tool called over A2E vs calling that server directly with
 * the SDK client. Goals: MCP ≤ 1.5× A2E WebSocket; imported ≤ direct + 1 ms.
 *
 * Like with like: every client keeps one connection (one MCP session), all
 * call the same `echo` tool with the same arguments on hosts with the same
 * settings, and the modes are measured in interleaved rounds, so a burst of
 * load on the shared machine falls on all of them alike. The goal's ratio
 * has every host in its own process, as a real client finds it (an MCP
 * stdio host cannot be anything else); the ratio with the host inside the
 * bench process (no process hop for A2E and HTTP) is printed too.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHost } from "../runtime/host.ts";
import { type LatencyStats, latencyStats } from "./_stats.ts";
import type { Bench } from "./main.ts";

const WARMUP = 30;
const ROUNDS = 10;
const PER_ROUND = 30;
const HOST = fileURLToPath(new URL("../host.ts", import.meta.url));
const SERVER = fileURLToPath(
  new URL("../tests/mcp/_test_server.ts", import.meta.url),
);
const ECHO = `export default { kind: "tool", name: "echo", description: "Echo",
  input: { type: "object" }, run: (a) => a };`;
const SANDBOX = {
  memoryMb: 256,
  maxIdleProcesses: 8,
  spareWorkers: 1,
  maxResultBytes: 1 << 20,
};

type Call = () => Promise<unknown>;

// Each mode in turn, PER_ROUND calls at a time, the order rotating.
async function interleaved(
  calls: Record<string, Call>,
): Promise<Record<string, LatencyStats>> {
  const names = Object.keys(calls);
  const times: Record<string, number[]> = {};
  for (const name of names) {
    times[name] = [];
    for (let i = 0; i < WARMUP; i++) await calls[name]!();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await calls[name]!();
        times[name]!.push(performance.now() - t);
      }
    }
  }
  return Object.fromEntries(names.map((n) => [n, latencyStats(times[n]!)]));
}

async function a2eSocket(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const waiting = new Map<string, () => void>();
  socket.onmessage = (e) => {
    const msg = JSON.parse(String(e.data));
    if (!String(msg.type).endsWith("/event")) waiting.get(msg.req_id)?.();
  };
  let n = 0;
  return {
    call(tool: string, args: Record<string, unknown>) {
      const id = String(++n).padStart(32, "0");
      return new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        socket.send(JSON.stringify({
          type: "tool/call/req",
          id,
          version: "1.0",
          ts: Date.now() / 1000,
          tool_name: tool,
          arguments: args,
        }));
      });
    },
    close: () => socket.close(),
  };
}

async function mcpHttp(url: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

// A listening host in its own process; resolves with its base URL.
async function spawnHost(config: string, cwd: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-worker-options",
      HOST,
      "--config",
      config,
      "--hostname",
      "127.0.0.1",
      "--port",
      "0",
    ],
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | undefined;
  while (url === undefined) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`The bench host did not start: ${seen}`);
    seen += value;
    url = seen.match(/listening: ws:\/\/([^/\s]+)\/a2e/)?.[1];
  }
  // Keeps reading, so that its log never fills the pipe.
  const drained = (async () => {
    while (!(await lines.read()).done) { /* discard */ }
  })();
  return {
    url: `http://${url}`,
    async close() {
      child.kill("SIGTERM");
      await child.status;
      await drained.catch(() => {});
    },
  };
}

const line = (name: string, s: LatencyStats) =>
  `${name}: min ${s.min.toFixed(2)} ms, median ${s.median.toFixed(2)} ms, max ${
    s.max.toFixed(2)
  } ms`;
const ratio = (a: LatencyStats, b: LatencyStats) =>
  (a.median / b.median).toFixed(2);

/** The MCP bench. */
export const mcpBench: Bench = {
  name: "mcp",
  async run() {
    const dir = await Deno.makeTempDir();
    const skills = join(dir, "skills");
    await Deno.mkdir(skills);
    await Deno.writeTextFile(join(skills, "echo.ts"), ECHO);
    for (const sub of ["listen", "stdio"]) await Deno.mkdir(join(dir, sub));
    const server = {
      command: Deno.execPath(),
      args: ["run", "-A", SERVER],
      env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
      // Confined, its working folder is the only host folder it sees.
      cwd: fileURLToPath(new URL("../", import.meta.url)),
    };
    const host = createHost({
      config: {
        skills: [skills],
        builtinSkills: false,
        mcpServers: { calc: server },
        sandbox: { cacheDir: null, ...SANDBOX },
      },
    });
    // The same settings for the hosts in their own processes.
    const config = join(dir, "skillbox.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        skills: [skills],
        builtin_skills: false,
        sandbox: {
          cache_dir: null,
          memory_mb: SANDBOX.memoryMb,
          max_idle_processes: SANDBOX.maxIdleProcesses,
          spare_workers: SANDBOX.spareWorkers,
          max_result_bytes: SANDBOX.maxResultBytes,
        },
      }),
    );
    await host.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const apart = await spawnHost(config, join(dir, "listen"));
    const ws = await a2eSocket(url.replace("http", "ws") + "/a2e");
    const http = await mcpHttp(url + "/mcp");
    const wsApart = await a2eSocket(apart.url.replace("http", "ws") + "/a2e");
    const httpApart = await mcpHttp(apart.url + "/mcp");
    const stdio = new Client({ name: "bench", version: "1" });
    await stdio.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "-A",
          "--unstable-worker-options",
          HOST,
          "--mcp",
          "--config",
          config,
        ],
        cwd: join(dir, "stdio"),
        stderr: "ignore",
      }),
    );
    const direct = new Client({ name: "bench", version: "1" });
    await direct.connect(
      new StdioClientTransport({ ...server, stderr: "ignore" }),
    );
    try {
      const args = { text: "hi" };
      const echo = { name: "echo", arguments: args };
      const load = Deno.loadavg()[0]!.toFixed(2);
      const t = await interleaved({
        a2e: () => wsApart.call("echo", args),
        http: () => httpApart.callTool(echo),
        stdio: () => stdio.callTool(echo),
        a2eIn: () => ws.call("echo", args),
        httpIn: () => http.callTool(echo),
      });
      const sum = { a: 1, b: 2 };
      const imports = await interleaved({
        imported: () => ws.call("calc__add", sum),
        direct: () => direct.callTool({ name: "add", arguments: sum }),
      });
      const { imported, direct: straight } = imports;
      return [
        `load average (1 min) at the start: ${load}`,
        line("A2E WebSocket echo, host in its own process", t.a2e!),
        line("MCP Streamable HTTP echo, same host", t.http!),
        line("MCP stdio echo, host in its own process", t.stdio!),
        `MCP/A2E median ratio: HTTP ${ratio(t.http!, t.a2e!)}×, stdio ${
          ratio(t.stdio!, t.a2e!)
        }× (goal ≤ 1.5×)`,
        line("A2E WebSocket echo, host in this process", t.a2eIn!),
        line("MCP Streamable HTTP echo, host in this process", t.httpIn!),
        `MCP/A2E median ratio, host in this process: HTTP ${
          ratio(t.httpIn!, t.a2eIn!)
        }×, stdio (its host apart) ${ratio(t.stdio!, t.a2eIn!)}×`,
        line("imported MCP tool over A2E", imported!),
        line("same server, SDK client directly", straight!),
        `imported − direct median: ${
          (imported!.median - straight!.median).toFixed(2)
        } ms (goal ≤ 1 ms)`,
      ];
    } finally {
      ws.close();
      wsApart.close();
      await Promise.allSettled([
        http.close(),
        httpApart.close(),
        stdio.close(),
        direct.close(),
      ]);
      await apart.close();
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true });
    }
  },
};
