/**
 * The host side of the sandbox: a pool of sandbox processes keyed by grant,
 * each keeping warm workers (keyed by module version, session and toolkit
 * configuration) and spare workers; idle processes are retired least
 * recently used first, dead ones replaced on the next call. Implements the
 * {@link Sandbox} contract.
 *
 * @module
 */

import { resolve } from "node:path";
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
import type { ConfinementMode, ConfinementStatus } from "./confinement.ts";
import { OwnReads } from "./own_reads.ts";
import { runOperation } from "./operation.ts";
import { Deadlines } from "./deadlines.ts";
import { checkGrant, type Policy } from "./permissions.ts";
import { ProcessRouter } from "./router.ts";
import { configKey, workerKey } from "./worker_key.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
} from "./types.ts";

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
  /** Warm workers kept per process. @default 16 */
  maxWarmWorkers?: number;
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
}

/** A live sandbox process, for monitoring and tests. */
export interface SandboxProcessInfo {
  pid: number;
  /** The grant it runs (canonical JSON). */
  grant: string;
  /** Operations in flight. */
  busy: number;
  /** Set after a timeout it did not answer: killed when idle. */
  tainted: boolean;
  /** Resolves with the exit code once it is gone. */
  exited: Promise<number>;
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
}

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
  const confiner = new Confiner(options.confinement ?? "auto");
  const router = new ProcessRouter({
    wrapper: () => confiner.wrapperFor(SANDBOX_MAIN),
    deny,
    deniedTrees: policy.deniedTrees ?? [],
    memoryMb: options.memoryMb ?? 512,
    maxIdle: options.maxIdleProcesses ?? 8,
    spareWorkers: options.spareWorkers ?? 1,
    maxWarmWorkers: options.maxWarmWorkers ?? 16,
    maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
    cwd,
  });
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

  /** Runs one operation with a deadline; the core of every public method. */
  async function run(
    message: OpMessage,
    grant: Permissions,
    timeoutMs: number,
    hooks: SandboxHooks | null,
  ): Promise<SandboxOutcome> {
    let proc: SandboxProcess;
    try {
      const found = router.processFor(grant);
      proc = found instanceof Promise ? await found : found;
    } catch (err) {
      return {
        ok: false,
        code: "sandbox_crash",
        message: `Cannot start a sandbox process: ${(err as Error).message}`,
        retryable: true,
      };
    }
    return await runOperation(proc, message, {
      timeoutMs,
      hooks,
      router,
      deadlines,
    });
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
      return callOnce(call, hooks);
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
        grant: p.key,
        busy: p.busy,
        tainted: p.tainted,
        exited: p.exited,
      }));
    },
  };

  // The hot path: the grant with the module's own reads is cached per
  // checked grant, and the worker key per configuration, so a warm call
  // awaits nothing before its operation is on the pipe.
  async function callOnce(
    call: SandboxCall,
    hooks: SandboxHooks,
  ): Promise<SandboxOutcome> {
    const abs = resolve(call.path);
    const found = own.withGrant(abs, call.grant);
    const grant = found instanceof Promise ? await found : found;
    let key = "";
    if (call.isolation !== "per-call") {
      const config = configKey(call.config);
      key = workerKey(
        abs,
        call.version,
        call.sessionId,
        typeof config === "string" ? config : await config,
      );
    }
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
    return await run(message, grant, call.timeoutMs, hooks);
  }
}
