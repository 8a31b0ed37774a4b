/**
 * Tools benchmarks: loading 1,000 tool files cold and from the discovery
 * cache (goal ≤ 1 s from cache), the watcher's reload after one of them
 * is edited (goal ≤ 1 s), and a trivial `tool/call` end to end over
 * the host's WebSocket against what it must cross: a raw Hono WebSocket
 * echo plus the bare floor (`floor_bench.ts`: a pipe round trip to a child
 * process and a `postMessage` round trip to a worker in it). Goal: call ≤
 * 1.5 × (echo + floor), by median.
 * Runs alone with `deno run -A --unstable-worker-options bench/tools_bench.ts`
 * (`... tools_bench.ts call` skips the load figures).
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { Hono } from "hono";
import { upgradeWebSocket } from "hono/deno";
import { join } from "node:path";
import { loadRegistry } from "../runtime/registry/registry.ts";
import { createSandbox } from "../runtime/sandbox/sandbox.ts";
import { startToolsHost, writeModule } from "../tests/support/tools_harness.ts";
import { type LatencyStats, latencyStats } from "./_stats.ts";
import { treeCpuNs } from "./_cpu.ts";
import { startFloor } from "./floor_bench.ts";
import type { Bench } from "./main.ts";
import type { SandboxCall, SandboxHooks } from "../runtime/sandbox/types.ts";

const FILES = 1000;
const WARMUP = 100;
// Enough rounds that a run's medians move little from run to run.
const CALLS = 1000;
// Calls per mode in the CPU phase (back to back, one mode at a time).
const CPU_CALLS = 2000;

async function loadTimes(): Promise<
  { cold: number; cached: number; reload: number }
> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_tools_" });
  const cache = await Deno.makeTempDir({ prefix: "skillbox_bench_cache_" });
  try {
    await Promise.all(Array.from({ length: FILES }, (_, i) =>
      writeModule(
        dir,
        `t_${i}.ts`,
        `{ kind: "tool", name: "t_${i}", description: "Tool ${i}", run: () => ${i} }`,
      )));
    const time = async () => {
      const sandbox = createSandbox({ cacheDir: cache });
      const start = performance.now();
      const registry = await loadRegistry({ sandbox, dirs: [dir] });
      const ms = performance.now() - start;
      if (registry.snapshot.tools.size !== FILES) {
        throw new Error(
          `Loaded ${registry.snapshot.tools.size} of ${FILES} tools: ${
            registry.snapshot.errors[0]?.message
          }`,
        );
      }
      await registry.close();
      await sandbox.close();
      return ms;
    };
    // One file edited among them: from the write until the watching
    // registry reports the change (debounce plus describing that file).
    const reloadTime = async () => {
      const sandbox = createSandbox({ cacheDir: cache });
      const registry = await loadRegistry({
        sandbox,
        dirs: [dir],
        watch: true,
      });
      const changed = new Promise<void>((resolve) =>
        registry.onChange(() => resolve())
      );
      const start = performance.now();
      await writeModule(
        dir,
        "t_0.ts",
        `{ kind: "tool", name: "t_0", description: "Tool 0, edited", run: () => 0 }`,
      );
      await changed;
      const ms = performance.now() - start;
      await registry.close();
      await sandbox.close();
      return ms;
    };
    const cold = await time();
    const cached = await time();
    const reload = await reloadTime();
    return { cold, cached, reload };
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(cache, { recursive: true });
  }
}

/** The trivial call against what it must cross, in ms. */
interface CallFigures {
  call: LatencyStats;
  echo: LatencyStats;
  floor: LatencyStats;
  /** The same call through the sandbox API alone (no WebSocket, no caller). */
  sandbox: LatencyStats;
  /**
   * CPU µs per round trip of this process tree (every thread of the bench
   * and host, the sandbox processes, the floor's child), each mode run back
   * to back: much steadier than wall time on a machine others load.
   */
  cpu: { echo: number; floor: number; sandbox: number; call: number };
}

// CPU µs per run of `once`, over `n` runs back to back.
async function cpuPerRun(
  once: () => Promise<unknown>,
  n: number,
): Promise<number> {
  const before = await treeCpuNs(Deno.pid);
  for (let i = 0; i < n; i++) await once();
  return (await treeCpuNs(Deno.pid) - before) / n / 1000;
}

const NO_HOOKS: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("No tools here")),
  chat: () => Promise.reject(new Error("No LLM here")),
};

/**
 * A bare A2E client over one WebSocket, as lean as the echo's: it sends the
 * request's text and parses the answer, with no timer or bookkeeping per
 * request (the test harness's client arms a 20 s timer for each), so the
 * figure is the host's.
 */
async function bareClient(url: string): Promise<{
  request(fields: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error(`Cannot connect to "${url}"`));
  });
  let waiting: ((m: Record<string, unknown>) => void) | null = null;
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data as string);
    // Only answers end a wait: a push (tools.changed) has no req_id.
    if (message.req_id) waiting?.(message);
  };
  let n = 0;
  const request = (fields: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      waiting = resolve;
      socket.send(JSON.stringify({ id: `b${++n}`, ...fields }));
    });
  const hello = await request({
    type: "handshake/req",
    agent_id: "bench",
    agent_caps: ["tools"],
  });
  if (hello.ok !== true) throw new Error("Handshake refused");
  return { request, close: () => socket.close() };
}

