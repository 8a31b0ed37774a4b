/**
 * Discovery benchmark: loading 1,000 new tool files through the registry,
 * cold (no discovery cache) and from the cache, in both layouts a skills
 * folder allows: each file in a subfolder of its own, and all files
 * directly in one skills folder (a shared folder, as the host treats its
 * skills folders). Goals: cold ≤ 3 s, cached ≤ 0.2 s.
 * Run alone with `deno run -A --unstable-worker-options bench/discovery_bench.ts [runs]`.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { join } from "node:path";
import { loadRegistry } from "../runtime/registry/registry.ts";
import { createSandbox } from "../runtime/sandbox/pool.ts";
import type { Bench } from "./main.ts";

const FILES = 1000;
const RUNS = 3;

type Layout = "subfolders" | "flat";

async function writeTree(dir: string, layout: Layout): Promise<void> {
  await Promise.all(Array.from({ length: FILES }, async (_, i) => {
    const source = `export default { kind: "tool", name: "t_${i}", ` +
      `description: "Tool ${i}", run: () => ${i} };\n`;
    if (layout === "flat") {
      await Deno.writeTextFile(join(dir, `t_${i}.ts`), source);
    } else {
      await Deno.mkdir(join(dir, `t_${i}`));
      await Deno.writeTextFile(join(dir, `t_${i}`, "mod.ts"), source);
    }
  }));
}

async function loadOnce(dir: string, cache: string): Promise<number> {
  const sandbox = createSandbox({
    cacheDir: cache,
    policy: { sharedFolders: [dir] },
  });
  try {
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
    return ms;
  } finally {
    await sandbox.close();
  }
}

/** Cold and cached load times of one layout, in ms, one entry per run. */
async function measure(
  layout: Layout,
  runs: number,
): Promise<{ cold: number[]; cached: number[] }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_disc_" });
  const cold: number[] = [];
  const cached: number[] = [];
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

function summary(values: number[], unit: "s" | "ms"): string {
  const sorted = [...values].sort((a, b) => a - b);
  const show = (ms: number) =>
    unit === "s" ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `median ${show(median)} (min ${show(sorted[0]!)}, max ${
    show(sorted[sorted.length - 1]!)
  })`;
}

/**
 * Runs the discovery benchmark.
 *
 * @param runs cold+cached rounds per layout
 * @returns the lines to print
 */
export async function runDiscoveryBench(runs = RUNS): Promise<string[]> {
  const lines: string[] = [];
  for (const layout of ["subfolders", "flat"] as const) {
    const { cold, cached } = await measure(layout, runs);
    const coldMedian = [...cold].sort((a, b) => a - b)[cold.length >> 1]!;
    const cachedMedian = [...cached].sort((a, b) => a - b)[cached.length >> 1]!;
    lines.push(
      `load ${FILES} tool files (${layout}), ${runs} runs: cold ${
        summary(cold, "s")
      } (goal <= 3 s) ${coldMedian <= 3000 ? "OK" : "OVER GOAL"}; cached ${
        summary(cached, "ms")
      } (goal <= 200 ms) ${cachedMedian <= 200 ? "OK" : "OVER GOAL"}`,
    );
  }
  return lines;
}

/** The discovery bench, for `bench/main.ts`. */
export const discoveryBench: Bench = {
  name: "discovery",
  run: () => runDiscoveryBench(),
};

if (import.meta.main) {
  const runs = Number(Deno.args[0] ?? RUNS);
  for (const line of await runDiscoveryBench(runs)) console.log(line);
}
