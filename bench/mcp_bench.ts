/**
 * MCP overhead: a trivial tool call over MCP Streamable HTTP and MCP stdio
 * vs the same call over the A2E WebSocket; and an imported MCP tool called
 * over A2E vs calling that server directly with the SDK client. Goals: MCP
 * ≤ 1.5× A2E WebSocket; imported ≤ direct + 1 ms.
 *
 * Like with like: the goal's ratio pits MCP clients of the same weight as
 * the A2E client (a raw socket sending hand-written JSON) against it: an
 * HTTP/1.1 POST written by hand on one TCP connection, and a line in, a
 * line out on stdio; each costs its client about what the WebSocket client
 * costs (100-130 µs of CPU a call). A `fetch` POST per call is measured
 * too: Deno's `fetch` costs the client more than twice that. The official
 * SDK `Client` is measured too, against skillbox and against a bare SDK
 * server with no skillbox behind it (the floor: what the client and the
 * SDK cost alone). Every client keeps one connection (one session), all
 * call the same `echo` with the same arguments, every mode has a server
 * process of its own (an MCP stdio host cannot be anything else; a host
 * serving several modes would be warmer than one serving one) with the
 * same settings, and the modes are measured in interleaved rounds, so a
 * burst of load on the shared machine falls on all of them alike: once
 * fresh, and once warm, after a thousand calls each. CPU time per
 * call of each server process tree (host + its sandbox processes) and of
 * the bench process (the client) is measured apart, as it hardly moves
 * with the machine's other load.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createHost } from "../runtime/host.ts";
import { type LatencyStats, latencyStats } from "./_stats.ts";
import { processCpuNs, selfCpuNs, treeCpuNs } from "./_cpu.ts";
import {
  a2eSocket,
  type BenchClient,
  rawHttp,
  sdkHttp,
  sdkStdio,
  spawnListening,
  type StdioCommand,
  thinHttp,
  thinStdio,
} from "./_mcp_clients.ts";
import type { Bench } from "./main.ts";

const FRESH_WARMUP = 30;
const WARM_UP = 1000;
const ROUNDS = 10;
const PER_ROUND = 30;
const CPU_ROUNDS = 3;
const CPU_CALLS = 500;
const HOST = fileURLToPath(new URL("../host.ts", import.meta.url));
const BARE = fileURLToPath(new URL("./_mcp_bare_server.ts", import.meta.url));
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
const ARGS = { text: "hi" };

interface Mode {
  call: () => Promise<void>;
  /** The process tree serving it (and nothing else), for the CPU figures. */
  server?: number;
}

interface Figures {
  latency: LatencyStats;
  /** µs of CPU per call in the server's process tree. */
  serverCpu?: number;
  /** µs of CPU per call in the server's own process (the host, no sandbox). */
  hostCpu?: number;
  /** µs of CPU per call in the bench process. */
  clientCpu?: number;
}

// Every mode in turn, `each` calls at a time, the starting mode rotating
// each round, so that a burst of load on the shared machine falls on all of
// them alike. Returns each call's latency in ms.
async function rounds(
  modes: Record<string, Mode>,
  count: number,
  each: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(modes);
  const times: Record<string, number[]> = {};
  for (const name of names) times[name] = [];
  for (let round = 0; round < count; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      const call = modes[name]!.call;
      for (let i = 0; i < each; i++) {
        const t = performance.now();
        await call();
        times[name]!.push(performance.now() - t);
      }
    }
  }
  return times;
}

const stats = (times: Record<string, number[]>) =>
  Object.fromEntries(
    Object.entries(times).map((
      [name, values],
    ) => [name, { latency: latencyStats(values) } as Figures]),
  );

// The CPU per call of the modes with a server process, CPU_CALLS calls at a
// time, in CPU_ROUNDS rotating rounds, added to `figures`.
async function measureCpu(
  modes: Record<string, Mode>,
  figures: Record<string, Figures>,
): Promise<void> {
  const measured = Object.keys(modes).filter((name) =>
    modes[name]!.server !== undefined
  );
  const cpu = new Map(
    measured.map((name) => [name, { server: 0, host: 0, client: 0 }]),
  );
  for (let round = 0; round < CPU_ROUNDS; round++) {
    for (let k = 0; k < measured.length; k++) {
      const name = measured[(round + k) % measured.length]!;
      const server = modes[name]!.server!;
      const [s0, h0] = [await treeCpuNs(server), await processCpuNs(server)];
      const c0 = selfCpuNs();
      for (let i = 0; i < CPU_CALLS; i++) await modes[name]!.call();
      const c1 = selfCpuNs();
      const sum = cpu.get(name)!;
      sum.server += (await treeCpuNs(server)) - s0;
      sum.host += (await processCpuNs(server)) - h0;
      sum.client += c1 - c0;
    }
  }
  for (const [name, sum] of cpu) {
    const calls = CPU_ROUNDS * CPU_CALLS;
    figures[name]!.serverCpu = sum.server / 1000 / calls;
    figures[name]!.hostCpu = sum.host / 1000 / calls;
    figures[name]!.clientCpu = sum.client / 1000 / calls;
  }
}

