/**
 * Routing and retirement of sandbox processes: one process per grant key,
 * started on first use and shared by every operation with that grant;
 * tainted processes (a worker that would not stop) killed once idle, and
 * idle processes beyond a bound retired least recently used first.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { SandboxProcess } from "./_process.ts";
import {
  grantKey,
  grantToFlags,
  grantToWorkerPermissions,
} from "./permissions.ts";
import { loadBootstrap, type SandboxCommand, sandboxCommand } from "./spawn.ts";
import type { CommandWrapper } from "./confiner.ts";
import { type DeniedTree, deniedTreePaths } from "./denied_trees.ts";

/** Options of {@link ProcessRouter}. */
export interface ProcessRouterOptions {
  /** Paths passed as `--deny-read`/`--deny-write` to every process. */
  deny: string[];
  /** Trees whose entries (outside their exceptions) are denied the same way. */
  deniedTrees: DeniedTree[];
  /** Heap cap per process, in MiB. */
  memoryMb: number;
  /** Idle processes kept before the least recently used is retired. */
  maxIdle: number;
  /** Spare workers per process. */
  spareWorkers: number;
  /** Warm workers per process. */
  maxWarmWorkers: number;
  /** Result bound (characters of JSON). */
  maxResultBytes: number;
  /** Bound on one event or RPC payload. */
  maxEventBytes: number;
  /** Working folder of sandbox processes. */
  cwd: string;
  /** Wraps each process's command (OS confinement). @default none */
  wrapper?: () => Promise<CommandWrapper>;
}

/**
 * Finds, starts, and retires sandbox processes.
 *
 * @example Operations with one grant share one process
 * ```ts
 * import { ProcessRouter } from "./router.ts";
 * import assert from "node:assert/strict";
 * const router = new ProcessRouter({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 1, maxWarmWorkers: 16, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const grant = Object.freeze({});
 * const first = await router.processFor(grant);
 * first.release();
 * const again = router.processFor(grant); // started and ready: no await
 * assert.equal(again, first);
 * first.release();
 * await router.close();
 * ```
 */
export class ProcessRouter {
  readonly #options: ProcessRouterOptions;
  // The process each grant key routes to.
  readonly #routes = new Map<string, SandboxProcess>();
  // Every live process, routed or not (unrouted ones finish their work).
  readonly #all = new Set<SandboxProcess>();
  // Grant keys by grant object: checked grants are shared frozen objects,
  // so a warm call costs no canonical JSON.
  readonly #keys = new WeakMap<Permissions, string>();
  #closed = false;

  /** @param options limits and flags of every process */
  constructor(options: ProcessRouterOptions) {
    this.#options = options;
  }

  /** Every live process. */
  get processes(): Iterable<SandboxProcess> {
    return this.#all;
  }

  /**
   * The leased process for a grant: returned at once (no await) when one is
   * started and ready, else a promise of a started one. The caller starts
   * an operation on it or releases the lease.
   *
   * @throws {SkillboxError} `runtime_error` once the router is closed
   */
  processFor(grant: Permissions): SandboxProcess | Promise<SandboxProcess> {
    if (this.#closed) {
      throw new SkillboxError("runtime_error", "Sandbox is closed");
    }
    const proc = this.#routes.get(this.#keyOf(grant));
    if (proc && proc.usable && proc.isReady) {
      proc.lease();
      return proc;
    }
    return this.#start(grant);
  }

  /** Stops routing new work to a process (it may be spinning). */
  unroute(proc: SandboxProcess): boolean {
    if (this.#routes.get(proc.key) !== proc) return false;
    this.#routes.delete(proc.key);
    return true;
  }

  /** Routes to a process again, unless another took its place. */
  reroute(proc: SandboxProcess): boolean {
    if (this.#routes.has(proc.key) || !proc.usable) return false;
    this.#routes.set(proc.key, proc);
    return true;
  }

  /** Kills tainted idle processes and idle ones beyond the bound (LRU). */
  retireIdle(): void {
    for (const proc of this.#all) {
      if (proc.tainted && proc.busy === 0) this.#retire(proc);
    }
    if (this.#routes.size <= this.#options.maxIdle) return;
    const idle = [...this.#routes.values()]
      .filter((p) => p.busy === 0 && p.usable)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (idle.length > this.#options.maxIdle) this.#retire(idle.shift()!);
  }

  /** Kills every process and waits for them to exit. */
  async close(): Promise<void> {
    this.#closed = true;
    const exits = [...this.#all].map((p) => p.exited);
    for (const proc of this.#all) proc.kill();
    await Promise.all(exits);
  }

  #keyOf(grant: Permissions): string {
    let key = this.#keys.get(grant);
    if (key === undefined) {
      key = grantKey(grant);
      if (Object.isFrozen(grant)) this.#keys.set(grant, key);
    }
    return key;
  }

  // Kills a process and forgets it at once, so nothing is routed to it.
  #retire(proc: SandboxProcess): void {
    this.unroute(proc);
    proc.kill();
  }

  async #start(grant: Permissions): Promise<SandboxProcess> {
    // Loaded before the lookup, so concurrent first calls share one process.
    const bootstrap = await loadBootstrap();
    const wrap = this.#options.wrapper
      ? await this.#options.wrapper()
      : (command: SandboxCommand) => command;
    const key = this.#keyOf(grant);
    let proc = this.#routes.get(key);
    if (!proc || !proc.usable) proc = this.#spawn(key, grant, bootstrap, wrap);
    // Leased before the await: while it starts (or the caller resumes) the
    // process is busy, so retireIdle() cannot kill it under this caller.
    proc.lease();
    try {
      await proc.ready;
    } catch (err) {
      proc.release();
      throw err;
    }
    return proc;
  }

  #spawn(
    key: string,
    grant: Permissions,
    bootstrap: string,
    wrap: CommandWrapper,
  ): SandboxProcess {
    const o = this.#options;
    const proc = new SandboxProcess({
      key,
      command: wrap(
        sandboxCommand({
          // Listed at each start: what the tree holds now is denied too.
          flags: grantToFlags(grant, [
            ...o.deny,
            ...deniedTreePaths(o.deniedTrees),
          ]),
          grant,
          memoryMb: o.memoryMb,
          cwd: o.cwd,
        }),
        grant,
      ),
      permissions: grantToWorkerPermissions(grant),
      bootstrap,
      spares: o.spareWorkers,
      maxWarmWorkers: o.maxWarmWorkers,
      maxResultBytes: o.maxResultBytes,
      maxEventBytes: o.maxEventBytes,
    });
    this.#routes.set(key, proc);
    this.#all.add(proc);
    proc.exited.then(() => {
      this.#all.delete(proc);
      if (this.#routes.get(key) === proc) this.#routes.delete(key);
    });
    return proc;
  }
}
