/**
 * The sandbox pool's options, and what they mean for its parts: the
 * defaults filled in, paths made absolute, and the worker budget turned
 * into a count, in one place.
 *
 * @module
 */

import { resolve } from "node:path";
import type { EgressBroker } from "../egress/broker.ts";
import type { ConfinementMode } from "../confine/confine.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import { deniedTreePaths } from "./denied_trees.ts";
import type { DiscoveryQueueOptions } from "../discovery/queue.ts";
import type { Policy } from "./permissions.ts";
import type { ProcessPoolOptions } from "./process_pool.ts";
import { sandboxEnv } from "./spawn.ts";

/** Options of the sandbox pool (`createSandbox` in `pool.ts`). */
export interface SandboxOptions {
  /** The host policy (its `deny` and `sharedFolders` apply to every grant). @default {} */
  policy?: Policy;
  /** Heap cap per sandbox process, in MiB. @default 512 */
  memoryMb?: number;
  /** Idle processes kept before the least recently used is retired. @default 8 */
  maxIdleProcesses?: number;
  /** Spare workers kept started in each process. @default 1 */
  spareWorkers?: number;
  /** Never-used processes kept ahead of new sessions' code (0: none). @default 1 */
  spareProcesses?: number;
  /**
   * Memory for warm and spare workers per process, in MiB: it sets how many
   * are kept (at {@link WORKER_MB} each). @default 1024
   */
  workerBudgetMb?: number;
  /** Warm workers kept per process; overrides `workerBudgetMb`. */
  maxWarmWorkers?: number;
  /** Live sandbox processes at most; past it calls wait for room. @default 32 */
  maxProcesses?: number;
  /** Processes one principal's work may spread over. @default the CPU count */
  processesPerPrincipal?: number;
  /** Longest wait for room under `maxProcesses` before `timeout`. @default 30000 */
  processWaitMs?: number;
  /** Result bound (characters of JSON); longer results are cut. @default 1048576 */
  maxResultBytes?: number;
  /** Bound on one event or RPC payload. @default 1048576 */
  maxEventBytes?: number;
  /** How long reading a module's definitions may take. @default 5000 */
  describeTimeoutMs?: number;
  /** Discovery cache folder; `null` disables it. @default ".skillbox-cache" in `cwd` */
  cacheDir?: string | null;
  /** Working folder of sandbox processes. @default Deno.cwd() */
  cwd?: string;
  /**
   * OS confinement of every sandbox process (see `runtime/confine/confine.ts`):
   * `"auto"` when it works, `"required"` (processes fail to start without
   * it), `"off"`. @default "auto"
   */
  confinement?: ConfinementMode;
  /**
   * The egress broker whose rules a confined process's network follows (a
   * process whose grant names hosts reaches them only through its proxy).
   * @default a broker that allows no private hosts
   */
  egress?: EgressBroker;
}

/**
 * What one warm worker costs, in MiB of resident memory, used to turn a
 * worker budget into a count. Measured by `bench/capacity_bench.ts` (RSS of
 * a process before and after 24 more warm workers): 5.8 MiB a worker with a
 * small module loaded (min 5.80, max 5.83; confined and not; Deno 2.9.6),
 * rounded up. A worker holding more state costs more.
 */
export const WORKER_MB = 6;

/** The options with their defaults, as the pool's parts take them. */
export interface PoolSettings {
  policy: Policy;
  /** Working folder of sandbox processes (absolute). */
  cwd: string;
  /** The discovery cache folder (absolute), or null for none. */
  cacheDir: string | null;
  /** The policy's denied paths, absolute. */
  deny: string[];
  /** Folders whose modules are each their own principal (absolute). */
  shared: Set<string>;
  describeTimeoutMs: number;
  processWaitMs: number;
  confinement: ConfinementMode;
}

/**
 * The options with their defaults filled in.
 *
 * @param options the pool's options
 * @returns the settings
 * @example Paths made absolute against the working folder
 * ```ts
 * import { poolSettings } from "./pool_options.ts";
 * import assert from "node:assert/strict";
 * const settings = poolSettings({ cwd: "/srv", policy: { deny: ["/srv/x/../y"] } });
 * assert.equal(settings.cacheDir, "/srv/.skillbox-cache");
 * assert.deepEqual(settings.deny, ["/srv/y"]);
 * assert.equal(poolSettings({ cacheDir: null }).cacheDir, null);
 * ```
 */
