/**
 * The pool of sandbox processes: routing, the caps, spares and principals.
 * A process serves one
 * principal with one grant: a module (or toolkit folder) for author code, a
 * session for code a client sent. A principal's work spreads over up to
 * `perPrincipal` processes when one is busy, each session sticking to the
 * process that holds its warm workers. The number of processes is capped:
 * past the cap, idle processes are retired least recently used first, and
 * calls wait (in order, never dropped) for room, up to a bound. Tainted
 * processes (a worker that would not stop) are killed once idle, and idle
 * processes beyond a bound are retired least recently used first. Spare
 * processes are started ahead of new sessions. Each process reports what
 * happened to its operations ({@link ProcessEvents}); the pool decides.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  type ProcessEvents,
  type ProcessLimits,
  type RunOptions,
  SandboxProcess,
  UNWRAPPED,
} from "./sandbox_process.ts";
import { Deadlines } from "../deadline.ts";
import { WaitQueue } from "../slots.ts";
import { grantKey } from "./grants.ts";
import { loadBootstrap } from "./bootstrap_text.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import type { OpMessage } from "../../protocol/sandbox/pipe.ts";
import type { SandboxOutcome } from "./types.ts";

/** Options of {@link ProcessPool}. */
export interface ProcessPoolOptions extends ProcessLimits {
  /** Idle processes kept (spares included) before the LRU is retired. */
  maxIdle: number;
  /**
   * Spare processes kept started with the last grant session code ran
   * under, each handed to one new session only. @default 0
   */
  spareProcesses?: number;
  /** Wraps each process's command (OS confinement). @default none */
  wrapper?: () => Promise<CommandWrapper>;
  /** Live processes at most; past it calls wait for room. @default 32 */
  maxProcesses?: number;
  /** Processes one principal's work may spread over. @default 1 */
  perPrincipal?: number;
  /** Longest wait for room under the process cap. @default 30 s */
  processWaitMs?: number;
}

/**
 * One operation's grant, route, time and hooks (see {@link ProcessPool.run}):
 * its time counts waiting for a process too.
 */
interface PoolRunOptions extends RunOptions {
  /** The checked grant its process runs with. */
  grant: Permissions;
  /** Whom the process serves (its `deadline` is set by `run`). */
  route: Route;
}

/** A module a spare pre-loads in a fresh worker (see `PrimeMessage`). */
interface SparePrime {
  primeKey: string;
  path: string;
}

/** Who a process serves, and for whom it is picked. */
export interface Route {
  /** The principal: `module:<folder or file>`, `session:<id>`, or "" (operator). */
  principal: string;
  /** The calling session: it sticks to one process (its warm workers). */
  session?: string;
  /** `performance.now()` after which waiting for room fails. @default no bound */
  deadline?: number;
  /** A session's per-call module: spares pre-load it. @default none */
  prime?: SparePrime;
}

// Sessions remembered per principal's process, before the oldest goes.
const MAX_STICKY = 8192;
// Ended principals remembered, before the oldest goes.
const MAX_ENDED = 8192;
// Operations in flight on each process of a principal before another is
// started for it.
const SPREAD_AT = 8;
// The principal part of a spare's key: its group is its grant's spares.
const SPARE = "spare:\u0000";

/**
 * Finds, starts, and retires sandbox processes, and runs operations on them.
 *
 * @example Operations of one principal with one grant share one process
 * ```ts
 * import { ProcessPool } from "./process_pool.ts";
 * import assert from "node:assert/strict";
 * const pool = new ProcessPool({ deny: [], deniedTrees: [], memoryMb: 128,
 *   maxIdle: 8, spareWorkers: 1, maxWarmWorkers: 16, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() });
 * const grant = Object.freeze({});
 * const route = { principal: "module:/skills/add" };
 * const first = await pool.processFor(grant, route);
 * first.release();
 * const again = pool.processFor(grant, route); // started and ready: no await
 * assert.equal(again, first);
 * first.release();
 * await pool.close();
 * ```
 */
