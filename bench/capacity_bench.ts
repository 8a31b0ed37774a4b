/**
 * Capacity bench: many sessions at once through the `Sandbox` API. 200
 * sessions each running `eval_typescript` concurrently (code a client sent:
 * one sandbox process per session, under the process cap), and 200
 * sessions × 20 calls of one 5 ms drop-in tool (one principal, spread over
 * processes, a warm worker per session) — processes alive, peak RSS of the
 * sandbox processes (summed from `ps`), calls/s, failed calls, latency;
 * plus warm call, per-call isolation, cold process first call and idle RSS
 * per process; everything with confinement on (`auto`) and off. Run alone with
 * `deno run -A --unstable-worker-options bench/capacity_bench.ts`.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  createSandbox,
  type SandboxOptions,
  type SandboxPool,
  WORKER_MB,
} from "../runtime/sandbox/sandbox.ts";
import type { SandboxCall, SandboxHooks } from "../runtime/sandbox/types.ts";
import { formatFigures } from "./sandbox_bench.ts";
import type { ConfinementMode } from "../runtime/confine/confine.ts";
import { latencyStats } from "./_stats.ts";
import type { Bench } from "./main.ts";

const EVAL = fileURLToPath(
  new URL("../skills/code/eval_typescript.ts", import.meta.url),
);
const NOOP = fileURLToPath(
  new URL("../tests/fixtures/sandbox/noop/mod.ts", import.meta.url),
);
const SESSIONS = 200;
const TOOL_CALLS = 20;
const TIMEOUT_MS = 30_000;

const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("No tools in this bench")),
  chat: () => Promise.reject(new Error("No LLM in this bench")),
};

/** What one many-session run gave. */
export interface CapacityRun {
  name: string;
  calls: number;
  failed: number;
  /** Failure codes and how often. */
  codes: Record<string, number>;
  callsPerSecond: number;
  /** Most sandbox processes alive at once. */
  peakProcesses: number;
  /** Largest sum of the sandbox processes' RSS, in MB. */
  peakRssMb: number;
  /** What the configuration bounds that sum by, in MB. */
  boundMb: number;
  latency: { median: number; min: number; max: number; p99: number };
}

// RSS in MB of each process's whole tree (under confinement the pool's pid
// is bubblewrap's, and Deno runs below it), from one `ps` listing.
async function treeRss(pids: number[]): Promise<number[]> {
  const out = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,ppid=,rss="],
    stdout: "piped",
    stderr: "null",
  }).output();
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const [pid, ppid, kb] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined || kb === undefined) continue;
    rss.set(pid, kb);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree = (pid: number): number =>
    (rss.get(pid) ?? 0) +
    (children.get(pid) ?? []).reduce((sum, c) => sum + tree(c), 0);
  return pids.map((pid) => tree(pid) / 1024);
}

