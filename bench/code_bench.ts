/**
 * Code mode (`run_code`, issue 25) against direct calls, on a host in its
 * own process (default configuration: run store on, shipped skills):
 *
 * 1. A chain of 20 dependent calls of a trivial tool (`inc`, each call's
 *    argument is the previous result): one `run_code` against 20
 *    `tools/call` round trips of the official MCP SDK client over
 *    Streamable HTTP on the same machine. Goal: `run_code` ≥ 5× faster.
 * 2. Reading 50 files of 20 KB with `read_file` and keeping only their
 *    line counts: the HTTP response bytes that reach the MCP client for one
 *    `run_code` against 50 direct calls. Goal: ≥ 50× fewer.
 * 3. The host's own CPU per call (the host process alone, from
 *    /proc schedstat, bench/_cpu.ts) for an inner call (a `run_code` making
 *    300 sequential `inc` calls, its own cost spread over them) against the
 *    same call sent directly by a raw A2E WebSocket client (the host's
 *    cheapest path). Goal: ≤ 1.2×. The host's tree (with its sandbox
 *    processes) and wall time per call are shown beside it.
 *
 * Modes are measured in interleaved rounds, so a burst of load on the shared
 * machine falls on both alike; figures are min / median / max over rounds.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { latencyStats } from "./_stats.ts";
import { processCpuNs, treeCpuNs } from "./_cpu.ts";
import { a2eSocket, spawnListening } from "./_mcp_clients.ts";
import type { Bench } from "./main.ts";

const HOST = fileURLToPath(new URL("../host.ts", import.meta.url));
const INC =
  `export default { kind: "tool", name: "inc", description: "Adds one to n",
  input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  run(args) { return { n: args.n + 1 }; } };`;
const CHAIN_ROUNDS = 15;
const FILES = 50;
const FILE_BYTES = 20 * 1024;
const BYTE_ROUNDS = 3;
const COST_CALLS = 300;
const COST_ROUNDS = 5;

const CHAIN_CODE = `let x = { n: 0 };
for (let i = 0; i < 20; i++) x = await tools.inc(x);
x.n`;
const LINES_CODE = `const counts = [];
for (let i = 0; i < ${FILES}; i++) {
  const f = await tools.read_file({ path: "f" + String(i).padStart(2, "0") + ".txt" });
  counts.push(f.content.split("\\n").length);
}
counts`;
const COST_CODE =
  `for (let i = 0; i < ${COST_CALLS}; i++) await tools.inc({ n: i });
${COST_CALLS}`;

/** min / median / max of some figures, formatted with `unit`. */
function spread(values: number[], unit: string, digits = 2): string {
  const s = latencyStats(values);
  const f = (n: number) => n.toFixed(digits);
  return `min ${f(s.min)} / median ${f(s.median)} / max ${f(s.max)} ${unit}`;
}

function median(values: number[]): number {
  return latencyStats(values).median;
}