export class ProcessPool implements ProcessEvents {
  readonly #options: ProcessPoolOptions;
  /** The one timer every operation's deadline is kept on. */
  readonly deadlines: Deadlines = new Deadlines();
  readonly #max: number;
  readonly #perPrincipal: number;
  // The processes each (principal, grant) key routes to.
  readonly #groups = new Map<string, SandboxProcess[]>();
  // The process each (key, session) last went to: its warm workers are there.
  readonly #sticky = new Map<string, SandboxProcess>();
  // Every process not yet exited, routed or not (unrouted ones finish
  // their work): what counts against the cap, as a killed process still
  // holds its memory until it is gone.
  readonly #all = new Set<SandboxProcess>();
  // Retired (killed) processes that have not exited yet.
  readonly #dying = new Set<SandboxProcess>();
  // Calls waiting for room under the cap, first come first served (a
  // woken call that still finds no room keeps its place at the front).
  readonly #waiters = new WaitQueue();
  // Grant keys by grant object: checked grants are shared frozen objects,
  // so a warm call costs no canonical JSON.
  readonly #keys = new WeakMap<Permissions, string>();
  // Principals whose work ended (closed sessions), remembered so that no
  // process is started for them again and their late calls are refused.
  readonly #ended = new Set<string>();
  // Spare processes ahead of new sessions: started with the grant session
  // code (`eval_typescript`) last ran under, never used, in that grant's
  // group under the SPARE principal, which no call is routed by. A new
  // session's first call takes one (it then belongs to that session only)
  // instead of waiting for a whole process to start; a replacement starts.
  readonly #spareCount: number;
  // The grant spares are started with (the key of their group), and the
  // module session code last ran in per call, which they pre-load.
  #spareGrant: { key: string; grant: Permissions; prime?: SparePrime } | null =
    null;
  // Processes with stopped operations whose workers have not answered yet:
  // how many, and whether the process was routed before the first.
  readonly #stopped = new Map<
    SandboxProcess,
    { routed: boolean; pending: number }
  >();
  // What the last start had: spares are started with it too.
  #made: { bootstrap: string; wrap: CommandWrapper } | null = null;
  #closed = false;
  readonly #processWaitMs: number;