// The most processes alive, and the largest sum of their RSS, while on.
function sampler(pool: SandboxPool): {
  stop(): Promise<{ processes: number; rssMb: number }>;
} {
  let on = true;
  let processes = 0;
  let rssMb = 0;
  const loop = (async () => {
    while (on) {
      const pids = pool.processes().map((p) => p.pid);
      processes = Math.max(processes, pids.length);
      const sum = (await treeRss(pids)).reduce((a, b) => a + b, 0);
      rssMb = Math.max(rssMb, sum);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return { processes, rssMb };
    },
  };
}

async function manySessions(
  name: string,
  options: SandboxOptions,
  path: string,
  calls: number,
  call: (session: number, i: number) => Partial<SandboxCall>,
): Promise<CapacityRun> {
  const pool = createSandbox({ cacheDir: null, ...options });
  try {
    const described = await pool.describe(path);
    const watch = sampler(pool);
    const latencies: number[] = [];
    const codes: Record<string, number> = {};
    let failed = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        for (let i = 0; i < calls; i++) {
          const t0 = performance.now();
          const outcome = await pool.call({
            path,
            export: "default",
            version: described.hash,
            args: {},
            grant: {},
            timeoutMs: TIMEOUT_MS,
            sessionId: `session-${s}`,
            callId: `${s}-${i}`,
            config: {},
            metadata: {},
            isolation: "warm",
            ...call(s, i),
          }, hooks);
          latencies.push(performance.now() - t0);
          if (!outcome.ok) {
            failed++;
            codes[outcome.code] = (codes[outcome.code] ?? 0) + 1;
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const peak = await watch.stop();
    const stats = latencyStats(latencies);
    // An idle process (its goal, 60 MB) plus its whole worker budget.
    const perProcessMb = 60 + (options.workerBudgetMb ?? 1024);
    return {
      name,
      calls: latencies.length,
      failed,
      codes,
      callsPerSecond: latencies.length / seconds,
      peakProcesses: peak.processes,
      peakRssMb: peak.rssMb,
      boundMb: peak.processes * perProcessMb,
      latency: stats,
    };
  } finally {
    await pool.close();
  }
}

// A drop-in tool that waits 5 ms, written where the pool can read it.
async function sleepTool(): Promise<{ path: string; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox-capacity-" });
  const path = `${dir}/sleep_5ms.ts`;
  await Deno.writeTextFile(
    path,
    `export default {
  kind: "tool", name: "sleep_5ms", description: "Waits 5 ms",
  run: async (args: unknown) => {
    await new Promise((r) => setTimeout(r, 5));
    return args;
  },
};
`,
  );
  return { path, dir };
}

/**
 * Runs both many-session runs with the given pool options.
 *
 * @param options pool options (budgets, caps) for both runs
 * @returns the eval run and the tool run
 * @example Run once with the defaults
 * ```ts ignore
 * import { runCapacity } from "./capacity_bench.ts";
 * const [evals, tool] = await runCapacity({});
 * console.log(evals.failed, tool.callsPerSecond);
 * ```
 */
export async function runCapacity(
  options: SandboxOptions,
): Promise<CapacityRun[]> {
  const evals = await manySessions(
    `${SESSIONS} sessions x 1 eval_typescript at once`,
    options,
    EVAL,
    1,
    (s) => ({
      args: {
        code: `let n = 0; for (let i = 0; i < 1e5; i++) n += i; n + ${s}`,
      },
      isolation: "per-call",
      principal: "session",
    }),
  );
  const tool = await sleepTool();
  try {
    const calls = await manySessions(
      `${SESSIONS} sessions x ${TOOL_CALLS} calls of a 5 ms tool`,
      options,
      tool.path,
      TOOL_CALLS,
      (_, i) => ({ args: { i } }),
    );
    return [evals, calls];
  } finally {
    await Deno.remove(tool.dir, { recursive: true });
  }
}

/**
 * Formats many-session runs as lines.
 *
 * @param runs what {@link runCapacity} returned
 * @returns two lines per run
 * @example
 * ```ts
 * import { formatRuns } from "./capacity_bench.ts";
 * import assert from "node:assert/strict";
 * const lines = formatRuns([{ name: "x", calls: 1, failed: 0, codes: {},
 *   callsPerSecond: 1, peakProcesses: 1, peakRssMb: 60, boundMb: 572,
 *   latency: { median: 1, min: 1, max: 1, p99: 1 } }]);
 * assert.match(lines[0]!, /^x/);
 * ```
 */
export function formatRuns(runs: CapacityRun[]): string[] {
  return runs.flatMap((r) => [
    `${r.name}: ${r.calls} calls, ${r.failed} failed${
      r.failed ? ` ${JSON.stringify(r.codes)}` : ""
    }, ${
      r.callsPerSecond.toFixed(0)
    } calls/s, ${r.peakProcesses} processes at most, peak RSS ${
      r.peakRssMb.toFixed(0)
    } MB (bound ${r.boundMb} MB = ${r.peakProcesses} processes x (60 MB + worker budget))`,
    `  latency median ${r.latency.median.toFixed(1)} ms, p99 ${
      r.latency.p99.toFixed(0)
    } ms, min ${r.latency.min.toFixed(1)} ms, max ${
      r.latency.max.toFixed(0)
    } ms`,
  ]);
}

function figure(name: string, unit: string, values: number[], goal: string) {
  const s = latencyStats(values);
  return {
    name,
    unit,
    median: s.median,
    min: s.min,
    max: s.max,
    goal,
  };
}

// Warm call, per-call isolation, cold process first call and idle RSS, in
// one confinement mode.
async function singleCalls(confinement: ConfinementMode): Promise<string[]> {
  // No spare processes: the cold figure is a whole process start.
  const pool = createSandbox({
    cacheDir: null,
    confinement,
    spareWorkers: 2,
    spareProcesses: 0,
  });
  try {
    const status = await pool.confinement();
    const { hash } = await pool.describe(NOOP);
    const call = (over: Partial<SandboxCall>): Promise<number> => {
      const t0 = performance.now();
      return pool.call({
        path: NOOP,
        export: "default",
        version: hash,
        args: { a: 1 },
        grant: {},
        timeoutMs: TIMEOUT_MS,
        sessionId: "single",
        callId: "c",
        config: {},
        metadata: {},
        isolation: "warm",
        ...over,
      }, hooks).then(() => performance.now() - t0);
    };
    for (let i = 0; i < 100; i++) await call({});
    const warm: number[] = [];
    for (let i = 0; i < 1000; i++) warm.push(await call({}));
    const perCall: number[] = [];
    for (let i = 0; i < 60; i++) {
      await new Promise((r) => setTimeout(r, 30));
      perCall.push(await call({ isolation: "per-call" }));
    }
    const cold: number[] = [];
    for (let i = 0; i < 8; i++) {
      // A session's first eval-like call: a process of its own.
      cold.push(await call({ sessionId: `cold-${i}`, principal: "session" }));
    }
    // Processes retired meanwhile (LRU) may be gone: 0 MB, not counted.
    const idle = (await treeRss(pool.processes().map((p) => p.pid)))
      .filter((mb) => mb > 0);
    return [
      `confinement ${confinement} (${
        status.active ? "confined" : "not confined"
      }):`,
      ...formatFigures([
        figure("warm call", "ms", warm, "<= 0.5 ms; confined within 10%"),
        figure("per-call isolation", "ms", perCall, "<= 5 ms"),
        figure("cold process, first call", "ms", cold, "<= 150 ms"),
        figure("idle RSS per sandbox process", "MB", idle, "<= 60 MB"),
      ]).map((line) => `  ${line}`),
    ];
  } finally {
    await pool.close();
  }
}

// Warm workers added per process when measuring what one costs.
const ADDED_WORKERS = 24;

// What one warm worker costs, in MB of its process tree's RSS: one process
// per sample, its RSS with one warm worker and after `ADDED_WORKERS` more
// (one per session), divided by the workers the process reports it added.
async function warmWorkerMb(confinement: ConfinementMode): Promise<number[]> {
  const pool = createSandbox({
    cacheDir: null,
    confinement,
    spareWorkers: 0,
    spareProcesses: 0,
    maxWarmWorkers: ADDED_WORKERS + 16,
  });
  const dir = await Deno.makeTempDir({ prefix: "skillbox-workers-" });
  const settle = () => new Promise((r) => setTimeout(r, 500));
  try {
    const { hash } = await pool.describe(NOOP);
    const samples: number[] = [];
    for (let p = 0; p < 5; p++) {
      // A grant of its own: a new process for each sample.
      const grant = { read: [`${dir}/${p}`] };
      const call = async (sessionId: string) => {
        const outcome = await pool.call({
          path: NOOP,
          export: "default",
          version: hash,
          args: {},
          grant,
          timeoutMs: TIMEOUT_MS,
          sessionId,
          callId: "c",
          config: {},
          metadata: {},
          isolation: "warm",
        }, hooks);
        if (!outcome.ok) throw new Error(outcome.message);
      };
      await call(`p${p}-0`);
      const proc = pool.processes().find((x) =>
        x.grant.includes(`${dir}/${p}"`)
      )!;
      await settle();
      const before = (await proc.stats())!.workers;
      const [rssBefore] = await treeRss([proc.pid]);
      for (let i = 1; i <= ADDED_WORKERS; i++) await call(`p${p}-${i}`);
      await settle();
      const after = (await proc.stats())!.workers;
      const [rssAfter] = await treeRss([proc.pid]);
      samples.push((rssAfter! - rssBefore!) / Math.max(1, after - before));
    }
    return samples;
  } finally {
    await pool.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** The capacity bench, as `bench/main.ts` runs it. */
export const capacityBench: Bench = {
  name: "capacity",
  run: async () => {
    const budget = 1024;
    const lines = [
      `budgets: sandbox.worker_budget_mb ${budget} (${
        Math.floor(budget / WORKER_MB)
      } workers a process), max_processes 32; bound = processes x (60 MB + budget); goals: no failed call, the tool run >= 400 calls/s, peak RSS <= bound`,
    ];
    for (const confinement of ["auto", "off"] as const) {
      lines.push(...await singleCalls(confinement));
      lines.push(
        ...formatFigures([
          figure(
            `warm worker RSS (+${ADDED_WORKERS} workers)`,
            "MB",
            await warmWorkerMb(confinement),
            `WORKER_MB = ${WORKER_MB} (the budget's estimate)`,
          ),
        ]).map((line) => `  ${line}`),
      );
      lines.push(
        ...formatRuns(
          await runCapacity({ workerBudgetMb: budget, confinement }),
        )
          .map((line) => `  ${line}`),
      );
    }
    return lines;
  },
};

if (import.meta.main) {
  // deno-lint-ignore no-console
  for (const line of await capacityBench.run()) console.log(line);
}
