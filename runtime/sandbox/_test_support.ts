/**
 * Shared pieces of the sandbox unit tests: fixture paths, a pool, an
 * operation message.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { OpMessage } from "../../protocol/sandbox/messages.ts";
import { ProcessPool, type ProcessPoolOptions } from "./process_pool.ts";

/** A fixture module's absolute path. */
export function fixture(name: string): string {
  return fileURLToPath(
    new URL(`../../tests/fixtures/sandbox/${name}/mod.ts`, import.meta.url),
  );
}

/** A process pool with small limits. */
export function testPool(
  over: Partial<ProcessPoolOptions> = {},
): ProcessPool {
  return new ProcessPool({
    deny: [],
    deniedTrees: [],
    memoryMb: 256,
    maxIdle: 8,
    spareWorkers: 1,
    maxWarmWorkers: 4,
    maxResultBytes: 1 << 20,
    maxEventBytes: 1 << 20,
    cwd: Deno.cwd(),
    ...over,
  });
}

/**
 * Limits of a small test process (one warm worker, no spares); add its
 * working folder as `cwd`.
 */
export const TEST_LIMITS = {
  deny: [],
  deniedTrees: [],
  memoryMb: 128,
  spareWorkers: 0,
  maxWarmWorkers: 1,
  maxResultBytes: 1 << 20,
  maxEventBytes: 1 << 20,
};

let next = 0;

/** A warm `call` operation on a fixture. */
export function callOp(path: string, args: unknown): OpMessage {
  return {
    t: "op",
    id: `t${++next}`,
    op: "call",
    path,
    export: "default",
    workerKey: `${path}|test`,
    args,
    config: {},
    metadata: {},
    session: "s",
    call: "c",
  };
}

/**
 * Pids of the processes whose command line includes `marker`, from `ps`
 * (tests run without `--allow-all`, which Deno asks for to read /proc).
 */
export async function processesNaming(marker: string): Promise<number[]> {
  const { stdout } = await new Deno.Command("ps", {
    args: ["-A", "-ww", "-o", "pid=,args="],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).split("\n")
    .filter((line) => line.includes(marker))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Waits (bounded) until no process names `marker`; returns those left. */
export async function leftAfter(
  marker: string,
  boundMs: number,
): Promise<number[]> {
  const end = Date.now() + boundMs;
  let left = await processesNaming(marker);
  while (left.length > 0 && Date.now() < end) {
    // A killed process is reaped within milliseconds: look again soon.
    await new Promise((r) => setTimeout(r, 20));
    left = await processesNaming(marker);
  }
  return left;
}

/** Ends, by pid, whatever process still names `marker` (a test's leftovers). */
export async function killNaming(marker: string): Promise<void> {
  for (const pid of await processesNaming(marker)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  await leftAfter(marker, 3_000);
}
