/**
 * Shared pieces of the sandbox unit tests: fixture paths, a pool, an
 * operation message.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { OpMessage } from "../../protocol/sandbox/pipe.ts";
import { ProcessPool, type ProcessPoolOptions } from "./process_pool.ts";

/** A fixture module's absolute path. */
export function fixture(name: string): string {
  return fileURLToPath(
    new URL(`../../tests/fixtures/sandbox/${name}/mod.ts`, import.meta.url),
  );
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

/** A process pool with small limits (larger than one test process's). */
export function testPool(
  over: Partial<ProcessPoolOptions> = {},
): ProcessPool {
  return new ProcessPool({
    ...TEST_LIMITS,
    memoryMb: 256,
    maxIdle: 8,
    spareWorkers: 1,
    maxWarmWorkers: 4,
    cwd: Deno.cwd(),
    ...over,
  });
}

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
