/**
 * The host side of the sandbox: a pool of sandbox processes keyed by grant,
 * each keeping warm workers (keyed by module version, session and toolkit
 * configuration) and spare workers; idle processes are retired least
 * recently used first, dead ones replaced on the next call. Implements the
 * {@link Sandbox} contract.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import { SandboxProcess } from "./_process.ts";
import type { OpKind, OpMessage } from "../../protocol/sandbox/messages.ts";
import { DiscoveryCache } from "./discovery.ts";
import { DiscoveryQueue } from "./discovery_batch.ts";
import { createDescriber } from "./describe.ts";
import { moduleGraph } from "./module_graph.ts";
import {
  checkGrant,
  grantKey,
  grantToFlags,
  grantToWorkerPermissions,
  ownReadPaths,
  type Policy,
} from "./permissions.ts";
import type {
  ChatRequest,
  ChatResponse,
  Permissions,
} from "../../sandbox/sdk/types.ts";
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
}

// How long a worker may take to answer an abort before its process is
// treated as spinning and killed.
const ABORT_ACK_MS = 200;
// Environment a sandbox process needs to find the deno cache and npm; none
// of it is readable by skill code unless granted by name.
const PASS_ENV = [
  "HOME",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "TMPDIR",
  "NPM_CONFIG_REGISTRY",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
];

let bootstrapSource: Promise<string> | null = null;

function loadBootstrap(): Promise<string> {
  const url = new URL("../../sandbox/worker/bootstrap.ts", import.meta.url);
  bootstrapSource ??= url.protocol === "file:"
    ? Deno.readTextFile(url)
    : fetch(url).then((r) => r.text());
  return bootstrapSource;
}

// Operation ids: unique per host. They need not be secret: a sandbox's
// frames are only matched against its own process's operations.
let nextOpId = 0;

// Digests of long configurations, so a warm call costs no async digest op
// (an event-loop turn each): bounded, oldest dropped first.
const configDigests = new Map<string, Promise<string>>();
const MAX_CONFIG_DIGESTS = 256;
// Configurations up to this length key warm workers by their JSON itself.
const INLINE_CONFIG_CHARS = 128;

function configKey(config: Record<string, unknown>): string | Promise<string> {
  const json = JSON.stringify(config);
  if (json.length <= INLINE_CONFIG_CHARS) return json;
  let digest = configDigests.get(json);
  if (!digest) {
    digest = crypto.subtle.digest("SHA-256", new TextEncoder().encode(json))
      .then((d) =>
        Array.from(
          new Uint8Array(d).slice(0, 12),
          (b) => b.toString(16).padStart(2, "0"),
        ).join("")
      );
    configDigests.set(json, digest);
    if (configDigests.size > MAX_CONFIG_DIGESTS) {
      configDigests.delete(configDigests.keys().next().value!);
    }
  }
  return digest;
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
  const policy = options.policy ?? {};
  const cwd = options.cwd ?? Deno.cwd();
  const memoryMb = options.memoryMb ?? 512;
  const maxIdle = options.maxIdleProcesses ?? 8;
  const maxResultBytes = options.maxResultBytes ?? 1024 * 1024;
  const maxEventBytes = options.maxEventBytes ?? 1024 * 1024;
  const describeTimeoutMs = options.describeTimeoutMs ?? 5000;
  const cache = new DiscoveryCache({
    dir: options.cacheDir === undefined
      ? resolve(cwd, ".skillbox-cache")
      : options.cacheDir === null
      ? null
      : resolve(cwd, options.cacheDir),
  });
  const deny = (policy.deny ?? []).map((p) => resolve(p));
  const processes = new Map<string, SandboxProcess>();
  const all = new Set<SandboxProcess>();
  const localFiles = new Map<string, string[]>();
  let closed = false;
  const discovery = new DiscoveryQueue({
    bootstrap: loadBootstrap,
    timeoutMs: describeTimeoutMs,
    memoryMb,
    maxResultBytes,
    deny,
    cwd,
    env: envFor({}),
  });
  const describe = createDescriber({
    policy,
    cache,
    queue: discovery,
    onGraph: (path, files) => localFiles.set(path, files),
  });

  function envFor(grant: Permissions): Record<string, string> {
    const env: Record<string, string> = {
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    };
    // Binaries named without a path are found through PATH.
    const path = (grant.run ?? []).length > 0 ? ["PATH"] : [];
    for (const name of [...PASS_ENV, ...path, ...(grant.env ?? [])]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    return env;
  }

  // A warm call finds its process started and ready: no await on the way.
  function processFor(
    grant: Permissions,
  ): SandboxProcess | Promise<SandboxProcess> {
    if (closed) throw new SkillboxError("runtime_error", "Sandbox is closed");
    const proc = processes.get(grantKey(grant));
    if (proc && proc.usable && proc.isReady) {
      proc.lease();
      return proc;
    }
    return startProcess(grant);
  }

  async function startProcess(grant: Permissions): Promise<SandboxProcess> {
    // Loaded before the lookup, so concurrent first calls share one process.
    const bootstrap = await loadBootstrap();
    const key = grantKey(grant);
    let proc = processes.get(key);
    if (!proc || !proc.usable) {
      proc = new SandboxProcess({
        key,
        flags: grantToFlags(grant, deny),
        permissions: grantToWorkerPermissions(grant),
        bootstrap,
        memoryMb,
        spares: options.spareWorkers ?? 1,
        maxWarmWorkers: options.maxWarmWorkers ?? 16,
        maxResultBytes,
        maxEventBytes,
        cwd,
        env: envFor(grant),
      });
      const started = proc;
      processes.set(key, started);
      all.add(started);
      started.exited.then(() => {
        all.delete(started);
        if (processes.get(key) === started) processes.delete(key);
      });
    }
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

  /** Kills a process and forgets it at once, so nothing is routed to it. */
  function retire(proc: SandboxProcess): void {
    if (processes.get(proc.key) === proc) processes.delete(proc.key);
    proc.kill();
  }

  function retireIdle(): void {
    for (const proc of all) {
      if (proc.tainted && proc.busy === 0) retire(proc);
    }
    if (processes.size <= maxIdle) return;
    const idle = [...processes.values()].filter((p) => p.busy === 0 && p.usable)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (idle.length > maxIdle) retire(idle.shift()!);
  }

  async function ownGrant(path: string): Promise<Permissions> {
    let files = localFiles.get(path);
    if (!files && (policy.sharedFolders ?? []).includes(dirname(path))) {
      files = (await moduleGraph(path)).files;
      localFiles.set(path, files);
    }
    return { read: ownReadPaths(path, { policy, localFiles: files }) };
  }

  /** Runs one operation with a deadline; the core of every public method. */
  async function runOp(
    op: OpKind,
    fields: {
      path: string;
      export: string;
      grant: Permissions;
      workerKey: string;
      primeKey?: string;
      args: unknown;
      config: Record<string, unknown>;
      metadata: Record<string, unknown>;
      session: string;
      call: string;
      timeoutMs: number;
    },
    hooks: SandboxHooks | null,
  ): Promise<SandboxOutcome> {
    let proc: SandboxProcess;
    try {
      proc = await processFor(fields.grant);
    } catch (err) {
      return {
        ok: false,
        code: "sandbox_crash",
        message: `Cannot start a sandbox process: ${(err as Error).message}`,
        retryable: true,
      };
    }
    const id = String(++nextOpId);
    // Made only when a ctx RPC needs a signal: aborting one builds a
    // DOMException (a stack capture), too dear for every call.
    let controller: AbortController | null = null;
    return await new Promise<SandboxOutcome>((resolveOutcome) => {
      let done = false;
      const finish = (outcome: SandboxOutcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        hooks?.signal?.removeEventListener("abort", onCancel);
        controller?.abort();
        resolveOutcome(outcome);
        retireIdle();
      };
      const stop = (code: ErrorCode, message: string) => {
        if (done) return;
        finish({ ok: false, code, message, retryable: false });
        // Until the worker answers the abort it may be spinning: route no
        // new call here meanwhile, or it would queue behind the spin.
        const routed = processes.get(proc.key) === proc;
        if (routed) processes.delete(proc.key);
        proc.abort(id, ABORT_ACK_MS).then((stopped) => {
          if (stopped && routed && !processes.has(proc.key) && proc.usable) {
            processes.set(proc.key, proc); // it stopped: back in service
          } else if (!stopped || routed) {
            // No answer: the worker spins, and only killing the process
            // stops it, once the other calls it serves are over. (A healthy
            // process that was replaced meanwhile is retired the same way.)
            proc.tainted = true;
          }
          retireIdle();
        });
      };
      const onCancel = () => stop("tool_error", "Call was cancelled");
      const timer = setTimeout(
        () => stop("timeout", `Timed out after ${fields.timeoutMs} ms`),
        fields.timeoutMs,
      );
      if (hooks?.signal?.aborted) {
        proc.release();
        onCancel();
        return;
      }
      hooks?.signal?.addEventListener("abort", onCancel, { once: true });
      const message: OpMessage = {
        t: "op",
        id,
        op,
        path: fields.path,
        export: fields.export,
        workerKey: fields.workerKey,
        primeKey: fields.primeKey,
        args: fields.args,
        config: fields.config,
        metadata: fields.metadata,
        session: fields.session,
        call: fields.call,
      };
      proc.start(message, {
        onEvent(kind, data) {
          if (done || !hooks) return;
          try {
            hooks.onEvent(kind, data);
          } catch {
            // A failing host listener must not break the call.
          }
        },
        onRpc(rid, method, payload) {
          const answer = (ok: boolean, value: unknown, error?: string) => {
            if (!done) {
              proc.send({ t: "rpc_result", id, rid, ok, value, error });
            }
          };
          if (!hooks) {
            answer(false, undefined, "Not available here");
            return;
          }
          const p = payload as { name?: unknown; args?: unknown };
          const pending = method === "tool"
            ? hooks.callTool(
              String(p?.name),
              (typeof p?.args === "object" && p.args !== null
                ? p.args
                : {}) as Record<string, unknown>,
              (controller ??= new AbortController()).signal,
            )
            : hooks.chat(
              payload as ChatRequest,
              (controller ??= new AbortController()).signal,
            );
          Promise.resolve(pending).then(
            (value: unknown | ChatResponse) => answer(true, value),
            (err) => answer(false, undefined, String(err?.message ?? err)),
          );
        },
        onOutcome: finish,
      });
    });
  }

  const sandbox: SandboxPool = {
    // Discovery runs in batches (see discovery_batch.ts for why that is
    // safe enough and what it leaves exposed).
    describe,

    async resolvePermissions(
      path: string,
      exportName: string,
      config: Record<string, unknown>,
    ): Promise<Permissions> {
      const abs = resolve(path);
      const check = checkGrant(await ownGrant(abs), {
        modulePath: abs,
        policy,
      });
      if (!check.ok) throw new SkillboxError("tool_denied", check.reason);
      const outcome = await runOp("permissions", {
        path: abs,
        export: exportName,
        grant: check.grant,
        workerKey: "",
        args: null,
        config,
        metadata: {},
        session: "",
        call: "",
        timeoutMs: describeTimeoutMs,
      }, null);
      if (!outcome.ok) {
        throw new SkillboxError(
          outcome.code,
          `Cannot compute permissions of "${exportName}": ${outcome.message}`,
          { retryable: outcome.retryable },
        );
      }
      return outcome.value as Permissions;
    },

    async call(
      call: SandboxCall,
      hooks: SandboxHooks,
    ): Promise<SandboxOutcome> {
      const abs = resolve(call.path);
      const own = await ownGrant(abs);
      const grant: Permissions = {
        ...call.grant,
        read: [...new Set([...(own.read ?? []), ...(call.grant.read ?? [])])],
      };
      const workerKey = call.isolation === "per-call" ? "" : [
        abs,
        call.version,
        call.sessionId,
        await configKey(call.config),
      ].join("\u0000");
      return await runOp("call", {
        path: abs,
        export: call.export,
        grant,
        workerKey,
        primeKey: call.isolation === "per-call"
          ? `${abs}\u0000${call.version}`
          : undefined,
        args: call.args,
        config: call.config,
        metadata: call.metadata,
        session: call.sessionId,
        call: call.callId,
        timeoutMs: call.timeoutMs,
      }, hooks);
    },

    async close(): Promise<void> {
      closed = true;
      await discovery.close();
      const exits = [...all].map((p) => p.exited);
      for (const proc of all) proc.kill();
      await Promise.all(exits);
    },

    processes(): SandboxProcessInfo[] {
      return [...all].map((p) => ({
        pid: p.pid,
        grant: p.key,
        busy: p.busy,
        tainted: p.tainted,
        exited: p.exited,
      }));
    },
  };
  return sandbox;
}
