/**
 * The {@link Sandbox} the host is built with: `createSandbox` and its
 * options. It turns a call into an operation (its principal, the grant
 * with the module's own reads, the warm-worker key) and runs it on the
 * {@link ProcessPool} (`process_pool.ts`), which owns the processes: one
 * per principal and grant (a module or toolkit folder for author code, a
 * session for code a client sent), each keeping warm workers (keyed by
 * module version, session and toolkit configuration, as many as its
 * memory budget holds) and spare workers. Discovery runs on the discovery
 * queue (`runtime/discovery/`). A warm call's grant is cached per checked
 * grant and its worker key per configuration, so it awaits nothing before
 * its frame is on the pipe.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { OpMessage } from "../../protocol/sandbox/pipe.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { DiscoveryCache } from "../discovery/cache.ts";
import {
  DISCOVERY_MAIN,
  DiscoveryQueue,
  type DiscoveryQueueOptions,
} from "../discovery/queue.ts";
import { createDescriber } from "../discovery/describer.ts";
import type { EgressBroker } from "../egress/broker.ts";
import { type CommandWrapper, Confiner } from "../confine/sandbox_processes.ts";
import type { ConfinementMode, ConfinementStatus } from "../confine/confine.ts";
import { loadBootstrap } from "./bootstrap_text.ts";
import { deniedTreePaths } from "./denied_trees.ts";
import { checkGrant, OwnReads, type Policy } from "./grants.ts";
import {
  ProcessPool,
  type ProcessPoolOptions,
  type Route,
} from "./process_pool.ts";
import {
  SANDBOX_MAIN,
  sandboxEnv,
  type SandboxProcess,
} from "./sandbox_process.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
  SandboxProcessInfo,
} from "./types.ts";

/** Options of the sandbox ({@link createSandbox}). */
export interface SandboxOptions {
  /** The host policy (its `deny` and `sharedFolders` apply to every grant). @default {} */
  policy?: Policy;
  /**
   * Heap cap per sandbox process, in MiB. The process as a whole (its
   * workers' heaps and binary buffers included) is held to this plus its
   * worker budget and {@link PROCESS_BASE_MB}. @default 512
   */
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

/**
 * What a sandbox process holds besides its workers' heaps, in MiB: Deno,
 * its main thread and buffers. Measured: 54 MiB resident for a process
 * with a warm and a spare worker (Deno 2.9.6), rounded up with room. A
 * process's resident cap is its heap cap, its workers' budget and this.
 */
export const PROCESS_BASE_MB = 128;

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
 * import { createSandbox } from "./sandbox.ts";
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
  const settings = sandboxSettings(options);
  const confiner = new Confiner(settings.confinement, {
    egress: options.egress,
    policy: settings.policy,
  });
  const processes = new ProcessPool(
    processPoolOptions(
      options,
      settings,
      () => confiner.wrapperFor(SANDBOX_MAIN),
    ),
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
  const calls = new SandboxCalls({ ...settings, pool: processes, own });
  return {
    // Discovery runs in batches (see discovery/queue.ts for why that is
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
      processes.endPrincipal(calls.principalOf("", sessionId));
      // Its warm workers in module processes go now, not by LRU.
      for (const proc of processes.processes) proc.endSession(sessionId);
    },
    async close(): Promise<void> {
      await discovery.close();
      await processes.close();
    },
    confinement: (): Promise<ConfinementStatus> => confiner.status(),
    processes: (): SandboxProcessInfo[] =>
      [...processes.processes].map(processInfo),
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

/** The options with their defaults, as the sandbox's parts take them. */
interface SandboxSettings {
  /** The host policy every grant is checked against. */
  policy: Policy;
  /** Working folder of sandbox processes (absolute). */
  cwd: string;
  /** The discovery cache folder (absolute), or null for none. */
  cacheDir: string | null;
  /** The policy's denied paths, absolute. */
  deny: string[];
  /** Folders whose modules are each their own principal (absolute). */
  shared: Set<string>;
  /** Deadline of a module's describe and of a permissions operation. */
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
 * import { sandboxSettings } from "./sandbox.ts";
 * import assert from "node:assert/strict";
 * const settings = sandboxSettings({ cwd: "/srv", policy: { deny: ["/srv/x/../y"] } });
 * assert.equal(settings.cacheDir, "/srv/.skillbox-cache");
 * assert.deepEqual(settings.deny, ["/srv/y"]);
 * assert.equal(sandboxSettings({ cacheDir: null }).cacheDir, null);
 * ```
 */
export function sandboxSettings(options: SandboxOptions): SandboxSettings {
  const policy = options.policy ?? {};
  const cwd = options.cwd ?? Deno.cwd();
  return {
    policy,
    cwd,
    cacheDir: options.cacheDir === null
      ? null
      : resolve(cwd, options.cacheDir ?? ".skillbox-cache"),
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
 * @param settings what {@link sandboxSettings} made of them
 * @param wrapper confinement's wrapper of a call process's command
 * @returns the process pool's options
 * @example The worker budget becomes a count of warm workers
 * ```ts
 * import { sandboxSettings, processPoolOptions, WORKER_MB } from "./sandbox.ts";
 * import assert from "node:assert/strict";
 * const options = { workerBudgetMb: 10 * WORKER_MB, memoryMb: 256 };
 * const pool = processPoolOptions(options, sandboxSettings(options));
 * assert.equal(pool.maxWarmWorkers, 10);
 * assert.equal(pool.maxProcesses, 32);
 * // The whole process: one heap, the warm workers, and Deno itself.
 * assert.equal(pool.residentMb, 256 + 10 * WORKER_MB + 128);
 * ```
 */
export function processPoolOptions(
  options: SandboxOptions,
  settings: SandboxSettings,
  wrapper?: () => Promise<CommandWrapper>,
): ProcessPoolOptions {
  const memoryMb = options.memoryMb ?? 512;
  const maxWarmWorkers = options.maxWarmWorkers ??
    Math.max(1, Math.floor((options.workerBudgetMb ?? 1024) / WORKER_MB));
  return {
    wrapper,
    deny: settings.deny,
    deniedTrees: settings.policy.deniedTrees ?? [],
    memoryMb,
    // V8's heap cap holds one isolate's heap: the process as a whole is
    // held to the heap, its warm workers' budget and Deno itself.
    residentMb: memoryMb + maxWarmWorkers * WORKER_MB + PROCESS_BASE_MB,
    maxIdle: options.maxIdleProcesses ?? 8,
    spareWorkers: options.spareWorkers ?? 1,
    spareProcesses: options.spareProcesses ?? 1,
    maxWarmWorkers,
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
 * @param settings what {@link sandboxSettings} made of them
 * @param wrapper confinement's wrapper of a discovery process's command
 * @param bootstrap how to load the worker bootstrap
 * @returns the queue's options
 * @example Discovery is denied what call processes are
 * ```ts
 * import { discoveryOptions, sandboxSettings } from "./sandbox.ts";
 * import assert from "node:assert/strict";
 * const options = { describeTimeoutMs: 100, policy: { deny: ["/d"] } };
 * const queue = discoveryOptions(options, sandboxSettings(options),
 *   undefined, () => Promise.resolve(""));
 * assert.equal(queue.timeoutMs, 100);
 * assert.deepEqual(queue.deny, ["/d"]);
 * ```
 */
export function discoveryOptions(
  options: SandboxOptions,
  settings: SandboxSettings,
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

/** What {@link SandboxCalls} works with. */
interface SandboxCallsOptions
  extends Pick<SandboxSettings, "policy" | "shared" | "describeTimeoutMs"> {
  /** Runs the operations. */
  pool: ProcessPool;
  /** The modules' own reads (their grants). */
  own: OwnReads;
}

// Operation ids: unique per host. They need not be secret: a sandbox's
// frames are only matched against its own process's operations.
let nextOpId = 0;

/**
 * The sandbox's `call` and `resolvePermissions`: each made an operation
 * (its principal, its grant with the module's own reads, its warm-worker
 * key) and run on the {@link ProcessPool}.
 *
 * @example Whose code a process runs
 * ```ts
 * import { SandboxCalls } from "./sandbox.ts";
 * import { OwnReads } from "./grants.ts";
 * import { ProcessPool } from "./process_pool.ts";
 * import assert from "node:assert/strict";
 * const pool = new ProcessPool({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const calls = new SandboxCalls({
 *   pool,
 *   own: new OwnReads({}), policy: {}, shared: new Set(["/skills"]),
 *   describeTimeoutMs: 1000,
 * });
 * assert.equal(calls.principalOf("/skills/kit/a.ts", null), "module:/skills/kit");
 * assert.equal(calls.principalOf("/skills/a.ts", null), "module:/skills/a.ts");
 * assert.equal(calls.principalOf("/skills/a.ts", "s1"), "session:s1");
 * ```
 */
export class SandboxCalls {
  readonly #pool: ProcessPool;
  readonly #own: OwnReads;
  readonly #policy: Policy;
  readonly #shared: Set<string>;
  readonly #describeTimeoutMs: number;
  // The warm-worker key and principal of the last call, with what they were
  // made of: calls of one tool from one session in a row (an agent's loop)
  // build neither again (a JSON array, a dirname, two concatenations).
  readonly #last = {
    abs: "",
    version: "",
    session: "",
    config: "",
    client: false,
    key: "",
    principal: "",
  };

  /** @param options what the calls work with */
  constructor(options: SandboxCallsOptions) {
    this.#pool = options.pool;
    this.#own = options.own;
    this.#policy = options.policy;
    this.#shared = options.shared;
    this.#describeTimeoutMs = options.describeTimeoutMs;
  }

  /**
   * The principal whose code a process runs. Author code: its module's own
   * unit (the folder of a module in its own folder, as a toolkit's tools
   * share one; the file of a module directly in a shared skills folder).
   * Code a client sent: that client's session, so nothing the code can
   * read in its process (raw fd 0, memory) belongs to anyone else.
   *
   * @param path the module (absolute)
   * @param session the session whose code it is, or null for author code
   */
  principalOf(path: string, session: string | null): string {
    if (session !== null) return "session:" + session;
    return "module:" + (this.#shared.has(dirname(path)) ? path : dirname(path));
  }

  /**
   * Runs one call (see `Sandbox.call`); a failure rejects, never throws.
   *
   * @param call what to run, with its grant and configuration
   * @param hooks where its events and `ctx` RPCs go
   * @returns its outcome
   */
  call(call: SandboxCall, hooks: SandboxHooks): Promise<SandboxOutcome> {
    try {
      const abs = absolute(call.path);
      const found = this.#own.withGrant(abs, call.grant);
      const config = call.isolation === "per-call"
        ? ""
        : configKey(call.config);
      if (found instanceof Promise) {
        return found.then((grant) =>
          this.#callWith(call, hooks, abs, grant, config)
        );
      }
      return this.#callWith(call, hooks, abs, found, config);
    } catch (err) {
      // As from an async function.
      return Promise.reject(err);
    }
  }

  /**
   * Evaluates a `"dynamic"` permissions function for a configuration, in a
   * process granted only the module's own reads (checked like any grant).
   *
   * @param path the module
   * @param exportName its export
   * @param config the configuration
   * @returns the permissions it asks for
   * @throws {SkillboxError} (rejects) `tool_denied` when the policy refuses
   *   the module's own reads; the operation's code when it fails
   */
  async resolvePermissions(
    path: string,
    exportName: string,
    config: Record<string, unknown>,
  ): Promise<Permissions> {
    const abs = resolve(path);
    const check = checkGrant(await this.#own.grant(abs), {
      modulePath: abs,
      policy: this.#policy,
    });
    if (!check.ok) throw new SkillboxError("tool_denied", check.reason);
    const message: OpMessage = {
      t: "op",
      id: String(++nextOpId),
      op: "permissions",
      path: abs,
      export: exportName,
      workerKey: "",
      args: null,
      config,
      metadata: {},
      session: "",
      call: "",
    };
    const outcome = await this.#pool.run(message, {
      grant: check.grant,
      route: { principal: this.principalOf(abs, null) },
      timeoutMs: this.#describeTimeoutMs,
      hooks: null,
    });
    if (!outcome.ok) {
      throw new SkillboxError(
        outcome.code,
        `Cannot compute permissions of "${exportName}": ${outcome.message}`,
        { retryable: outcome.retryable },
      );
    }
    return outcome.value as Permissions;
  }

  // A call whose grant and configuration key are known.
  #callWith(
    call: SandboxCall,
    hooks: SandboxHooks,
    abs: string,
    grant: Permissions,
    config: string,
  ): Promise<SandboxOutcome> {
    const perCall = call.isolation === "per-call";
    const session = call.principal === "session";
    const last = this.#keys(abs, call.version, call.sessionId, config, session);
    const message: OpMessage = {
      t: "op",
      id: String(++nextOpId),
      op: "call",
      path: abs,
      export: call.export,
      workerKey: perCall ? "" : last.key,
      primeKey: perCall ? `${abs}\u0000${call.version}` : undefined,
      args: call.args,
      config: call.config,
      metadata: call.metadata,
      session: call.sessionId,
      call: call.callId,
    };
    const route: Route = {
      principal: last.principal,
      session: call.sessionId,
      // Spare processes pre-load the module session code runs in.
      prime: session && message.primeKey !== undefined
        ? { primeKey: message.primeKey, path: abs }
        : undefined,
    };
    return this.#pool.run(message, {
      grant,
      route,
      timeoutMs: call.timeoutMs,
      hooks,
    });
  }

  // The call's worker key and principal (the last call's when the same).
  #keys(
    abs: string,
    version: string,
    session: string,
    config: string,
    client: boolean,
  ): { key: string; principal: string } {
    const last = this.#last;
    if (
      last.abs !== abs || last.version !== version ||
      last.session !== session || last.config !== config ||
      last.client !== client
    ) {
      last.abs = abs;
      last.version = version;
      last.session = session;
      last.config = config;
      last.client = client;
      last.key = workerKey(abs, version, session, config);
      last.principal = this.principalOf(abs, client ? session : null);
    }
    return last;
  }
}

// Keys of configuration objects already seen: resolved configurations are
// frozen and shared across calls, so a warm call costs no JSON.
const byObject = new WeakMap<object, string>();
// Configurations up to this length key warm workers by their JSON itself.
const INLINE_CHARS = 128;

/**
 * The part of a warm worker's key that stands for a configuration: its JSON
 * when short, else a digest of it.
 *
 * @param config the call's `ctx.config`
 * @returns the key part
 * @example Short configurations key by their JSON
 * ```ts
 * import { configKey } from "./sandbox.ts";
 * import assert from "node:assert/strict";
 * assert.equal(configKey({ a: 1 }), '{"a":1}');
 * const long = configKey({ text: "x".repeat(200) });
 * assert.match(long, /^[0-9a-f]{24}$/);
 * ```
 */
export function configKey(config: Record<string, unknown>): string {
  const known = byObject.get(config);
  if (known !== undefined) return known;
  const json = JSON.stringify(config);
  // A synchronous digest: a call awaits nothing before its frame is sent.
  const key = json.length <= INLINE_CHARS
    ? json
    : createHash("sha256").update(json).digest("hex").slice(0, 24);
  if (Object.isFrozen(config)) byObject.set(config, key);
  return key;
}

/**
 * The full warm-worker key.
 *
 * @param path absolute module path
 * @param version module version
 * @param session session id
 * @param config the {@link configKey} of the configuration
 * @returns the key
 * @example Another session, another worker
 * ```ts
 * import { workerKey } from "./sandbox.ts";
 * import assert from "node:assert/strict";
 * assert.notEqual(workerKey("/a.ts", "v1", "s1", "{}"), workerKey("/a.ts", "v1", "s2", "{}"));
 * ```
 */
export function workerKey(
  path: string,
  version: string,
  session: string,
  config: string,
): string {
  // JSON: no part can forge a separator.
  return JSON.stringify([path, version, session, config]);
}

// Normalized absolute paths of the modules called, so a warm call does not
// normalize its path again (bounded: cleared when full). Relative paths
// depend on the working folder: resolved every time.
const absolutePaths = new Map<string, string>();

function absolute(path: string): string {
  if (!path.startsWith("/")) return resolve(path);
  let abs = absolutePaths.get(path);
  if (abs === undefined) {
    if (absolutePaths.size >= 4096) absolutePaths.clear();
    abs = resolve(path);
    absolutePaths.set(path, abs);
  }
  return abs;
}
