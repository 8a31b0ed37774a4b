/**
 * The host side of the sandbox: a pool of sandbox processes, one per
 * principal and grant (a module or toolkit folder for author code, a
 * session for code a client sent), each keeping warm workers (keyed by
 * module version, session and toolkit configuration, as many as its memory
 * budget holds) and spare workers; idle processes are retired least
 * recently used first, dead ones replaced on the next call, and the number
 * of processes is capped. Implements the {@link Sandbox} contract.
 *
 * @module
 */

import type { SandboxProcess } from "./sandbox_process.ts";
import { DiscoveryCache } from "./discovery.ts";
import { DiscoveryQueue } from "./discovery_batch.ts";
import { createDescriber } from "./describe.ts";
import { loadBootstrap, SANDBOX_MAIN } from "./spawn.ts";
import { DISCOVERY_MAIN } from "./_discovery_process.ts";
import { Confiner } from "./confiner.ts";
import type { ConfinementStatus } from "./confinement.ts";
import { OwnReads } from "./own_reads.ts";
import { ProcessRouter } from "./router.ts";
import { OpRunner } from "./op_runner.ts";
import { PoolCalls } from "./pool_calls.ts";
import {
  discoveryOptions,
  poolSettings,
  routerOptions,
  type SandboxOptions,
} from "./pool_options.ts";
import type { Sandbox, SandboxProcessInfo } from "./types.ts";

export type { SandboxProcessInfo };
export { type SandboxOptions, WORKER_MB } from "./pool_options.ts";

/** The pool: a {@link Sandbox} plus a view of its processes. */
export interface SandboxPool extends Sandbox {
  /** The live sandbox processes. */
  processes(): SandboxProcessInfo[];
  /**
   * Whether processes run confined, and the banner's line saying so (or
   * why not). Rejects when confinement is required and does not work.
   */
  confinement(): Promise<ConfinementStatus>;
  /**
   * A session closed: its session-keyed processes are killed at once, and
   * module processes that ran its calls drop its warm workers.
   */
  endSession(sessionId: string): void;
}

/**
 * Creates the sandbox process pool.
 *
 * @param options policy, limits, cache folder
 * @returns a {@link SandboxPool}; `close()` it when done
 * @example Describe and call a tool
 * ```ts ignore
 * import { createSandbox } from "./pool.ts";
 * const sandbox = createSandbox({ cacheDir: null });
 * const described = await sandbox.describe("/abs/skills/add/mod.ts");
 * const outcome = await sandbox.call({
 *   path: described.path, export: "default", version: described.hash,
 *   args: { a: 1, b: 2 }, grant: {}, timeoutMs: 5000, sessionId: "s",
 *   callId: "c1", config: {}, metadata: {}, isolation: "warm",
 * }, { onEvent() {}, callTool: () => Promise.reject(new Error("none")),
 *      chat: () => Promise.reject(new Error("none")) });
 * await sandbox.close();
 * ```
 */
export function createSandbox(options: SandboxOptions = {}): SandboxPool {
  const settings = poolSettings(options);
  const confiner = new Confiner(settings.confinement, options.egress);
  const router = new ProcessRouter(
    routerOptions(options, settings, () => confiner.wrapperFor(SANDBOX_MAIN)),
  );
  const own = new OwnReads(settings.policy);
  const discovery = new DiscoveryQueue(
    discoveryOptions(
      options,
      settings,
      () => confiner.wrapperFor(DISCOVERY_MAIN),
      loadBootstrap,
    ),
  );
  const calls = new PoolCalls({
    runner: new OpRunner(router, settings.processWaitMs),
    own,
    policy: settings.policy,
    shared: settings.shared,
    describeTimeoutMs: settings.describeTimeoutMs,
  });
  return {
    // Discovery runs in batches (see discovery_batch.ts for why that is
    // safe enough and what it leaves exposed).
    describe: createDescriber({
      policy: settings.policy,
      cache: new DiscoveryCache({ dir: settings.cacheDir }),
      queue: discovery,
      onGraph: (path, files) => own.remember(path, files),
    }),
    resolvePermissions: (path, exportName, config) =>
      calls.resolvePermissions(path, exportName, config),
    // The hot path: straight to the calls' own method.
    call: (call, hooks) => calls.call(call, hooks),
    endSession(sessionId: string): void {
      router.endPrincipal(calls.principalOf("", sessionId));
      // Its warm workers in module processes go now, not by LRU.
      for (const proc of router.processes) proc.endSession(sessionId);
    },
    async close(): Promise<void> {
      await discovery.close();
      await router.close();
    },
    confinement: (): Promise<ConfinementStatus> => confiner.status(),
    processes: (): SandboxProcessInfo[] =>
      [...router.processes].map(processInfo),
  };
}

// What monitoring sees of one process: its key split into whom it serves
// and the grant it runs.
function processInfo(p: SandboxProcess): SandboxProcessInfo {
  const at = p.key.indexOf("\u0000");
  return {
    pid: p.pid,
    principal: p.key.slice(0, at),
    grant: p.key.slice(at + 1),
    busy: p.busy,
    tainted: p.tainted,
    exited: p.exited,
    stats: (session?: string) => p.stats(session),
  };
}
