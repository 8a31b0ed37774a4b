/**
 * Shared pieces of the sandbox unit tests: fixture paths, a router, an
 * operation message.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { OpMessage } from "../../protocol/sandbox/messages.ts";
import { ProcessRouter, type ProcessRouterOptions } from "./router.ts";

/** A fixture module's absolute path. */
export function fixture(name: string): string {
  return fileURLToPath(
    new URL(`../../tests/fixtures/sandbox/${name}/mod.ts`, import.meta.url),
  );
}

/** A router with small limits. */
export function testRouter(
  over: Partial<ProcessRouterOptions> = {},
): ProcessRouter {
  return new ProcessRouter({
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