export function poolSettings(options: SandboxOptions): PoolSettings {
  const policy = options.policy ?? {};
  const cwd = options.cwd ?? Deno.cwd();
  return {
    policy,
    cwd,
    cacheDir: options.cacheDir === undefined
      ? resolve(cwd, ".skillbox-cache")
      : options.cacheDir === null
      ? null
      : resolve(cwd, options.cacheDir),
    deny: (policy.deny ?? []).map((p) => resolve(p)),
    shared: new Set((policy.sharedFolders ?? []).map((p) => resolve(p))),
    describeTimeoutMs: options.describeTimeoutMs ?? 5000,
    processWaitMs: options.processWaitMs ?? 30_000,
    confinement: options.confinement ?? "auto",
  };
}

/**
 * The process pool's options.
 *
 * @param options the pool's options
 * @param settings what {@link poolSettings} made of them
 * @param wrapper confinement's wrapper of a call process's command
 * @returns the process pool's options
 * @example The worker budget becomes a count of warm workers
 * ```ts
 * import { poolSettings, poolOptions, WORKER_MB } from "./pool_options.ts";
 * import assert from "node:assert/strict";
 * const options = { workerBudgetMb: 10 * WORKER_MB };
 * const pool = poolOptions(options, poolSettings(options));
 * assert.equal(pool.maxWarmWorkers, 10);
 * assert.equal(pool.maxProcesses, 32);
 * ```
 */
export function poolOptions(
  options: SandboxOptions,
  settings: PoolSettings,
  wrapper?: () => Promise<CommandWrapper>,
): ProcessPoolOptions {
  return {
    wrapper,
    deny: settings.deny,
    deniedTrees: settings.policy.deniedTrees ?? [],
    memoryMb: options.memoryMb ?? 512,
    maxIdle: options.maxIdleProcesses ?? 8,
    spareWorkers: options.spareWorkers ?? 1,
    spareProcesses: options.spareProcesses ?? 1,
    maxWarmWorkers: options.maxWarmWorkers ??
      Math.max(1, Math.floor((options.workerBudgetMb ?? 1024) / WORKER_MB)),
    maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
    cwd: settings.cwd,
    maxProcesses: options.maxProcesses ?? 32,
    perPrincipal: options.processesPerPrincipal ??
      Math.max(1, navigator.hardwareConcurrency ?? 1),
    processWaitMs: settings.processWaitMs,
  };
}

/**
 * The discovery queue's options: processes as limited as call processes,
 * denied the same paths (and the denied trees' entries, listed now).
 *
 * @param options the pool's options
 * @param settings what {@link poolSettings} made of them
 * @param wrapper confinement's wrapper of a discovery process's command
 * @param bootstrap how to load the worker bootstrap
 * @returns the queue's options
 * @example Discovery is denied what call processes are
 * ```ts
 * import { discoveryOptions, poolSettings } from "./pool_options.ts";
 * import assert from "node:assert/strict";
 * const options = { describeTimeoutMs: 100, policy: { deny: ["/d"] } };
 * const queue = discoveryOptions(options, poolSettings(options),
 *   undefined, () => Promise.resolve(""));
 * assert.equal(queue.timeoutMs, 100);
 * assert.deepEqual(queue.deny, ["/d"]);
 * ```
 */
export function discoveryOptions(
  options: SandboxOptions,
  settings: PoolSettings,
  wrapper: (() => Promise<CommandWrapper>) | undefined,
  bootstrap: () => Promise<string>,
): DiscoveryQueueOptions {
  return {
    bootstrap,
    timeoutMs: settings.describeTimeoutMs,
    memoryMb: options.memoryMb ?? 512,
    maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    deny: [
      ...settings.deny,
      ...deniedTreePaths(settings.policy.deniedTrees ?? []),
    ],
    cwd: settings.cwd,
    env: sandboxEnv({}),
    wrapper,
  };
}