  /** @param options limits and flags of every process */
  constructor(options: ProcessPoolOptions) {
    this.#options = options;
    this.#processWaitMs = options.processWaitMs ?? 30_000;
    this.#max = Math.max(1, options.maxProcesses ?? 32);
    this.#perPrincipal = Math.max(1, options.perPrincipal ?? 1);
    this.#spareCount = Math.max(
      0,
      Math.floor(Math.min(options.spareProcesses ?? 0, options.maxIdle)),
    );
  }

  /** Every live process. */
  get processes(): Iterable<SandboxProcess> {
    return this.#all;
  }

  /**
   * Runs one operation on a process of its principal and grant; never
   * rejects. Not `async`: with a process at hand (the warm case) the
   * process's own promise is returned as it is, not wrapped in two more.
   * Waiting for room under the process cap counts against the call's own
   * time, and is bounded on its own too.
   *
   * @param message the operation
   * @param options its grant, route, time and hooks (reused as the
   *   process's run options: `timeoutMs` is lowered by the wait)
   * @returns the outcome
   */
  run(message: OpMessage, options: PoolRunOptions): Promise<SandboxOutcome> {
    const started = performance.now();
    const { route, timeoutMs } = options;
    route.deadline = started + Math.min(timeoutMs, this.#processWaitMs);
    let found: SandboxProcess | Promise<SandboxProcess>;
    try {
      found = this.processFor(options.grant, route);
    } catch (err) {
      return Promise.resolve(noProcess(err));
    }
    if (!(found instanceof Promise)) return found.run(message, options);
    return found.then((proc) => {
      options.timeoutMs = Math.max(
        1,
        timeoutMs - (performance.now() - started),
      );
      return proc.run(message, options);
    }, noProcess);
  }

  /**
   * The leased process for a grant and principal: returned at once (no
   * await) when one is started and ready, else a promise of a started one.
   * The caller starts an operation on it or releases the lease.
   *
   * @throws {SkillboxError} `runtime_error` once the pool is closed or
   *   the principal ended; `timeout` (from the promise) when no room came
   *   before the deadline
   */
  processFor(
    grant: Permissions,
    route: Route = { principal: "" },
  ): SandboxProcess | Promise<SandboxProcess> {
    this.#check(route);
    const key = route.principal + "\u0000" + this.#keyOf(grant);
    const sticky = this.#sticky.get(key + "\u0000" + (route.session ?? ""));
    if (sticky && sticky.routed && sticky.usable && sticky.isReady) {
      sticky.lease();
      return sticky;
    }
    const pick = this.#pick(key, false);
    if (pick && pick.isReady) return this.#stick(key, route, pick);
    return this.#start(grant, key, route);
  }

  /** An operation ended: its process may now be idle. */
  settled(): void {
    this.retireIdle();
  }

  /**
   * An operation was stopped and its worker told to abort: until it
   * answers it may be spinning, so no new call is routed to the process
   * (another may start for its principal meanwhile).
   */
  stopping(proc: SandboxProcess): void {
    const entry = this.#stopped.get(proc) ?? { routed: false, pending: 0 };
    entry.routed = this.#unroute(proc) || entry.routed;
    entry.pending++;
    this.#stopped.set(proc, entry);
  }

  /**
   * A stopped worker answered, or did not: it spins, and only killing the
   * process stops it, once the other calls it serves are over (tainted:
   * killed once idle). Once every stopped worker of a process answered, it
   * is routed to again, unless its group filled up meanwhile (then it is
   * retired the same way).
   */
  stopped(proc: SandboxProcess, acknowledged: boolean): void {
    if (!acknowledged) proc.tainted = true;
    const entry = this.#stopped.get(proc);
    if (entry && --entry.pending === 0) {
      this.#stopped.delete(proc);
      if (entry.routed && !proc.tainted && !this.#reroute(proc)) {
        proc.tainted = true;
      }
    }
    this.retireIdle();
  }

  // Stops routing new work to a process.
  #unroute(proc: SandboxProcess): boolean {
    const group = this.#groups.get(proc.key);
    const at = group?.indexOf(proc) ?? -1;
    if (!group || at < 0) return false;
    group.splice(at, 1);
    proc.routed = false;
    if (group.length === 0) this.#groups.delete(proc.key);
    return true;
  }

  // Routes to a process again, unless its group is full without it.
  #reroute(proc: SandboxProcess): boolean {
    const group = this.#groups.get(proc.key) ?? [];
    if (!proc.usable || group.includes(proc)) return false;
    if (group.length >= this.#perPrincipal) return false;
    this.#route(proc);
    return true;
  }

  // Routes new work of its key to a process too.
  #route(proc: SandboxProcess): void {
    this.#groups.set(proc.key, [...(this.#groups.get(proc.key) ?? []), proc]);
    proc.routed = true;
  }

  /**
   * Kills tainted idle processes and idle ones beyond the bound (LRU), then
   * lets waiting calls use the room.
   */
  retireIdle(): void {
    for (const proc of this.#all) {
      if (proc.tainted && proc.busy === 0) this.#retire(proc);
    }
    // After every operation: with no more processes than may idle and no
    // call waiting for room there is nothing to sort or wake.
    if (
      this.#all.size <= this.#options.maxIdle && this.#waiters.length === 0
    ) return;
    const idle = this.#idle();
    while (idle.length > this.#options.maxIdle) this.#retire(idle.shift()!);
    this.#wake();
  }

  /**
   * Ends a principal (a session that closed): kills its processes at once,
   * busy or not, forgets where its sessions stuck, and refuses to start
   * any process for it again, so nothing it ran stays alive.
   *
   * @param principal e.g. `session:<id>`
   * @returns how many processes were retired
   */
  endPrincipal(principal: string): number {
    this.#ended.delete(principal);
    this.#ended.add(principal);
    if (this.#ended.size > MAX_ENDED) {
      this.#ended.delete(this.#ended.values().next().value!);
    }
    const prefix = principal + "\u0000";
    let retired = 0;
    for (const proc of this.#all) {
      if (proc.key.startsWith(prefix) && !proc.dead) {
        this.#retire(proc);
        retired++;
      }
    }
    for (const key of this.#sticky.keys()) {
      if (key.startsWith(prefix)) this.#sticky.delete(key);
    }
    return retired;
  }

  /** Kills every process and waits for them to exit. */
  async close(): Promise<void> {
    this.#closed = true;
    const exits = [...this.#all].map((p) => p.exited);
    for (const proc of this.#all) proc.kill();
    this.#waiters.wake();
    await Promise.all(exits);
    this.deadlines.close();
  }

  #check(route: Route): void {
    if (this.#closed) {
      throw new SkillboxError("runtime_error", "Sandbox is closed");
    }
    if (this.#ended.has(route.principal)) {
      throw new SkillboxError(
        "runtime_error",
        "The session has ended: its sandbox processes are retired",
      );
    }
  }

  #keyOf(grant: Permissions): string {
    let key = this.#keys.get(grant);
    if (key === undefined) {
      key = grantKey(grant);
      if (Object.isFrozen(grant)) this.#keys.set(grant, key);
    }
    return key;
  }

  // The least busy usable process of a group, or null when the group may
  // (and should) grow: every process has SPREAD_AT operations in flight.
  #pick(key: string, starting: boolean): SandboxProcess | null {
    let best: SandboxProcess | null = null;
    let size = 0;
    for (const proc of this.#groups.get(key) ?? []) {
      if (!proc.usable) continue;
      size++;
      if (!starting && !proc.isReady) continue;
      if (!best || proc.busy < best.busy) best = proc;
    }
    if (best && best.busy >= SPREAD_AT && size < this.#perPrincipal) {
      return null;
    }
    return best;
  }

  #stick(key: string, route: Route, proc: SandboxProcess): SandboxProcess {
    const sticky = key + "\u0000" + (route.session ?? "");
    this.#sticky.delete(sticky);
    this.#sticky.set(sticky, proc);
    if (this.#sticky.size > MAX_STICKY) {
      this.#sticky.delete(this.#sticky.keys().next().value!);
    }
    proc.lease();
    return proc;
  }

  #idle(): SandboxProcess[] {
    const idle: SandboxProcess[] = [];
    for (const proc of this.#all) {
      if (proc.busy === 0 && proc.usable && proc.isReady) idle.push(proc);
    }
    return idle.sort((a, b) => a.lastUsed - b.lastUsed);
  }

  async #start(
    grant: Permissions,
    key: string,
    route: Route,
  ): Promise<SandboxProcess> {
    // Loaded before the lookup, so concurrent first calls share one process.
    const bootstrap = await loadBootstrap();
    const wrap = this.#options.wrapper
      ? await this.#options.wrapper()
      : UNWRAPPED;
    this.#made = { bootstrap, wrap };
    const session = route.principal.startsWith("session:");
    let waited = 0;
    while (true) {
      // Checked again after each wait: the principal may have ended.
      this.#check(route);
      // A process of this group starting (or started) meanwhile serves too.
      let proc = this.#pick(key, true) ??
        (session ? this.#adoptSpare(key, grant, route.prime) : null);
      if (!proc) {
        if (!this.#makeRoom()) {
          // Woken calls that still find no room keep their place in line.
          await this.#waiters.wait({
            deadline: route.deadline,
            front: waited++ > 0,
            onTimeout: (ms) =>
              new SkillboxError(
                "timeout",
                `Cannot start a sandbox process: all ${this.#max} sandbox processes stayed busy for ${ms} ms`,
                { retryable: true },
              ),
          });
          continue;
        }
        proc = this.#spawn(key, grant, true);
      }
      // Leased before the await: busy while it starts (or the caller
      // resumes), so retireIdle() cannot kill it under this caller.
      this.#stick(key, route, proc);
      try {
        await proc.ready;
      } catch (err) {
        proc.release();
        throw err;
      }
      // Once it is up: a spare never slows the start of a session's own.
      if (session) this.#topUpSpares();
      return proc;
    }
  }

  // Under the cap. At it, retires the least recently used idle process
  // (unless enough are already on their way out for the calls waiting)
  // and answers false: its room comes when it has exited.
  #makeRoom(): boolean {
    if (this.#all.size < this.#max) return true;
    if (this.#dying.size <= this.#waiters.length) {
      const idle = this.#idle()[0];
      if (idle) this.#retire(idle);
    }
    return false;
  }

  // Wakes as many waiting calls as there is room for, oldest first.
  #wake(): void {
    const room = this.#max - this.#all.size +
      Math.max(0, this.#idle().length - this.#dying.size);
    this.#waiters.wake(room);
  }

  // Kills a process and forgets it at once, so nothing is routed to it
  // (nor is it replaced, if a spare).
  #retire(proc: SandboxProcess): void {
    this.#unroute(proc);
    if (this.#all.has(proc)) this.#dying.add(proc);
    proc.kill();
  }

  // A never-used spare of the grant becomes the session's own process
  // (spares of another grant go: session code now runs under this one).
  #adoptSpare(key: string, grant: Permissions, prime?: SparePrime) {
    if (this.#spareCount === 0) return null;
    const spareKey = SPARE + this.#keyOf(grant);
    const last = this.#spareGrant;
    if (last?.key === spareKey) last.prime = prime;
    else {
      if (last) { for (const old of this.#spares(last.key)) this.#retire(old); }
      this.#spareGrant = { key: spareKey, grant, prime };
    }
    // One that died is not handed out: its exit replaces it.
    const proc = this.#spares(spareKey).find((p) => p.usable);
    if (!proc) return null;
    this.#unroute(proc);
    proc.key = key;
    this.#route(proc);
    return proc;
  }

  // The spares of a grant's group (a copy: retiring one changes the group).
  #spares(spareKey: string): SandboxProcess[] {
    return [...(this.#groups.get(spareKey) ?? [])];
  }

  // Starts spares of the last session grant while they are wanted, the cap
  // has room, no call waits for room, and the idle bound (spares count
  // against it) is not reached: a flood of sessions adds no process.
  #topUpSpares(): void {
    const want = this.#spareGrant;
    while (want && this.#spares(want.key).length < this.#spareCount) {
      if (
        this.#closed || this.#all.size >= this.#max ||
        this.#waiters.length > 0 || this.#idle().length >= this.#options.maxIdle
      ) return;
      try {
        const spare = this.#spawn(want.key, want.grant, true);
        if (want.prime) spare.send({ t: "prime", ...want.prime });
      } catch {
        return; // Cannot start one now: the next new session tries again.
      }
    }
  }

  #spawn(key: string, grant: Permissions, routed: boolean): SandboxProcess {
    const { bootstrap, wrap } = this.#made!;
    const proc = SandboxProcess.start(this.#options, {
      key,
      grant,
      bootstrap,
      wrap,
      deadlines: this.deadlines,
      events: this,
    });
    proc.routed = false;
    if (routed) this.#route(proc);
    this.#all.add(proc);
    proc.exited.then(() => {
      this.#all.delete(proc);
      this.#dying.delete(proc);
      // A spare still in its group died (a retired one left it): replaced.
      if (this.#unroute(proc) && proc.key.startsWith(SPARE)) {
        this.#topUpSpares();
      }
      this.#wake();
    });
    return proc;
  }
}

/**
 * Why no process could be had for an operation, as its outcome: `timeout`
 * when room under the cap did not come in time, else `sandbox_crash`.
 *
 * @param err what the pool threw or rejected with
 * @returns the outcome (retryable)
 * @example A failure to start is a retryable crash
 * ```ts
 * import { noProcess } from "./process_pool.ts";
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
