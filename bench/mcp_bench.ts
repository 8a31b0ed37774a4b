/**
 * MCP overhead: a trivial tool call over MCP Streamable HTTP and MCP stdio
 * (the official SDK client) vs the same call over the A2E WebSocket; and an
 * imported MCP tool called over A2E vs calling that server directly with
 * the SDK client. Goals: MCP ≤ 1.5× A2E WebSocket; imported ≤ direct + 1 ms.
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
const CALLS = 300;
const HOST = fileURLToPath(new URL("../host.ts", import.meta.url));
const SERVER = fileURLToPath(
  new URL("../tests/mcp/_test_server.ts", import.meta.url),
);
const ECHO = `export default { kind: "tool", name: "echo", description: "Echo",
  input: { type: "object" }, run: (a) => a };`;

async function measure(call: () => Promise<unknown>): Promise<LatencyStats> {
  for (let i = 0; i < WARMUP; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  return latencyStats(times);
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

const line = (name: string, s: LatencyStats) =>
  `${name}: min ${s.min.toFixed(2)} ms, median ${s.median.toFixed(2)} ms, max ${
    s.max.toFixed(2)
  } ms`;

/** The MCP bench. */
export const mcpBench: Bench = {
  name: "mcp",
  async run() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(join(dir, "echo.ts"), ECHO);
    const server = {
      command: Deno.execPath(),
      args: ["run", "-A", SERVER],
      env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
      // Confined, its working folder is the only host folder it sees.
      cwd: fileURLToPath(new URL("../", import.meta.url)),
    };
    const host = createHost({
      config: {
        skills: [dir],
        builtinSkills: false,
        mcpServers: { calc: server },
        sandbox: {
          cacheDir: null,
          memoryMb: 256,
          maxIdleProcesses: 8,
          spareWorkers: 1,
          maxResultBytes: 1 << 20,
        },
      },
    });
    await host.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const config = join(dir, "..", `${crypto.randomUUID()}.json`);
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        skills: [dir],
        builtin_skills: false,
        sandbox: { cache_dir: null },
      }),
    );
    const ws = await a2eSocket(url.replace("http", "ws") + "/a2e");
    const http = new Client({ name: "bench", version: "1" });
    await http.connect(
      new StreamableHTTPClientTransport(new URL(url + "/mcp")),
    );
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
        stderr: "ignore",
      }),
    );
    const direct = new Client({ name: "bench", version: "1" });
    await direct.connect(
      new StdioClientTransport({ ...server, stderr: "ignore" }),
    );
    try {
      const args = { text: "hi" };
      const a2e = await measure(() => ws.call("echo", args));
      const overHttp = await measure(() =>
        http.callTool({ name: "echo", arguments: args })
      );
      const overStdio = await measure(() =>
        stdio.callTool({ name: "echo", arguments: args })
      );
      const sum = { a: 1, b: 2 };
      const imported = await measure(() => ws.call("calc__add", sum));
      const straight = await measure(() =>
        direct.callTool({ name: "add", arguments: sum })
      );
      const ratio = (a: LatencyStats, b: LatencyStats) =>
        (a.median / b.median).toFixed(2);
      return [
        line("A2E WebSocket echo", a2e),
        line("MCP Streamable HTTP echo", overHttp),
        line("MCP stdio echo", overStdio),
        `MCP/A2E median ratio: HTTP ${ratio(overHttp, a2e)}×, stdio ${
          ratio(overStdio, a2e)
        }× (goal ≤ 1.5×)`,
        line("imported MCP tool over A2E", imported),
        line("same server, SDK client directly", straight),
        `imported − direct median: ${
          (imported.median - straight.median).toFixed(2)
        } ms (goal ≤ 1 ms)`,
      ];
    } finally {
      ws.close();
      await Promise.allSettled([http.close(), stdio.close(), direct.close()]);
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(config).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
};
