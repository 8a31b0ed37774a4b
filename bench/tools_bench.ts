/**
 * Tools benchmarks: loading 1,000 tool files cold and from the discovery
 * cache (goal ≤ 1 s from cache), and a trivial `tool/call` end to end over
 * the host's WebSocket against a raw Hono WebSocket echo (ratio, goal ≤ 3).
 * Runs alone with `deno run -A --unstable-worker-options bench/tools_bench.ts`.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { Hono } from "hono";
import { upgradeWebSocket } from "hono/deno";
import { join } from "node:path";
import { loadRegistry } from "../runtime/registry/registry.ts";
import { createSandbox } from "../runtime/sandbox/pool.ts";
import {
  connectClient,
  startToolsHost,
  writeModule,
} from "../tests/tools/_harness.ts";
import type { Bench } from "./main.ts";

const FILES = 1000;
const WARMUP = 50;
const CALLS = 300;

async function loadTimes(): Promise<{ cold: number; cached: number }> {
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
    const cold = await time();
    const cached = await time();
    return { cold, cached };
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(cache, { recursive: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function callRatio(): Promise<{ call: number; echo: number }> {
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
    const client = await connectClient(h.wsUrl);
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
    const payload = JSON.stringify({
      type: "tool/call/req",
      id: "x",
      ...request,
    });
    const callTimes: number[] = [];
    const echoTimes: number[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      let start = performance.now();
      const answer = await client.request("tool/call/req", request);
      if ((answer.final.data as { success?: boolean })?.success !== true) {
        throw new Error(`Call failed: ${JSON.stringify(answer.final)}`);
      }
      if (i >= WARMUP) callTimes.push(performance.now() - start);
      start = performance.now();
      await echoOnce(payload);
      if (i >= WARMUP) echoTimes.push(performance.now() - start);
    }
    socket.close();
    await client.close();
    return { call: median(callTimes), echo: median(echoTimes) };
  } finally {
    await echoServer.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Runs the tools benchmarks.
 *
 * @returns the lines to print
 */
export async function runToolsBench(): Promise<string[]> {
  const { cold, cached } = await loadTimes();
  const { call, echo } = await callRatio();
  const ratio = call / echo;
  return [
    `load ${FILES} tool files: cold ${cold.toFixed(0)} ms, from cache ${
      cached.toFixed(0)
    } ms (goal <= 1000 ms from cache) ${cached <= 1000 ? "OK" : "OVER GOAL"}`,
    `trivial tool/call over WebSocket: median ${
      (call * 1000).toFixed(0)
    } µs; raw Hono echo: median ${(echo * 1000).toFixed(0)} µs`,
    `ratio call/echo (median): ${ratio.toFixed(2)} (goal <= 3) ${
      ratio <= 3 ? "OK" : "OVER GOAL"
    }`,
  ];
}

/** The tools bench, for `bench/main.ts`. */
export const toolsBench: Bench = { name: "tools", run: runToolsBench };

if (import.meta.main) {
  for (const line of await runToolsBench()) console.log(line);
}
