/**
 * The host side of the sandbox: a pool of sandbox processes, one per
 * principal and grant (a module or toolkit folder for author code, a
 * session for code a client sent), each keeping warm workers (keyed by
 * module version, session and toolkit configuration, as many as its memory
 * budget holds) and spare workers; idle processes are retired least
 * recently used first, dead ones replaced on the next call, and the number
 * of processes is capped. Implements the {@link Sandbox} contract: a call
 * becomes an operation frame here (its principal, the grant with the
 * module's own reads, the warm-worker key) and runs on the
 * {@link ProcessPool} (`process_pool.ts`), which owns the processes. A warm
 * call's grant is cached per checked grant and its worker key per
 * configuration, so it awaits nothing before its frame is on the pipe.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { OpKind, OpMessage } from "../../protocol/sandbox/pipe.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { SandboxProcess } from "./sandbox_process.ts";
import { DiscoveryCache } from "../discovery/cache.ts";
import { DiscoveryQueue } from "../discovery/queue.ts";
import { createDescriber } from "../discovery/describer.ts";
import { loadBootstrap, SANDBOX_MAIN } from "./spawn.ts";
import { DISCOVERY_MAIN } from "../discovery/queue.ts";
import { Confiner } from "../confine/sandbox_processes.ts";
import type { ConfinementStatus } from "../confine/confine.ts";
import { absolute, OwnReads } from "./own_reads.ts";
import { checkGrant, type Policy } from "./permissions.ts";
import { ProcessPool, type Route } from "./process_pool.ts";
import {
  discoveryOptions,
  poolOptions,
  poolSettings,
  type SandboxOptions,
} from "./pool_options.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
  SandboxProcessInfo,
} from "./types.ts";

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
  const processes = new ProcessPool(
    poolOptions(options, settings, () => confiner.wrapperFor(SANDBOX_MAIN)),
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
    pool: processes,
    own,
    policy: settings.policy,
    shared: settings.shared,
    describeTimeoutMs: settings.describeTimeoutMs,
  });
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

/** What {@link PoolCalls} works with. */
export interface PoolCallsOptions {
  /** Runs the operations. */
  pool: ProcessPool;
  /** The modules' own reads (their grants). */
  own: OwnReads;
  /** The host policy every grant is checked against. */
  policy: Policy;
  /** Folders whose modules are each their own principal (absolute). */
  shared: Set<string>;
  /** Deadline of a permissions operation. */
  describeTimeoutMs: number;
}

// Operation ids: unique per host. They need not be secret: a sandbox's
// frames are only matched against its own process's operations.
let nextOpId = 0;

/**
 * The pool's `call` and `resolvePermissions`.
 *
 * @example Whose code a process runs
 * ```ts
 * import { PoolCalls } from "./pool.ts";
 * import { OwnReads } from "./own_reads.ts";
 * import { ProcessPool } from "./process_pool.ts";
 * import assert from "node:assert/strict";
 * const pool = new ProcessPool({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const calls = new PoolCalls({
 *   pool,
 *   own: new OwnReads({}), policy: {}, shared: new Set(["/skills"]),
 *   describeTimeoutMs: 1000,
 * });
 * assert.equal(calls.principalOf("/skills/kit/a.ts", null), "module:/skills/kit");
 * assert.equal(calls.principalOf("/skills/a.ts", null), "module:/skills/a.ts");
 * assert.equal(calls.principalOf("/skills/a.ts", "s1"), "session:s1");
 * ```
 */
export class PoolCalls {
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
  constructor(options: PoolCallsOptions) {
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
      if (found instanceof Promise || config instanceof Promise) {
        return Promise.all([found, config]).then(([grant, key]) =>
          this.#callWith(call, hooks, abs, grant, key)
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
    const outcome = await this.#pool.run(
      ownOp("permissions", abs, exportName, config),
      {
        grant: check.grant,
        route: { principal: this.principalOf(abs, null) },
        timeoutMs: this.#describeTimeoutMs,
        hooks: null,
      },
    );
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

// An operation that needs only the module's own folder (describe,
// permissions).
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

// Keys of configuration objects already seen: resolved configurations are
// frozen and shared across calls, so a warm call costs no JSON.
const byObject = new WeakMap<object, string | Promise<string>>();
// Digests of long configurations (a digest is async: an event-loop turn),
// bounded, oldest dropped first.
const digests = new Map<string, Promise<string>>();
const MAX_DIGESTS = 256;
// Configurations up to this length key warm workers by their JSON itself.
const INLINE_CHARS = 128;

/**
 * The part of a warm worker's key that stands for a configuration: its JSON
 * when short, else a digest of it (then a promise, the first time).
 *
 * @param config the call's `ctx.config`
 * @returns the key part
 * @example Short configurations key by their JSON
 * ```ts
 * import { configKey } from "./pool.ts";
 * import assert from "node:assert/strict";
 * assert.equal(configKey({ a: 1 }), '{"a":1}');
 * const long = await configKey({ text: "x".repeat(200) });
 * assert.match(long, /^[0-9a-f]{24}$/);
 * ```
 */
export function configKey(
  config: Record<string, unknown>,
): string | Promise<string> {
  const known = byObject.get(config);
  if (known !== undefined) return known;
  const json = JSON.stringify(config);
  const key = json.length <= INLINE_CHARS ? json : digestOf(json);
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
 * import { workerKey } from "./pool.ts";
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

function digestOf(json: string): Promise<string> {
  let digest = digests.get(json);
  if (!digest) {
    digest = crypto.subtle.digest("SHA-256", new TextEncoder().encode(json))
      .then((d) =>
        Array.from(
          new Uint8Array(d).slice(0, 12),
          (b) => b.toString(16).padStart(2, "0"),
        ).join("")
      );
    digests.set(json, digest);
    if (digests.size > MAX_DIGESTS) {
      digests.delete(digests.keys().next().value!);
    }
  }
  return digest;
}
