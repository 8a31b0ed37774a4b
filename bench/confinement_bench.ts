/**
 * What OS confinement costs: warm call, first call of a new process and
 * idle memory per sandbox process, with `confinement: "auto"` (bubblewrap
 * when it works) against `"off"`, in one run. Memory is the whole process
 * tree (bwrap and the Deno process inside it).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { createSandbox, type SandboxPool } from "../runtime/sandbox/pool.ts";
import type { SandboxCall, SandboxHooks } from "../runtime/sandbox/types.ts";
import type { ConfinementMode } from "../runtime/sandbox/confinement.ts";
import type { Bench } from "./main.ts";
import { treeRssMb } from "./_rss.ts";

const NOOP = fileURLToPath(
  new URL("../tests/fixtures/sandbox/noop/mod.ts", import.meta.url),
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

/** The confinement bench. */
export const confinementBench: Bench = {
  name: "confinement",
  async run() {
    return [...await measure("auto"), ...await measure("off")];
  },
};