// Two sets of figures from the same processes: "fresh", their calls after
// the first FRESH_WARMUP, and "warm", after WARM_UP more calls each (a
// process's JIT keeps getting faster over its first thousand calls).
async function interleaved(
  modes: Record<string, Mode>,
): Promise<{ fresh: Record<string, Figures>; warm: Record<string, Figures> }> {
  await rounds(modes, 1, FRESH_WARMUP);
  const fresh = stats(await rounds(modes, ROUNDS, PER_ROUND));
  await rounds(modes, WARM_UP / 50, 50);
  const warm = stats(await rounds(modes, ROUNDS, PER_ROUND));
  await measureCpu(modes, warm);
  return { fresh, warm };
}

const line = (name: string, f: Figures) =>
  `${name}: min ${f.latency.min.toFixed(2)} ms, median ${
    f.latency.median.toFixed(2)
  } ms, max ${f.latency.max.toFixed(2)} ms${
    f.serverCpu === undefined
      ? ""
      : `; CPU per call: server ${f.serverCpu.toFixed(0)} µs (its own process ${
        f.hostCpu!.toFixed(0)
      } µs), client ${f.clientCpu!.toFixed(0)} µs`
  }`;
const ratio = (a: Figures, b: Figures) =>
  (a.latency.median / b.latency.median).toFixed(2);
const ms = (f: Figures) => `${f.latency.median.toFixed(2)} ms`;
const cpuRatio = (a: Figures, b: Figures) =>
  (a.serverCpu! / b.serverCpu!).toFixed(2);
const load = () => Deno.loadavg()[0]!.toFixed(2);

