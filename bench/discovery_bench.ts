/**
 * Discovery benchmark: loading 1,000 new tool files through the registry,
 * cold (no discovery cache) and from the cache, in both layouts a skills
 * folder allows: each file in a subfolder of its own, and all files
 * directly in one skills folder (a shared folder, as the host treats its
 * skills folders). Goals: cold ≤ 3 s, cached ≤ 0.2 s.
 *
 * These tools declare literals, which discovery reads from their syntax;
 * the `code` layout (flat, each name computed at load by a call, which
 * the static grammar refuses) measures the same load when every module
 * must run in a Worker of its own.
 * Run alone with `deno run -A --unstable-worker-options
 * bench/discovery_bench.ts [runs] [flat|subfolders|code]`.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { join } from "node:path";
import { loadRegistry } from "../runtime/registry/registry.ts";
import { cpuUsage } from "node:process";
import { createSandbox } from "../runtime/sandbox/sandbox.ts";
import { discoveryUsage } from "../runtime/discovery/queue.ts";
import type { Bench } from "./main.ts";

const FILES = 1000;
const RUNS = 3;

const LAYOUTS = ["subfolders", "flat", "code"] as const;
type Layout = typeof LAYOUTS[number];

async function writeTree(dir: string, layout: Layout): Promise<void> {
  await Promise.all(Array.from({ length: FILES }, async (_, i) => {
    const source = layout === "code"
      ? `const n = ${i};\nexport default { kind: "tool", name: "t_" + String(n), ` +
        `description: "Tool ${i}", run: () => n };\n`
      : `export default { kind: "tool", name: "t_${i}", ` +
        `description: "Tool ${i}", run: () => ${i} };\n`;
    if (layout !== "subfolders") {
      await Deno.writeTextFile(join(dir, `t_${i}.ts`), source);
    } else {
      await Deno.mkdir(join(dir, `t_${i}`));
      await Deno.writeTextFile(join(dir, `t_${i}`, "mod.ts"), source);
    }
  }));
}

// CPU time in ms: this process's own (all threads), plus what the discovery
// processes reported. On a shared machine wall time mostly measures the
// neighbours. (The kernel's children's time misses confined processes: they
// run in a PID namespace of their own.)
function hostCpuMs(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1000;
}

interface Timing {
  wall: number;
  /** CPU of the host (this process). */
  host: number;
  /** CPU the discovery processes reported. */
  cpu: number;
}

async function loadOnce(dir: string, cache: string): Promise<Timing> {
  const sandbox = createSandbox({
    cacheDir: cache,
    policy: { sharedFolders: [dir] },
  });
  try {
    const host = hostCpuMs();
    const children = discoveryUsage().cpuMs;
    const start = performance.now();
    const registry = await loadRegistry({ sandbox, dirs: [dir] });
    const ms = performance.now() - start;
    await registry.close();
    if (registry.snapshot.tools.size !== FILES) {
      throw new Error(
        `Loaded ${registry.snapshot.tools.size} of ${FILES} tools: ${
          registry.snapshot.errors[0]?.message
        }`,
      );
    }
    await sandbox.close();
    return {
      wall: ms,
      host: hostCpuMs() - host,
      cpu: discoveryUsage().cpuMs - children,
    };
  } finally {
    await sandbox.close();
  }
}

/** Cold and cached load times of one layout, in ms, one entry per run. */
async function measure(
  layout: Layout,
  runs: number,
): Promise<{ cold: Timing[]; cached: Timing[] }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_disc_" });
  const cold: Timing[] = [];
  const cached: Timing[] = [];
  try {
    await writeTree(dir, layout);
    for (let run = 0; run < runs; run++) {
      const cache = await Deno.makeTempDir({ prefix: "skillbox_bench_dc_" });
      try {
        cold.push(await loadOnce(dir, cache));
        cached.push(await loadOnce(dir, cache));
      } finally {
        await Deno.remove(cache, { recursive: true });
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return { cold, cached };
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1]!;
}

function summary(timings: Timing[], unit: "s" | "ms"): string {
  const show = (ms: number) =>
    unit === "s" ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
  const walls = timings.map((t) => t.wall);
  return `median ${show(median(walls))} (min ${show(Math.min(...walls))}, ` +
    `max ${show(Math.max(...walls))}; CPU median: host ${
      show(median(timings.map((t) => t.host)))
    } + discovery processes ${show(median(timings.map((t) => t.cpu)))})`;
}

// The floor of a cold load with one isolate per module: starting 1,000 bare
// Workers (no skillbox code, nothing loaded), one process per core.
async function workerFloor(): Promise<Timing> {
  const source = `const n = Number(Deno.args[1]);
const lanes = Number(Deno.args[0]);
const url = URL.createObjectURL(new Blob(["postMessage(1)"], { type: "text/javascript" }));
let next = 0;
const lane = async () => {
  while (next < n) {
    next++;
    const w = new Worker(url, { type: "module" });
    await new Promise((r) => w.onmessage = r);
    w.terminate();
  }
};
await Promise.all(Array.from({ length: lanes }, lane));
const { cpuUsage } = await import("node:process");
const { user, system } = cpuUsage();
console.log((user + system) / 1000);`;
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_floor_" });
  try {
    const file = join(dir, "floor.js");
    await Deno.writeTextFile(file, source);
    const cores = navigator.hardwareConcurrency;
    const host = hostCpuMs();
    const start = performance.now();
    // Each process starts its share of the workers, three at a time, and
    // prints the CPU time it used.
    const cpus = await Promise.all(Array.from({ length: cores }, async () => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          "--no-lock",
          file,
          "3",
          String(Math.ceil(FILES / cores)),
        ],
        env: { NO_COLOR: "1" },
      }).output();
      if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
      return Number(new TextDecoder().decode(out.stdout).trim());
    }));
    return {
      wall: performance.now() - start,
      host: hostCpuMs() - host,
      cpu: cpus.reduce((a, b) => a + b, 0),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Runs the discovery benchmark.
 *
 * @param runs cold+cached rounds per layout
 * @returns the lines to print
 */
export async function runDiscoveryBench(
  runs = RUNS,
  layouts: readonly Layout[] = LAYOUTS,
): Promise<string[]> {
  const lines: string[] = [];
  for (const layout of layouts) {
    const { cold, cached } = await measure(layout, runs);
    const coldMedian = median(cold.map((t) => t.wall));
    const cachedMedian = median(cached.map((t) => t.wall));
    lines.push(
      `load ${FILES} tool files (${layout}), ${runs} runs: cold ${
        summary(cold, "s")
      } (goal <= 3 s) ${coldMedian <= 3000 ? "OK" : "OVER GOAL"}; cached ${
        summary(cached, "ms")
      } (goal <= 200 ms) ${cachedMedian <= 200 ? "OK" : "OVER GOAL"}`,
    );
  }
  const floor = await workerFloor();
  lines.push(
    `floor: ${FILES} bare Workers started across ${navigator.hardwareConcurrency} processes: ${
      (floor.wall / 1000).toFixed(2)
    } s (CPU ${(floor.cpu / 1000).toFixed(2)} s)`,
  );
  return lines;
}

/** The discovery bench, for `bench/main.ts`. */
export const discoveryBench: Bench = {
  name: "discovery",
  run: () => runDiscoveryBench(),
};

if (import.meta.main) {
  const runs = Number(Deno.args[0] ?? RUNS);
  const layouts = LAYOUTS.filter((l) => l === Deno.args[1]);
  for (
    const line of await runDiscoveryBench(
      runs,
      layouts.length > 0 ? layouts : LAYOUTS,
    )
  ) console.log(line);
}
