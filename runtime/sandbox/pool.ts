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

import { dirname, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { SandboxProcess } from "./_process.ts";
import type { OpKind, OpMessage } from "../../protocol/sandbox/messages.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { DiscoveryCache } from "./discovery.ts";
import { DiscoveryQueue } from "./discovery_batch.ts";
import { deniedTreePaths } from "./denied_trees.ts";
import { createDescriber } from "./describe.ts";
import { loadBootstrap, SANDBOX_MAIN, sandboxEnv } from "./spawn.ts";
import { DISCOVERY_MAIN } from "./_discovery_process.ts";
import { Confiner } from "./confiner.ts";
import type { EgressBroker } from "../egress/broker.ts";
import type { ConfinementMode, ConfinementStatus } from "./confinement.ts";
import { absolute, OwnReads } from "./own_reads.ts";
import { runOperation } from "./operation.ts";
import { Deadlines } from "./deadlines.ts";
import { checkGrant, type Policy } from "./permissions.ts";
import { ProcessRouter, type Route } from "./router.ts";
import { configKey, workerKey } from "./worker_key.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
  SandboxProcessInfo,
} from "./types.ts";

export type { SandboxProcessInfo };

/** Options for {@link createSandbox}. */
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
   * OS confinement of every sandbox process (see `confinement.ts`):
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
 * What one warm worker costs, in MiB of resident memory, used to turn a
 * worker budget into a count. Measured by `bench/capacity_bench.ts` (RSS of
 * a process before and after 24 more warm workers): 5.8 MiB a worker with a
 * small module loaded (min 5.80, max 5.83; confined and not; Deno 2.9.6),
 * rounded up. A worker holding more state costs more.
 */
export const WORKER_MB = 6;