/** The MCP bench. */
export const mcpBench: Bench = {
  name: "mcp",
  async run() {
    const dir = await Deno.makeTempDir();
    const skills = join(dir, "skills");
    await Deno.mkdir(skills);
    await Deno.writeTextFile(join(skills, "echo.ts"), ECHO);
    for (
      const sub of [
        "listen1",
        "listen2",
        "listen3",
        "listen4",
        "stdio1",
        "stdio2",
      ]
    ) {
      await Deno.mkdir(join(dir, sub));
    }
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
    await host.mcpServers.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const deno = (args: string[], cwd?: string): StdioCommand => ({
      command: Deno.execPath(),
      args: ["run", "-A", "--unstable-worker-options", ...args],
      cwd,
    });
    const hostStdio = (n: number) =>
      deno([HOST, "--mcp", "--config", config], join(dir, `stdio${n}`));
    const servers: Awaited<ReturnType<typeof spawnListening>>[] = [];
    const serve = async (command: StdioCommand, pattern: RegExp) => {
      const started = await spawnListening(command, pattern);
      servers.push(started);
      return started;
    };
    const clients: BenchClient[] = [];
    const keep = async (client: Promise<BenchClient>) => {
      const c = await client;
      clients.push(c);
      return c;
    };
    const mode = (client: BenchClient, server = client.pid): Mode => ({
      call: () => client.call("echo", ARGS),
      server,
    });
    const direct = new Client({ name: "bench", version: "1" });
    try {
      // One server process per mode: a process serving several modes would
      // be warmer (more calls, less idle) than one serving one.
      let listeners = 0;
      const listening = () =>
        serve(
          deno([
            HOST,
            "--config",
            config,
            "--hostname",
            "127.0.0.1",
            "--port",
            "0",
          ], join(dir, `listen${++listeners}`)),
          /listening: ws:\/\/([^/\s]+)\/a2e/,
        );
      const bare = () => serve(deno([BARE, "--http"]), /listening: (\S+)/);
      type Connect = (url: string) => Promise<BenchClient>;
      // A client of a host of its own, at the URL made of the host's address.
      const onHost = async (client: Connect, at: (host: string) => string) => {
        const host = await listening();
        return mode(await keep(client(at(host.url))), host.pid);
      };
      const mcpOf = (host: string) => `http://${host}/mcp`;
      const onBare = async (client: Connect) => {
        const server = await bare();
        return mode(await keep(client(server.url)), server.pid);
      };
      const ws = await keep(a2eSocket(url.replace("http", "ws") + "/a2e"));
      const modes = {
        a2e: await onHost(a2eSocket, (host) => `ws://${host}/a2e`),
        http: await onHost(thinHttp, mcpOf),
        httpRaw: await onHost(rawHttp, mcpOf),
        stdio: mode(await keep(thinStdio(hostStdio(1)))),
        httpSdk: await onHost(sdkHttp, mcpOf),
        stdioSdk: mode(await keep(sdkStdio(hostStdio(2)))),
        bareHttp: await onBare(thinHttp),
        bareHttpRaw: await onBare(rawHttp),
        bareStdio: mode(await keep(thinStdio(deno([BARE])))),
        bareHttpSdk: await onBare(sdkHttp),
        bareStdioSdk: mode(await keep(sdkStdio(deno([BARE])))),
      };
      await direct.connect(
        new StdioClientTransport({ ...server, stderr: "ignore" }),
      );
      const loadBefore = load();
      const { fresh, warm: t } = await interleaved(modes);
      const sum = { a: 1, b: 2 };
      const { warm: { imported, direct: straight } } = await interleaved({
        imported: { call: () => ws.call("calc__add", sum) },
        direct: {
          call: async () => {
            await direct.callTool({ name: "add", arguments: sum });
          },
        },
      });
      return [
        `load average (1 min): ${loadBefore} at the start, ${load()} at the end`,
        "every server in its own process; CPU per call: the server's process tree (host + sandbox processes), its own process alone (the host without its sandbox processes), the client's (this process)",
        line(
          "A2E WebSocket echo, raw socket client (hand-written JSON)",
          t.a2e!,
        ),
        line(
          "MCP Streamable HTTP echo, raw client (HTTP/1.1 POST written by hand on one TCP connection)",
          t.httpRaw!,
        ),
        line("MCP stdio echo, thin client (a line in, a line out)", t.stdio!),
        `MCP/A2E median ratio, like with like (clients of the A2E client's weight): HTTP ${
          ratio(t.httpRaw!, t.a2e!)
        }×, stdio ${ratio(t.stdio!, t.a2e!)}× (goal ≤ 1.5×); server CPU: HTTP ${
          cpuRatio(t.httpRaw!, t.a2e!)
        }×, stdio ${cpuRatio(t.stdio!, t.a2e!)}×; host process CPU: HTTP ${
          (t.httpRaw!.hostCpu! / t.a2e!.hostCpu!).toFixed(2)
        }×, stdio ${(t.stdio!.hostCpu! / t.a2e!.hostCpu!).toFixed(2)}×`,
        `fresh processes (calls ${FRESH_WARMUP + 1}–${
          FRESH_WARMUP + ROUNDS * PER_ROUND
        } of each), medians: A2E ${ms(fresh.a2e!)}, MCP HTTP raw ${
          ms(fresh.httpRaw!)
        }, stdio ${ms(fresh.stdio!)}; ratio HTTP ${
          ratio(fresh.httpRaw!, fresh.a2e!)
        }×, stdio ${
          ratio(fresh.stdio!, fresh.a2e!)
        }×; every figure above and below: warm, after ${WARM_UP} more calls each`,
        line(
          "MCP Streamable HTTP echo, fetch client (a fetch POST, JSON answer)",
          t.http!,
        ),
        `MCP/A2E median ratio with the fetch client: HTTP ${
          ratio(t.http!, t.a2e!)
        }× (fetch costs the client about twice the WebSocket client's CPU); bare SDK server, raw client: ${
          ratio(t.bareHttpRaw!, t.a2e!)
        }× of the A2E call`,
        line("MCP Streamable HTTP echo, official SDK Client", t.httpSdk!),
        line("MCP stdio echo, official SDK Client", t.stdioSdk!),
        `MCP/A2E median ratio with the SDK Client: HTTP ${
          ratio(t.httpSdk!, t.a2e!)
        }×, stdio ${ratio(t.stdioSdk!, t.a2e!)}×`,
        line(
          "floor: bare SDK server (no skillbox), HTTP, thin client",
          t.bareHttp!,
        ),
        line(
          "floor: bare SDK server (no skillbox), stdio, thin client",
          t.bareStdio!,
        ),
        line(
          "floor: bare SDK server (no skillbox), HTTP, SDK Client",
          t.bareHttpSdk!,
        ),
        line(
          "floor: bare SDK server (no skillbox), stdio, SDK Client",
          t.bareStdioSdk!,
        ),
        `floor/A2E median ratio, SDK Client on a bare SDK server: HTTP ${
          ratio(t.bareHttpSdk!, t.a2e!)
        }×, stdio ${ratio(t.bareStdioSdk!, t.a2e!)}×`,
        line("imported MCP tool over A2E", imported!),
        line("same server, SDK client directly", straight!),
        `imported − direct median: ${
          (imported!.latency.median - straight!.latency.median).toFixed(2)
        } ms (goal ≤ 1 ms)`,
      ];
    } finally {
      await Promise.allSettled([
        ...clients.map((c) => c.close()),
        direct.close(),
      ]);
      await Promise.allSettled(servers.map((s) => s.close()));
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true });
    }
  },
};
