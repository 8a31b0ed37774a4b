/**
 * Getting a process for one operation and running it there under the
 * call's deadline: the step every pool method ends in. The wait for room
 * under the process cap counts against the call's own time.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { OpMessage } from "../../protocol/sandbox/messages.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { SandboxProcess } from "./sandbox_process.ts";
import type { ProcessRouter, Route } from "./router.ts";
import type { SandboxHooks, SandboxOutcome } from "./types.ts";

/**
 * Runs operations on the processes of one router.
 *
 * @example Run a describe on a module's own process
 * ```ts
 * import { OpRunner } from "./op_runner.ts";
 * import { ProcessRouter } from "./router.ts";
 * import assert from "node:assert/strict";
 * const router = new ProcessRouter({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const runner = new OpRunner(router, 30_000);
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/mod.ts`;
 * await Deno.writeTextFile(path, `export default { kind: "tool", name: "a" };`);
 * const outcome = await runner.run({ t: "op", id: "d1", op: "describe", path,
 *   export: "default", workerKey: "", args: null, config: {}, metadata: {},
 *   session: "", call: "" }, Object.freeze({ read: [dir] }),
 *   { principal: `module:${dir}` }, 10_000, null);
 * assert.equal(outcome.ok, true);
 * await router.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class OpRunner {
  readonly #router: ProcessRouter;
  readonly #processWaitMs: number;

  /**
   * @param router where processes come from
   * @param processWaitMs longest wait for room under the process cap
   */
  constructor(
    router: ProcessRouter,
    processWaitMs: number,
  ) {
    this.#router = router;
    this.#processWaitMs = processWaitMs;
  }

  /**
   * Runs one operation with a deadline; never rejects. Not `async`: with a
   * process at hand (the warm case) the operation's own promise is returned
   * as it is, not wrapped in two more.
   *
   * @param message the operation
   * @param grant the checked grant its process runs with
   * @param route whom the process serves (its `deadline` is set here)
   * @param timeoutMs the call's time, waiting for a process included
   * @param hooks where events and RPCs go; null refuses them
   * @returns the outcome
   */
  run(
    message: OpMessage,
    grant: Permissions,
    route: Route,
    timeoutMs: number,
    hooks: SandboxHooks | null,
  ): Promise<SandboxOutcome> {
    const started = performance.now();
    // Waiting for room under the process cap counts against the call's
    // own time, and is bounded on its own too.
    route.deadline = started + Math.min(timeoutMs, this.#processWaitMs);
    const router = this.#router;
    let found: SandboxProcess | Promise<SandboxProcess>;
    try {
      found = router.processFor(grant, route);
    } catch (err) {
      return Promise.resolve(noProcess(err));
    }
    const options = { timeoutMs, hooks };
    if (!(found instanceof Promise)) {
      return found.run(message, options);
    }
    return found.then((proc) => {
      options.timeoutMs = Math.max(
        1,
        timeoutMs - (performance.now() - started),
      );
      return proc.run(message, options);
    }, noProcess);
  }
}

/**
 * Why no process could be had for an operation, as its outcome: `timeout`
 * when room under the cap did not come in time, else `sandbox_crash`.
 *
 * @param err what the router threw or rejected with
 * @returns the outcome (retryable)
 * @example A failure to start is a retryable crash
 * ```ts
 * import { noProcess } from "./op_runner.ts";
 * import assert from "node:assert/strict";
 * const outcome = noProcess(new Error("spawn failed"));
 * assert.equal(outcome.ok, false);
 * assert.equal(!outcome.ok && outcome.code, "sandbox_crash");
 * assert.equal(!outcome.ok && outcome.retryable, true);
 * ```
 */
export function noProcess(err: unknown): SandboxOutcome {
  const timeout = err instanceof SkillboxError && err.code === "timeout";
  const message = (err as Error).message;
  return {
    ok: false,
    code: timeout ? "timeout" : "sandbox_crash",
    message: timeout ? message : `Cannot start a sandbox process: ${message}`,
    retryable: true,
  };
}