// Operation ids: unique per host. They need not be secret: a sandbox's
// frames are only matched against its own process's operations.
let nextOpId = 0;

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
  const policy = options.policy ?? {};
  const cwd = options.cwd ?? Deno.cwd();
  const describeTimeoutMs = options.describeTimeoutMs ?? 5000;
  const cache = new DiscoveryCache({
    dir: options.cacheDir === undefined
      ? resolve(cwd, ".skillbox-cache")
      : options.cacheDir === null
      ? null
      : resolve(cwd, options.cacheDir),
  });
  const deny = (policy.deny ?? []).map((p) => resolve(p));
  const shared = new Set((policy.sharedFolders ?? []).map((p) => resolve(p)));
  const processWaitMs = options.processWaitMs ?? 30_000;
  const confiner = new Confiner(options.confinement ?? "auto", options.egress);
  const router = new ProcessRouter({
    wrapper: () => confiner.wrapperFor(SANDBOX_MAIN),
    deny,
    deniedTrees: policy.deniedTrees ?? [],
    memoryMb: options.memoryMb ?? 512,
    maxIdle: options.maxIdleProcesses ?? 8,
    spareWorkers: options.spareWorkers ?? 1,
    spareProcesses: options.spareProcesses ?? 1,
    maxWarmWorkers: options.maxWarmWorkers ??
      Math.max(1, Math.floor((options.workerBudgetMb ?? 1024) / WORKER_MB)),
    maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
    cwd,
    maxProcesses: options.maxProcesses ?? 32,
    perPrincipal: options.processesPerPrincipal ??
      Math.max(1, navigator.hardwareConcurrency ?? 1),
  });

  // The principal whose code a process runs. Author code: its module's own
  // unit (the folder of a module in its own folder, as a toolkit's tools
  // share one; the file of a module directly in a shared skills folder).
  // Code a client sent: that client's session, so nothing the code can
  // read in its process (raw fd 0, memory) belongs to anyone else.
  function principalOf(path: string, session: string | null): string {
    if (session !== null) return "session:" + session;
    return "module:" + (shared.has(dirname(path)) ? path : dirname(path));
  }
  const own = new OwnReads(policy);
  const discovery = new DiscoveryQueue({
    bootstrap: loadBootstrap,
    timeoutMs: describeTimeoutMs,
    memoryMb: options.memoryMb ?? 512,
    maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    deny: [...deny, ...deniedTreePaths(policy.deniedTrees ?? [])],
    cwd,
    env: sandboxEnv({}),
    wrapper: () => confiner.wrapperFor(DISCOVERY_MAIN),
  });
  const describe = createDescriber({
    policy,
    cache,
    queue: discovery,
    onGraph: (path, files) => own.remember(path, files),
  });
  const deadlines = new Deadlines();

  /**
   * Runs one operation with a deadline; the core of every public method.
   * Not `async`: with a process at hand (the warm case) the operation's own
   * promise is returned as it is, not wrapped in two more.
   */
  function run(
    message: OpMessage,
    grant: Permissions,
    route: Route,
    timeoutMs: number,
    hooks: SandboxHooks | null,
  ): Promise<SandboxOutcome> {
    const started = performance.now();
    // Waiting for room under the process cap counts against the call's
    // own time, and is bounded on its own too.
    route.deadline = started + Math.min(timeoutMs, processWaitMs);
    let found: SandboxProcess | Promise<SandboxProcess>;
    try {
      found = router.processFor(grant, route);
    } catch (err) {
      return Promise.resolve(noProcess(err));
    }
    const options = { timeoutMs, hooks, router, deadlines };
    if (!(found instanceof Promise)) {
      return runOperation(found, message, options);
    }
    return found.then((proc) => {
      options.timeoutMs = Math.max(
        1,
        timeoutMs - (performance.now() - started),
      );
      return runOperation(proc, message, options);
    }, noProcess);
  }

  // An operation that needs only the module's own folder (describe,
  // permissions): checked against the policy like any grant.
  function ownOp(
    op: OpKind,
    path: string,
    exportName: string,
    config: Record<string, unknown>,
  ): OpMessage {
    return {
      t: "op",
      id: String(++nextOpId),
      op,
      path,
      export: exportName,
      workerKey: "",
      args: null,
      config,
      metadata: {},
      session: "",
      call: "",
    };
  }

  return {
    // Discovery runs in batches (see discovery_batch.ts for why that is
    // safe enough and what it leaves exposed).
    describe,

    async resolvePermissions(
      path: string,
      exportName: string,
      config: Record<string, unknown>,
    ): Promise<Permissions> {
      const abs = resolve(path);
      const check = checkGrant(await own.grant(abs), {
        modulePath: abs,
        policy,
      });
      if (!check.ok) throw new SkillboxError("tool_denied", check.reason);
      const outcome = await run(
        ownOp("permissions", abs, exportName, config),
        check.grant,
        { principal: principalOf(abs, null) },
        describeTimeoutMs,
        null,
      );
      if (!outcome.ok) {
        throw new SkillboxError(
          outcome.code,
          `Cannot compute permissions of "${exportName}": ${outcome.message}`,
          { retryable: outcome.retryable },
        );
      }
      return outcome.value as Permissions;
    },

    call(call: SandboxCall, hooks: SandboxHooks): Promise<SandboxOutcome> {
      try {
        return callOnce(call, hooks);
      } catch (err) {
        // As from an async function: a failure rejects, never throws.
        return Promise.reject(err);
      }
    },

    endSession(sessionId: string): void {
      router.endPrincipal(principalOf("", sessionId));
      // Its warm workers in module processes go now, not by LRU.
      for (const proc of router.processes) proc.endSession(sessionId);
    },

    async close(): Promise<void> {
      deadlines.close();
      await discovery.close();
      await router.close();
    },

    confinement(): Promise<ConfinementStatus> {
      return confiner.status();
    },

    processes(): SandboxProcessInfo[] {
      return [...router.processes].map((p) => ({
        pid: p.pid,
        principal: p.key.slice(0, p.key.indexOf("\u0000")),
        grant: p.key.slice(p.key.indexOf("\u0000") + 1),
        busy: p.busy,
        tainted: p.tainted,
        exited: p.exited,
        stats: (session?: string) => p.stats(session),
      }));
    },
  };

  // The hot path: the grant with the module's own reads is cached per
  // checked grant, and the worker key per configuration, so a warm call
  // awaits nothing before its operation is on the pipe.
  function callOnce(
    call: SandboxCall,
    hooks: SandboxHooks,
  ): Promise<SandboxOutcome> {
    const abs = absolute(call.path);
    const found = own.withGrant(abs, call.grant);
    const config = call.isolation === "per-call" ? "" : configKey(call.config);
    if (found instanceof Promise || config instanceof Promise) {
      return Promise.all([found, config]).then(([grant, key]) =>
        callWith(call, hooks, abs, grant, key)
      );
    }
    return callWith(call, hooks, abs, found, config);
  }

  // A call whose grant and configuration key are known.
  function callWith(
    call: SandboxCall,
    hooks: SandboxHooks,
    abs: string,
    grant: Permissions,
    config: string,
  ): Promise<SandboxOutcome> {
    const key = call.isolation === "per-call"
      ? ""
      : workerKey(abs, call.version, call.sessionId, config);
    const message: OpMessage = {
      t: "op",
      id: String(++nextOpId),
      op: "call",
      path: abs,
      export: call.export,
      workerKey: key,
      primeKey: call.isolation === "per-call"
        ? `${abs}\u0000${call.version}`
        : undefined,
      args: call.args,
      config: call.config,
      metadata: call.metadata,
      session: call.sessionId,
      call: call.callId,
    };
    const session = call.principal === "session";
    const route: Route = {
      principal: principalOf(abs, session ? call.sessionId : null),
      session: call.sessionId,
      // Spare processes pre-load the module session code runs in.
      prime: session && message.primeKey !== undefined
        ? { primeKey: message.primeKey, path: abs }
        : undefined,
    };
    return run(message, grant, route, call.timeoutMs, hooks);
  }
}

// Why no process could be had for an operation, as its outcome.
function noProcess(err: unknown): SandboxOutcome {
  const timeout = err instanceof SkillboxError && err.code === "timeout";
  const message = (err as Error).message;
  return {
    ok: false,
    code: timeout ? "timeout" : "sandbox_crash",
    message: timeout ? message : `Cannot start a sandbox process: ${message}`,
    retryable: true,
  };
}
