/**
 * What OS confinement costs: warm call, first call of a new process and
 * idle memory per sandbox process, with `confinement: "auto"` (bubblewrap
 * when it works) against `"off"`, in one run. Memory is the whole process
 * tree (bwrap and the Deno process inside it).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { createSandbox, type SandboxPool } from "../runtime/sandbox/sandbox.ts";
import type { SandboxCall, SandboxHooks } from "../runtime/sandbox/types.ts";
import type { ConfinementMode } from "../runtime/confine/confine.ts";
import type { Bench } from "./main.ts";
import { treeRssMb } from "./_rss.ts";

const NOOP = fileURLToPath(
  new URL("../tests/fixtures/sandbox/noop/mod.ts", import.meta.url),
);
const EVAL = fileURLToPath(
  new URL("../skills/code/eval_typescript.ts", import.meta.url),
);

const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("unused")),
  chat: () => Promise.reject(new Error("unused")),
};

function call(over: Partial<SandboxCall> = {}): SandboxCall {
  return {
    path: NOOP,
    export: "default",
    version: "v1",
    args: {},
    grant: {},
    timeoutMs: 10_000,
    sessionId: "bench",
    callId: "c",
    config: {},
    metadata: {},
    isolation: "warm",
    ...over,
  };
}

async function timed(sandbox: SandboxPool, c: SandboxCall): Promise<number> {
  const start = performance.now();
  const outcome = await sandbox.call(c, hooks);
  if (!outcome.ok) throw new Error(`Bench call failed: ${outcome.message}`);
  return performance.now() - start;
}

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const median = s[Math.floor(s.length / 2)]!;
  return `median ${median.toFixed(2)} (min ${s[0]!.toFixed(2)}, max ${
    s.at(-1)!.toFixed(2)
  })`;
}

async function measure(mode: ConfinementMode): Promise<string[]> {
  const sandbox = createSandbox({
    cacheDir: null,
    maxIdleProcesses: 16,
    confinement: mode,
  });
  const dir = await Deno.makeTempDir();
  try {
    const status = await sandbox.confinement();
    await timed(sandbox, call());
    for (let i = 0; i < 200; i++) await timed(sandbox, call());
    const warm: number[] = [];
    for (let i = 0; i < 2000; i++) warm.push(await timed(sandbox, call()));
    const cold: number[] = [];
    for (let i = 0; i < 8; i++) {
      // A grant never seen before needs a new process.
      cold.push(
        await timed(sandbox, call({ grant: { read: [`${dir}/${i}`] } })),
      );
    }
    const rss: number[] = [];
    for (const p of sandbox.processes()) rss.push(await treeRssMb(p.pid));
    return [
      `${mode} (${status.active ? "confined" : "not confined"}):`,
      `  warm call ms: ${stats(warm)}`,
      `  first call of a new process ms: ${stats(cold)} (goal ≤ 150)`,
      `  idle process tree MB: ${stats(rss)} (goal ≤ 60)`,
    ];
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
}

// A new session's first eval_typescript call, with `spares` spare
// processes kept (0: it waits for a whole process to start). New sessions
// arrive 300 ms apart, time enough for a replacement spare to start.
async function firstEvals(
  mode: ConfinementMode,
  spares: number,
): Promise<number[]> {
  const sandbox = createSandbox({
    cacheDir: null,
    maxIdleProcesses: 16,
    confinement: mode,
    spareProcesses: spares,
  });
  try {
    const { hash } = await sandbox.describe(EVAL);
    const evalCall = (session: string) =>
      call({
        path: EVAL,
        version: hash,
        args: { code: "1 + 1" },
        sessionId: session,
        isolation: "per-call",
        principal: "session",
      });
    await timed(sandbox, evalCall("warm-up"));
    const samples: number[] = [];
    for (let i = 0; i < 12; i++) {
      await new Promise((r) => setTimeout(r, 300));
      samples.push(await timed(sandbox, evalCall(`new-${i}`)));
    }
    return samples;
  } finally {
    await sandbox.close();
  }
}

async function spareFigures(mode: ConfinementMode): Promise<string[]> {
  const without = await firstEvals(mode, 0);
  const withSpare = await firstEvals(mode, 1);
  const median = (xs: number[]) =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return [
    `  new session's first eval ms, no spare process: ${stats(without)}`,
    `  new session's first eval ms, 1 spare process: ${stats(withSpare)} (${
      (median(without) / median(withSpare)).toFixed(1)
    }x faster at the median)`,
  ];
}

/** The confinement bench. */
export const confinementBench: Bench = {
  name: "confinement",
  async run() {
    const lines: string[] = [];
    for (const mode of ["auto", "off"] as const) {
      lines.push(...await measure(mode), ...await spareFigures(mode));
    }
    return lines;
  },
};