async function callFigures(): Promise<CallFigures> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_call_" });
  await Deno.mkdir(join(dir, "echo"));
  await writeModule(
    join(dir, "echo"),
    "echo.ts",
    `{ kind: "tool", name: "echo", description: "Echo", run: (args) => args }`,
  );
  const echoApp = new Hono().get(
    "/",
    upgradeWebSocket(() => ({
      onMessage: (event, ws) => ws.send(event.data as string),
    })),
  );
  const echoServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    echoApp.fetch,
  );
  try {
    await using h = await startToolsHost({ dirs: [dir] });
    const client = await bareClient(h.wsUrl);
    const socket = new WebSocket(`ws://127.0.0.1:${echoServer.addr.port}/`);
    await new Promise((resolve) => socket.onopen = resolve);
    let waiting: (() => void) | null = null;
    socket.onmessage = () => waiting?.();
    const echoOnce = (text: string) =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        socket.send(text);
      });
    const request = {
      tool_name: "echo",
      arguments: { text: "hi" },
    };
    const call = { type: "tool/call/req", ...request };
    const payload = JSON.stringify({ id: "x", ...call });
    // Interleaved with the calls, so all three see the same machine load.
    const floor = startFloor(JSON.stringify(request));
    const callTimes: number[] = [];
    const echoTimes: number[] = [];
    const floorTimes: number[] = [];
    const sandboxTimes: number[] = [];
    const entry = h.registry.snapshot.tools.get("echo")!;
    const direct: SandboxCall = {
      path: entry.path,
      export: entry.export,
      version: entry.hash,
      args: request.arguments,
      grant: Object.freeze({}),
      timeoutMs: 30_000,
      sessionId: "bench",
      callId: "bench",
      config: Object.freeze({}),
      metadata: {},
      isolation: "warm",
    };
    const probes: [number[], () => Promise<unknown>][] = [
      [callTimes, async () => {
        const answer = await client.request(call);
        if ((answer.data as { success?: boolean })?.success !== true) {
          throw new Error(`Call failed: ${JSON.stringify(answer)}`);
        }
      }],
      [echoTimes, () => echoOnce(payload)],
      [floorTimes, () => floor.once()],
      [sandboxTimes, async () => {
        const outcome = await h.sandbox.call(direct, NO_HOOKS);
        if (!outcome.ok) throw new Error(`Call failed: ${outcome.message}`);
      }],
    ];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      // Each round starts with the next probe: none always runs first (just
      // after another probe's process went idle) or always last.
      for (let k = 0; k < probes.length; k++) {
        const [times, once] = probes[(i + k) % probes.length]!;
        const start = performance.now();
        await once();
        if (i >= WARMUP) times.push(performance.now() - start);
      }
    }
    const cpu = {
      echo: await cpuPerRun(() => echoOnce(payload), CPU_CALLS),
      floor: await cpuPerRun(() => floor.once(), CPU_CALLS),
      sandbox: await cpuPerRun(
        () => h.sandbox.call(direct, NO_HOOKS),
        CPU_CALLS,
      ),
      call: await cpuPerRun(() => client.request(call), CPU_CALLS),
    };
    await floor.close();
    socket.close();
    client.close();
    return {
      call: latencyStats(callTimes),
      echo: latencyStats(echoTimes),
      floor: latencyStats(floorTimes),
      sandbox: latencyStats(sandboxTimes),
      cpu,
    };
  } finally {
    await echoServer.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

function loadAverage(): string {
  try {
    return Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  } catch {
    return "unknown";
  }
}

function us(ms: number): string {
  return `${(ms * 1000).toFixed(0)} µs`;
}

function spread(s: LatencyStats): string {
  return `min ${us(s.min)}, median ${us(s.median)}, max ${us(s.max)}`;
}

/**
 * The call figures as lines: echo, floor, call and the ratio.
 *
 * @returns the lines to print
 */
export async function runCallBench(): Promise<string[]> {
  const { call, echo, floor, sandbox, cpu } = await callFigures();
  const ratio = call.median / (echo.median + floor.median);
  const cpuUs = (n: number) => `${n.toFixed(0)} µs`;
  return [
    `raw Hono WebSocket echo: ${spread(echo)}`,
    `bare floor (pipe to a child + worker postMessage): ${spread(floor)}`,
    `the same call through the sandbox API alone: ${spread(sandbox)}`,
    `trivial tool/call over the host's WebSocket: ${spread(call)}`,
    `ratio call / (echo + floor), medians: ${ratio.toFixed(2)} (goal <= 1.5) ${
      ratio <= 1.5 ? "OK" : "OVER GOAL"
    }`,
    `CPU per round trip, whole process tree, ${CPU_CALLS} back to back: echo ${
      cpuUs(cpu.echo)
    }, floor ${cpuUs(cpu.floor)}, sandbox API ${cpuUs(cpu.sandbox)}, call ${
      cpuUs(cpu.call)
    }; call - (echo + floor) = ${
      cpuUs(cpu.call - cpu.echo - cpu.floor)
    } (skillbox's own work)`,
    `load average: ${loadAverage()}`,
  ];
}

/**
 * Runs the tools benchmarks.
 *
 * @returns the lines to print
 */
export async function runToolsBench(): Promise<string[]> {
  const { cold, cached, reload } = await loadTimes();
  return [
    `load ${FILES} tool files: cold ${cold.toFixed(0)} ms (goal <= 3000 ms: ${
      cold <= 3000 ? "OK" : "OVER GOAL"
    }), from cache ${cached.toFixed(0)} ms (goal <= 200 ms: ${
      cached <= 200 ? "OK" : "OVER GOAL"
    })`,
    `reload after one edit among them: ${
      reload.toFixed(0)
    } ms (goal <= 1000 ms: ${reload <= 1000 ? "OK" : "OVER GOAL"})`,
    ...await runCallBench(),
  ];
}

/** The tools bench, for `bench/main.ts`. */
export const toolsBench: Bench = { name: "tools", run: runToolsBench };

if (import.meta.main) {
  const run = Deno.args[0] === "call" ? runCallBench : runToolsBench;
  for (const line of await run()) console.log(line);
}