// An MCP SDK client whose POST answers are counted, byte by byte.
async function countingClient(
  url: string,
): Promise<{ client: Client; bytes: () => number; reset: () => void }> {
  let bytes = 0;
  const counting = async (u: string | URL, init?: RequestInit) => {
    const res = await fetch(u, init);
    // The GET stream never ends: only the answers to calls are counted.
    if (init?.method !== "POST" || res.body === null) return res;
    const body = new Uint8Array(await res.arrayBuffer());
    bytes += body.length;
    return new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
  const client = new Client({ name: "code-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { fetch: counting }),
  );
  return { client, bytes: () => bytes, reset: () => (bytes = 0) };
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = await client.callTool({
    name,
    arguments: args,
  }) as CallToolResult;
  if (result.isError) throw new Error(JSON.stringify(result));
  return result.structuredContent as Record<string, unknown>;
}

async function runCode(client: Client, code: string): Promise<unknown> {
  const data = await call(client, "run_code", { code });
  if (data.error) throw new Error(`run_code threw: ${data.error}`);
  return data.value;
}

/** The code-mode bench. */
export const codeBench: Bench = {
  name: "code mode: run_code vs direct calls",
  async run() {
    const dir = await Deno.makeTempDir({ prefix: "skillbox_code_bench_" });
    const skills = join(dir, "skills");
    const data = join(dir, "data");
    await Deno.mkdir(skills);
    await Deno.mkdir(data);
    await Deno.writeTextFile(join(skills, "inc.ts"), INC);
    const line = "x".repeat(79) + "\n";
    for (let i = 0; i < FILES; i++) {
      await Deno.writeTextFile(
        join(data, `f${String(i).padStart(2, "0")}.txt`),
        line.repeat(FILE_BYTES / line.length),
      );
    }
    const config = join(dir, "skillbox.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        skills: [skills],
        builtin_skills: true,
        toolkits: { filesystem: { root: data } },
        policy: { permissions: { read: [data] } },
        sandbox: { cache_dir: null },
      }),
    );
    const server = await spawnListening({
      command: Deno.execPath(),
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
      cwd: dir,
    }, /listening: ws:\/\/([^/\s]+)\/a2e/);
    const mcp = await countingClient(`http://${server.url}/mcp`);
    const ws = await a2eSocket(`ws://${server.url}/a2e`);
    try {
      return [
        ...await chain(mcp.client),
        ...await bytes(mcp),
        ...await hostCost(mcp.client, ws, server.pid),
      ];
    } finally {
      await ws.close();
      await mcp.client.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
};

// 1. 20 dependent calls: 20 MCP round trips against one run_code.
async function chain(client: Client): Promise<string[]> {
  const direct = async () => {
    let n = 0;
    for (let i = 0; i < 20; i++) {
      n = (await call(client, "inc", { n })).n as number;
    }
    if (n !== 20) throw new Error(`The chain gave ${n}`);
  };
  const code = async () => {
    const n = await runCode(client, CHAIN_CODE);
    if (n !== 20) throw new Error(`The chain gave ${n}`);
  };
  for (let i = 0; i < 3; i++) {
    await direct();
    await code();
  }
  // Where run_code's time goes: its fixed cost (a fresh per-call worker,
  // as for eval_typescript) is a run_code with no inner call.
  const empty = async () => {
    if (await runCode(client, "1") !== 1) throw new Error("1 is not 1");
  };
  const times = {
    direct: [] as number[],
    code: [] as number[],
    empty: [] as number[],
  };
  const modes = [["direct", direct], ["code", code], ["empty", empty]] as const;
  for (let round = 0; round < CHAIN_ROUNDS; round++) {
    for (const [mode, fn] of modes) {
      const t0 = performance.now();
      await fn();
      times[mode].push(performance.now() - t0);
    }
  }
  const ratio = median(times.direct) / median(times.code);
  return [
    `chain of 20 inc calls, ${CHAIN_ROUNDS} rounds`,
    `  20 MCP tools/call: ${spread(times.direct, "ms")}`,
    `  one run_code:      ${spread(times.code, "ms")}`,
    `  run_code of "1":   ${spread(times.empty, "ms")} (its fixed cost)`,
    `  run_code is ${ratio.toFixed(2)}× faster (median; goal ≥ 5×: ${
      ratio >= 5 ? "met" : "MISSED"
    })`,
  ];
}

// 2. 50 files of 20 KB, line counts only: response bytes at the client.
async function bytes(
  mcp: { client: Client; bytes: () => number; reset: () => void },
): Promise<string[]> {
  const direct: number[] = [];
  const code: number[] = [];
  for (let round = 0; round < BYTE_ROUNDS; round++) {
    mcp.reset();
    const counts: number[] = [];
    for (let i = 0; i < FILES; i++) {
      const file = await call(mcp.client, "read_file", {
        path: `f${String(i).padStart(2, "0")}.txt`,
      });
      counts.push(String(file.content).split("\n").length);
    }
    direct.push(mcp.bytes());
    mcp.reset();
    const fromCode = await runCode(mcp.client, LINES_CODE) as number[];
    code.push(mcp.bytes());
    if (JSON.stringify(fromCode) !== JSON.stringify(counts)) {
      throw new Error("run_code counted other lines than the direct calls");
    }
  }
  const ratio = median(direct) / median(code);
  return [
    `${FILES} files of ${
      FILE_BYTES / 1024
    } KB via read_file, line counts only, ${BYTE_ROUNDS} rounds`,
    `  ${FILES} MCP tools/call: ${spread(direct, "bytes", 0)}`,
    `  one run_code:      ${spread(code, "bytes", 0)}`,
    `  run_code sends ${ratio.toFixed(1)}× fewer bytes (goal ≥ 50×: ${
      ratio >= 50 ? "met" : "MISSED"
    })`,
  ];
}

// 3. The host's CPU per call: inner calls against direct A2E calls.
async function hostCost(
  client: Client,
  ws: Awaited<ReturnType<typeof a2eSocket>>,
  pid: number,
): Promise<string[]> {
  const direct = async () => {
    for (let i = 0; i < COST_CALLS; i++) await ws.call("inc", { n: i });
  };
  const inner = async () => {
    const n = await runCode(client, COST_CODE);
    if (n !== COST_CALLS) throw new Error(`run_code gave ${n}`);
  };
  await direct();
  await inner();
  const figures = {
    direct: {
      host: [] as number[],
      tree: [] as number[],
      wall: [] as number[],
    },
    inner: { host: [] as number[], tree: [] as number[], wall: [] as number[] },
  };
  for (let round = 0; round < COST_ROUNDS; round++) {
    for (const [mode, fn] of [["direct", direct], ["inner", inner]] as const) {
      const host0 = await processCpuNs(pid);
      const tree0 = await treeCpuNs(pid);
      const t0 = performance.now();
      await fn();
      const wall = performance.now() - t0;
      const host1 = await processCpuNs(pid);
      const tree1 = await treeCpuNs(pid);
      figures[mode].host.push((host1 - host0) / 1000 / COST_CALLS);
      figures[mode].tree.push((tree1 - tree0) / 1000 / COST_CALLS);
      figures[mode].wall.push(wall * 1000 / COST_CALLS);
    }
  }
  const ratio = median(figures.inner.host) / median(figures.direct.host);
  const row = (name: string, f: typeof figures.direct) => [
    `  ${name} host CPU:  ${spread(f.host, "µs/call", 0)}`,
    `  ${name} tree CPU:  ${spread(f.tree, "µs/call", 0)}`,
    `  ${name} wall:      ${spread(f.wall, "µs/call", 0)}`,
  ];
  return [
    `host cost per call, ${COST_CALLS} sequential inc calls, ${COST_ROUNDS} rounds`,
    ...row("direct A2E", figures.direct),
    ...row("inner call", figures.inner),
    `  inner / direct host CPU: ${ratio.toFixed(2)}× (median; goal ≤ 1.2×: ${
      ratio <= 1.2 ? "met" : "MISSED"
    })`,
  ];
}

if (import.meta.main) {
  // deno-lint-ignore no-console
  for (const line of await codeBench.run()) console.log(line);
}
