/**
 * What the pool's calls become on their way to a process: the principal
 * whose code runs, the grant with the module's own reads, the worker key,
 * the operation frame and its route. A warm call's path: the grant is
 * cached per checked grant and the worker key per configuration, so it
 * awaits nothing before its operation is on the pipe.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { OpKind, OpMessage } from "../../protocol/sandbox/messages.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { OpRunner } from "./op_runner.ts";
import { absolute, type OwnReads } from "./own_reads.ts";
import { checkGrant, type Policy } from "./permissions.ts";
import type { Route } from "./router.ts";
import { configKey, workerKey } from "./worker_key.ts";
import type { SandboxCall, SandboxHooks, SandboxOutcome } from "./types.ts";

/** What {@link PoolCalls} works with. */
export interface PoolCallsOptions {
  /** Runs the operations. */
  runner: OpRunner;
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
 * import { PoolCalls } from "./pool_calls.ts";
 * import { OpRunner } from "./op_runner.ts";
 * import { OwnReads } from "./own_reads.ts";
 * import { ProcessRouter } from "./router.ts";
 * import assert from "node:assert/strict";
 * const router = new ProcessRouter({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const calls = new PoolCalls({
 *   runner: new OpRunner(router, 1000),
 *   own: new OwnReads({}), policy: {}, shared: new Set(["/skills"]),
 *   describeTimeoutMs: 1000,
 * });
 * assert.equal(calls.principalOf("/skills/kit/a.ts", null), "module:/skills/kit");
 * assert.equal(calls.principalOf("/skills/a.ts", null), "module:/skills/a.ts");
 * assert.equal(calls.principalOf("/skills/a.ts", "s1"), "session:s1");
 * ```
 */
export class PoolCalls {
  readonly #runner: OpRunner;
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
    this.#runner = options.runner;
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
    const outcome = await this.#runner.run(
      ownOp("permissions", abs, exportName, config),
      check.grant,
      { principal: this.principalOf(abs, null) },
      this.#describeTimeoutMs,
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
    return this.#runner.run(message, grant, route, call.timeoutMs, hooks);
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
