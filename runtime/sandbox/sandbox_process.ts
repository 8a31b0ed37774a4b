/**
 * One sandbox process, host side, the way the MCP SDK's `Protocol` owns one
 * connection: it spawns the process under confinement with a grant's flags,
 * writes its frames (the init frame on stdin, the rest on its control
 * socket), reads its frames back, runs operations on it (deadline, cancel,
 * `ctx` RPCs, events), aborts and kills it, and turns its death into
 * outcomes (`out_of_memory`, `sandbox_crash`).
 *
 * It decides nothing about other processes: what happened to its
 * operations is reported to its owner (the pool) through
 * {@link ProcessEvents}, and the pool decides what to do (retire idle
 * processes, stop routing to one whose worker may spin, route to it again).
 *
 * The command line is here too ({@link sandboxCommand}: the grant as Deno
 * permission flags, a clean environment, the working folder), in one
 * place, so that wrapping a process (`runtime/confine/`) means wrapping one
 * command; discovery processes (`runtime/discovery/queue.ts`) are started
 * and told dead the same way.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { controlArg } from "../../protocol/sandbox/control.ts";
import {
  decodeSandboxMessage,
  type HostMessage,
  type InitMessage,
  makeNonce,
  MAX_RPCS_IN_FLIGHT,
  maxFrameBytes,
  type OpMessage,
  readFrames,
  type RpcMethod,
  type WorkerPermissions,
} from "../../protocol/sandbox/pipe.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import type { FetchRequest } from "../../protocol/egress.ts";
import type { ChatRequest } from "../../protocol/chat.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { privateSocketPath } from "../private_sockets.ts";
import { killOutliversOnExit, killTree } from "../confine/kill_tree.ts";
import { denoArgs, socketFlags } from "../confine/confine.ts";
import { grantToFlags, grantToWorkerPermissions } from "./grants.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import { type DeniedTree, deniedTreePaths } from "./denied_trees.ts";
import {
  type Deadlines,
  type Expiring,
  settlesWithin,
  unwatchAbort,
  watchAbort,
} from "../deadline.ts";
import type {
  ProcessWorkerStats,
  SandboxHooks,
  SandboxOutcome,
} from "./types.ts";

/** Limits and flags every sandbox process is started with. */
export interface ProcessLimits {
  /** Paths passed as `--deny-read`/`--deny-write` to every process. */
  deny: string[];
  /** Trees whose entries (outside their exceptions) are denied the same way. */
  deniedTrees: DeniedTree[];
  /** Heap cap per process, in MiB. */
  memoryMb: number;
  /**
   * Resident memory cap of the whole process, workers and binary buffers
   * included, in MiB: past it the process ends and its calls fail with
   * `out_of_memory`. @default none
   */
  residentMb?: number;
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
}

/**
 * What a process tells its owner about its operations. Each is called
 * after the operation's outcome is out; none may throw.
 */
export interface ProcessEvents {
  /** An operation ended (answered, failed, timed out or cancelled). */
  settled(proc: SandboxProcess): void;
  /**
   * An operation was stopped (timeout or cancel) and its worker told to
   * abort: until it acknowledges, the worker may be spinning.
   */
  stopping(proc: SandboxProcess): void;
  /** The worker of a stopped operation acknowledged the abort, or not. */
  stopped(proc: SandboxProcess, acknowledged: boolean): void;
}

/** How to start one process (see {@link SandboxProcess.start}). */
interface StartOptions
  extends Pick<ProcessOptions, "key" | "bootstrap" | "deadlines" | "events"> {
  /** Its grant. */
  grant: Permissions;
  /** Confinement's wrapper of the command. */
  wrap: CommandWrapper;
}

/** What the constructor needs: the command, the init fields and limits. */
interface ProcessOptions extends
  Pick<
    ProcessLimits,
    | "spareWorkers"
    | "maxWarmWorkers"
    | "maxResultBytes"
    | "maxEventBytes"
    | "residentMb"
  > {
  /** The routing key it is started under (its principal and grant). */
  key: string;
  /** What to spawn (see `sandboxCommand`). */
  command: SandboxCommand;
  permissions: WorkerPermissions;
  /** The worker bootstrap (JavaScript). */
  bootstrap: string;
  /** The timer operations' deadlines are kept on. */
  deadlines: Deadlines;
  /** Where it reports its operations. @default nobody */
  events?: ProcessEvents;
  /**
   * Where frames go after the first (the command names its path): stdin
   * then carries only the init frame. @default none: every frame on stdin
   */
  control?: ControlSocket;
}

/** One operation's limits and hooks (see {@link SandboxProcess.run}). */
export interface RunOptions {
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number;
  /** Where events and RPCs go; null refuses RPCs and drops events. */
  hooks: SandboxHooks | null;
}

/** No wrapping: the process runs unconfined. */
export const UNWRAPPED: CommandWrapper = (command: SandboxCommand) => command;

const NOBODY: ProcessEvents = {
  settled() {},
  stopping() {},
  stopped() {},
};

// Characters of stderr kept (see stderrTail).
const STDERR_TAIL = 8192;
// Sessions remembered per process for telling it their end.
const MAX_SESSIONS = 8192;
// A nonce line is 33 bytes; anything longer is not one.
const MAX_HELLO = 256;
// How long a worker may take to answer an abort before its process is
// treated as spinning.
const ABORT_ACK_MS = 200;

/**
 * One running sandbox process.
 *
 * @example Start one, run an operation on it, stop it
 * ```ts
 * import { SandboxProcess, UNWRAPPED } from "./sandbox_process.ts";
 * import { loadBootstrap } from "./bootstrap_text.ts";
 * import { Deadlines } from "../deadline.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/mod.ts`,
 *   `export default { kind: "tool", name: "a", run: () => 42 };`);
 * const deadlines = new Deadlines();
 * const proc = SandboxProcess.start({ deny: [], deniedTrees: [], memoryMb: 128,
 *   spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() }, { key: "k",
 *   grant: { read: [dir] }, bootstrap: await loadBootstrap(),
 *   wrap: UNWRAPPED, deadlines });
 * await proc.ready;
 * const outcome = await proc.run({ t: "op", id: "1", op: "call",
 *   path: `${dir}/mod.ts`, export: "default", workerKey: "w", args: {},
 *   config: {}, metadata: {}, session: "", call: "" },
 *   { timeoutMs: 10_000, hooks: null });
 * assert.deepEqual(outcome, { ok: true, value: 42, truncated: false });
 * proc.kill();
 * await proc.exited;
 * deadlines.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class SandboxProcess {
  /**
   * The key it is routed by (its principal and grant); a spare's changes
   * once, when a new session takes it.
   */
  key: string;
  /** Resolves once the process and its spare workers are up. */
  readonly ready: Promise<void>;
  /** Whether `ready` has resolved (callers skip awaiting it). */
  isReady = false;
  /** Resolves with the exit code once the process is gone and drained. */
  readonly exited: Promise<number>;
  /** Whether the pool routes new work here (false once unrouted). */
  routed = true;
  /** No new work once set; killed when its operations end. */
  tainted = false;
  /** Last time an operation started or ended (for LRU retirement). */
  lastUsed: number = performance.now();
  readonly #child: Deno.ChildProcess;
  readonly #readiness = Promise.withResolvers<void>();
  readonly #ops = new Map<string, Operation>();
  // Answers the process owes, by id: an aborted operation's `stopped`
  // (its operation id), a `stats` report ("stats-" and a count). Each is
  // told null when the process is gone.
  readonly #replies = new Map<
    string,
    (stats: ProcessWorkerStats | null) => void
  >();
  #nextStats = 0;
  // Sessions whose operations it ran (warm workers may be kept for them),
  // so a session's end is told only to processes that saw the session.
  readonly #sessions = new Set<string>();
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #control: ControlSocket | null;
  readonly #encoder = new TextEncoder();
  // What its operations need of it: made once per process, not per call.
  readonly #context: OperationContext;
  #dead = false;
  // Set once its exit status is reaped (its pid may be reused from then on;
  // `#dead` waits for the pipes to drain too).
  #reaped = false;
  // Set the moment the kill starts: the exit is only observed later (pipes
  // drain, status is reaped), and work routed in between would crash.
  #killed = false;
  // Callers that picked this process and have not started their operation
  // yet: they count as busy, so retirement cannot kill it under them.
  #leases = 0;
  // The frame reader's next read waits while no answer is awaited, until
  // the next write (see #hold).
  #heldRead: (() => void) | null = null;

  /**
   * Starts a sandbox process for a grant: its flags (the grant and the
   * policy's denials as Deno permissions), its command wrapped by OS
   * confinement, its control socket, and the init fields its workers need.
   *
   * @param limits flags and limits of every process
   * @param options its key, grant, bootstrap, wrapper, deadline timer and
   *   event listener
   * @returns the process, starting
   */
  static start(limits: ProcessLimits, options: StartOptions): SandboxProcess {
    // Made first: the command names it (and binds it in when confined).
    const control = openControlSocket();
    try {
      return new SandboxProcess({
        ...limits,
        ...options,
        command: options.wrap(
          sandboxCommand({
            // Listed at each start: what the tree holds now is denied too.
            flags: grantToFlags(options.grant, [
              ...limits.deny,
              ...deniedTreePaths(limits.deniedTrees),
            ]),
            grant: options.grant,
            memoryMb: limits.memoryMb,
            cwd: limits.cwd,
            controlSocket: control?.path,
          }),
          options.grant,
        ),
        permissions: grantToWorkerPermissions(options.grant),
        control: control ?? undefined,
      });
    } catch (err) {
      control?.close();
      throw err;
    }
  }

  /** @param options the command, init fields, timer and listener */
  constructor(options: ProcessOptions) {
    this.key = options.key;
    this.#control = options.control ?? null;
    this.#context = {
      proc: this,
      deadlines: options.deadlines,
      events: options.events ?? NOBODY,
      abort: (id) => this.#abort(id),
    };
    try {
      this.#child = spawnSandbox(options.command);
    } catch (err) {
      this.#control?.close();
      throw err;
    }
    this.#writer = this.#child.stdin.getWriter();
    this.ready = this.#readiness.promise;
    // Startup failures surface through `ready`; never as unhandled.
    this.ready.catch(() => {});
    const nonce = makeNonce();
    const init = JSON.stringify(initMessage(nonce, options));
    if (this.#control === null) this.#write(init);
    else {
      // The init frame on stdin, the only one there: it holds the nonce the
      // process proves itself with on the control socket.
      this.#control.accept(nonce);
      this.#writer.write(this.#encoder.encode(init + "\n")).catch(() => {});
      this.#writer.close().catch(() => {});
    }
    const frames = readFrames(this.#child.stdout, (raw) => this.#onFrame(raw), {
      nonce,
      // Results and events are bounded in characters of JSON, up to 3 bytes
      // each: a line over this is dropped whole, and its call never answered.
      maxLineBytes: maxFrameBytes(
        options.maxResultBytes + options.maxEventBytes,
      ),
      hold: this.#hold,
    }).catch(() => {
      // The pipe broke: the exit handler answers what is still pending.
    });
    // What it leaves behind (not killed by the host, which stops
    // bubblewrap first) would keep `exited` waiting. Its control socket's
    // path is its own, and names it and the Deno inside.
    if (this.#control) {
      killOutliversOnExit(
        this.#child,
        () => this.#killed,
        this.#control.path,
      );
    }
    const status = this.#child.status.finally(() => {
      this.#reaped = true;
      // The reader reads on to the end of the pipe from now on.
      this.#releaseRead();
      // Its frame channels close with it: a Deno its bubblewrap left
      // running (see above) is our own main, not yet running anyone's code
      // (nothing is sent before the ready frame, nor once reaped), and
      // exits at their end, even where /proc cannot be read.
      this.#writer.close().catch(() => {});
      this.#control?.close();
    });
    this.exited = Promise.all([status, frames, stderrTail(this.#child)])
      .then(([status, , stderr]) => this.#onExit(status, stderr));
    // What confinement opened for it (its egress proxy socket) goes with it.
    const release = options.command.release;
    if (release) this.exited.then(release, release);
  }

  /** The OS process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** Operations in flight, plus leases not yet turned into operations. */
  get busy(): number {
    return this.#ops.size + this.#leases;
  }

  /** Whether the process has exited. */
  get dead(): boolean {
    return this.#dead;
  }

  /** Whether new work may be routed here (not killed, exited or tainted). */
  get usable(): boolean {
    return !this.#killed && !this.#reaped && !this.#dead && !this.tainted;
  }

  /**
   * Reserves the process for one operation about to start: it counts as
   * busy until {@link run} or {@link release}.
   */
  lease(): void {
    this.#leases++;
  }

  /** Gives back a lease that will not become an operation. */
  release(): void {
    if (this.#leases > 0) this.#leases--;
  }

  /**
   * Runs one operation on the process (leased for it) and resolves with
   * its outcome; never rejects. The frame goes out in this turn; the
   * deadline is kept on the shared timer, the cancel watched on the hooks'
   * signal. A timeout or cancel answers at once and asks the worker to
   * abort; the owner hears of it through {@link ProcessEvents}.
   *
   * @param message the operation
   * @param options its deadline and hooks
   * @returns the outcome
   */
  run(message: OpMessage, options: RunOptions): Promise<SandboxOutcome> {
    return new Promise<SandboxOutcome>((resolve) => {
      const op = new Operation(this.#context, message, options, resolve);
      const signal = options.hooks?.signal;
      if (signal?.aborted) {
        this.release();
        op.cancel();
      } else if (!this.#begin(op, message)) {
        op.settle({
          ok: false,
          code: "sandbox_crash",
          message: "Sandbox process is gone",
          retryable: true,
        });
      } else {
        // After the frame went out: this runs while the sandbox works.
        this.#context.deadlines.add(op, options.timeoutMs);
        if (signal) watchAbort(signal, op);
      }
    });
  }

  /**
   * A session ended: a process that ran its operations drops its warm
   * workers at once. Processes that never saw the session are told nothing.
   */
  endSession(session: string): void {
    if (this.#sessions.delete(session)) {
      this.send({ t: "end_session", session });
    }
  }

  /**
   * What the process reports of its workers.
   *
   * @param session also count this session's warm workers
   * @returns the report, or null when the process is gone
   */
  stats(session?: string): Promise<ProcessWorkerStats | null> {
    if (this.#dead) return Promise.resolve(null);
    const id = `stats-${++this.#nextStats}`;
    return new Promise((resolve) => {
      this.#replies.set(id, resolve);
      // An undefined session is left out of the JSON.
      this.send({ t: "stats", id, session });
    });
  }

  /** Sends one host frame. */
  send(message: HostMessage): void {
    if (this.#dead) return;
    this.#write(JSON.stringify(message));
  }

  /**
   * Kills the process and what it started (SIGKILL: a busy loop ignores
   * anything gentler).
   */
  kill(): void {
    if (this.#dead || this.#killed) return;
    this.#killed = true;
    // Killed within its first few milliseconds, bubblewrap can die before
    // its child asked to die with it: that child (Deno, or bwrap still
    // setting up) would live on, uncounted, running what it was sent and
    // holding stdout open, so `exited` would never resolve. killTree stops
    // bwrap first and kills its children with it. It stops the process at
    // once, before the ends below: unconfined, a main that read them would
    // exit by itself, leaving what it started to init, out of reach.
    killTree(this.#child.pid, () => this.#reaped).catch(() => {});
    // Nothing more reaches its stdin: a main still waiting for frames reads
    // the end of it and exits.
    this.#writer.close().catch(() => {});
    this.#control?.close();
  }

  // An operation's frame goes out; it counts as in flight from now on.
  // False (and nothing sent) when the process is gone.
  #begin(op: Operation, message: OpMessage): boolean {
    this.release();
    if (this.#dead || this.#killed || this.#reaped) return false;
    // The frame goes out first; its outcome cannot arrive before this turn
    // ends, so the bookkeeping after it is off the call's path.
    this.send(message);
    this.#ops.set(message.id, op);
    this.lastUsed = performance.now();
    const session = message.session;
    if (session !== "" && !this.#sessions.has(session)) {
      // Bounded: a session forgotten here loses its warm workers by LRU.
      if (this.#sessions.size >= MAX_SESSIONS) {
        this.#sessions.delete(this.#sessions.values().next().value!);
      }
      this.#sessions.add(session);
    }
    return true;
  }

  // The host decided an operation's outcome (timeout, cancel): the process
  // forgets it and asks the worker to abort. Resolves true when the worker
  // answered in time (it is not spinning).
  async #abort(id: string): Promise<boolean> {
    this.#ops.delete(id);
    if (this.#dead) return true;
    const stopped = new Promise<void>((resolve) => {
      this.#replies.set(id, () => resolve());
    });
    this.send({ t: "abort", id });
    const answered = await settlesWithin(stopped, ABORT_ACK_MS);
    this.#replies.delete(id);
    return answered;
  }

  #write(json: string): void {
    const bytes = this.#encoder.encode(json + "\n");
    if (this.#control !== null) this.#control.write(bytes);
    else this.#writer.write(bytes).catch(() => {});
    this.#releaseRead();
  }

  // When the frame reader asks for its next read: at once while an answer
  // is awaited (or before the ready frame, or once the process exited),
  // else only once the process is written to again. Asking for a read runs
  // the byte-stream machinery and an op synchronously: held, that runs
  // while the sandbox works on the next operation, not in the turn an
  // answer goes back to its caller.
  readonly #hold = (): Promise<void> | null => {
    if (this.#reaped || !this.isReady) return null;
    if (this.#ops.size > 0 || this.#replies.size > 0) return null;
    return new Promise((resolve) => this.#heldRead = resolve);
  };

  #releaseRead(): void {
    const release = this.#heldRead;
    if (release === null) return;
    this.#heldRead = null;
    release();
  }

  #onFrame(raw: unknown): void {
    const msg = decodeSandboxMessage(raw);
    if (msg === null) return;
    switch (msg.t) {
      case "ready":
        this.isReady = true;
        this.#readiness.resolve();
        return;
      case "stopped":
      case "stats": {
        const answer = this.#replies.get(msg.id);
        this.#replies.delete(msg.id);
        answer?.(
          msg.t === "stopped" ? null : {
            workers: msg.workers,
            sessionWorkers: msg.sessionWorkers,
          },
        );
        return;
      }
    }
    const op = this.#ops.get(msg.id);
    if (!op) return;
    if (msg.t === "event") op.onEvent(msg.kind, msg.data);
    else if (msg.t === "rpc") op.onRpc(msg.rid, msg.method, msg.payload);
    else {
      this.#ops.delete(msg.id);
      this.lastUsed = performance.now();
      op.settle(
        msg.ok ? { ok: true, value: msg.value, truncated: msg.truncated } : {
          ok: false,
          code: msg.code,
          message: msg.message,
          retryable: msg.retryable,
        },
      );
    }
  }

  // The process is gone and its pipes drained: whatever still waits on it
  // is answered, operations with the way it died.
  #onExit(status: Deno.CommandStatus, stderrTail: string): number {
    this.#dead = true;
    const failure = exitOutcome(status, stderrTail);
    this.#readiness.reject(new Error(failure.message));
    const ops = [...this.#ops.values()];
    this.#ops.clear();
    for (const op of ops) op.settle(failure);
    for (const answer of this.#replies.values()) answer(null);
    this.#replies.clear();
    return status.code;
  }
}

/** The first frame a process reads: its nonce, bootstrap and limits. */
function initMessage(nonce: string, options: ProcessOptions): InitMessage {
  return {
    t: "init",
    nonce,
    bootstrap: options.bootstrap,
    permissions: options.permissions,
    spares: options.spareWorkers,
    maxWarmWorkers: options.maxWarmWorkers,
    maxResultBytes: options.maxResultBytes,
    maxEventBytes: options.maxEventBytes,
    maxResidentMb: options.residentMb ?? 0,
  };
}

/** What an operation needs of its process. */
interface OperationContext {
  readonly proc: SandboxProcess;
  readonly deadlines: Deadlines;
  readonly events: ProcessEvents;
  /** Forgets the operation and asks its worker to abort (see #abort). */
  readonly abort: (id: string) => Promise<boolean>;
}

// One operation in flight: relays its events and `ctx` RPCs to the hooks,
// expires at its deadline, stops on cancel. Its methods are the named steps
// of the hot path (no closure made per call).
class Operation implements Expiring {
  readonly #context: OperationContext;
  readonly #message: OpMessage;
  readonly #hooks: SandboxHooks | null;
  readonly #timeoutMs: number;
  readonly #resolve: (outcome: SandboxOutcome) => void;
  #done = false;
  // Made only when a ctx RPC needs a signal: aborting one builds a
  // DOMException (a stack capture), too dear for every call.
  #controller: AbortController | null = null;
  // Its ctx RPCs the hooks have not answered yet.
  #rpcs = 0;

  constructor(
    context: OperationContext,
    message: OpMessage,
    options: RunOptions,
    resolve: (outcome: SandboxOutcome) => void,
  ) {
    this.#context = context;
    this.#message = message;
    this.#hooks = options.hooks;
    this.#timeoutMs = options.timeoutMs;
    this.#resolve = resolve;
  }

  onEvent(kind: string, data: Record<string, unknown>): void {
    if (this.#done || !this.#hooks) return;
    try {
      this.#hooks.onEvent(kind, data);
    } catch {
      // A failing host listener must not break the call.
    }
  }

  onRpc(rid: number, method: RpcMethod, payload: unknown): void {
    const hooks = this.#hooks;
    if (!hooks) {
      this.#answer(rid, false, undefined, "Not available here");
      return;
    }
    // Each holds host work and memory until answered: past the bound the
    // worker's code posted around its bootstrap, which queues its own.
    if (this.#rpcs >= MAX_RPCS_IN_FLIGHT) {
      this.#answer(
        rid,
        false,
        undefined,
        `Too many ctx requests in flight: at most ${MAX_RPCS_IN_FLIGHT} per call`,
      );
      return;
    }
    this.#rpcs++;
    const signal = (this.#controller ??= new AbortController()).signal;
    let pending: Promise<unknown>;
    try {
      if (method === "tool") {
        const p = payload as { name?: unknown; args?: unknown } | null;
        const args = typeof p?.args === "object" && p.args !== null
          ? p.args as Record<string, unknown>
          : {};
        pending = hooks.callTool(String(p?.name), args, signal);
      } else if (method === "fetch") {
        pending = hooks.fetch
          ? hooks.fetch(payload as FetchRequest, signal)
          : Promise.reject(new Error("ctx.fetch is not available here"));
      } else pending = hooks.chat(payload as ChatRequest, signal);
    } catch (err) {
      // A hook that throws at once must not stop the frame reader (this
      // runs in it), nor keep its place in the bound.
      pending = Promise.reject(err);
    }
    Promise.resolve(pending).then(
      (value) => {
        this.#rpcs--;
        this.#answer(rid, true, value);
      },
      (err) => {
        this.#rpcs--;
        this.#answer(rid, false, undefined, String(err?.message ?? err));
      },
    ).catch(() => {
      // A value JSON cannot hold (a BigInt, a cycle) or an error String()
      // refuses threw above, before anything was sent: uncaught, it would
      // end the host.
      this.#answer(
        rid,
        false,
        undefined,
        "Cannot answer the ctx request: the host's answer cannot be sent",
      );
    });
  }

  /** The outcome is known: the caller gets it, then the owner hears. */
  settle(outcome: SandboxOutcome): void {
    if (this.#done) return;
    this.#done = true;
    const context = this.#context;
    context.deadlines.remove(this);
    const signal = this.#hooks?.signal;
    if (signal) unwatchAbort(signal, this);
    this.#controller?.abort();
    this.#resolve(outcome);
    context.events.settled(context.proc);
  }

  #answer(rid: number, ok: boolean, value: unknown, error?: string): void {
    if (this.#done) return;
    const id = this.#message.id;
    this.#context.proc.send({ t: "rpc_result", id, rid, ok, value, error });
  }

  expire(): void {
    this.#stop("timeout", `Timed out after ${Math.round(this.#timeoutMs)} ms`);
  }

  /** The call's signal aborted. */
  cancel(): void {
    // The reason says why (e.g. the client stopped reading), for the
    // caller and the run history.
    const reason = this.#hooks?.signal?.reason;
    const why = reason instanceof Error ? reason.message : "";
    this.#stop(
      "tool_error",
      why ? `Call was cancelled: ${why}` : "Call was cancelled",
    );
  }

  #stop(code: ErrorCode, message: string): void {
    if (this.#done) return;
    this.settle({ ok: false, code, message, retryable: false });
    // Until the worker answers the abort it may be spinning: the owner
    // routes no new call here meanwhile, or it would queue behind the spin.
    const { proc, events } = this.#context;
    events.stopping(proc);
    this.#context.abort(this.#message.id).then((acknowledged) =>
      events.stopped(proc, acknowledged)
    );
  }
}

/**
 * The host's end of a sandbox process's control socket: the Unix socket
 * the host writes its frames to once the process is started (see
 * `protocol/sandbox/control.ts` for why a socket and not stdin).
 *
 * The socket lives in the host's private socket folder (mode 0700) and is
 * bound into the process's namespace alone. A connection counts only once
 * its first line is the process's nonce, which the process read from its
 * stdin pipe: whoever else might reach the path cannot take the process's
 * place. The first such connection is kept and the listener closed, so
 * nothing (no worker of that process either) can connect afterwards.
 *
 * @example The process connects, says its nonce, and reads a frame
 * ```ts
 * import { ControlSocket } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * const control = new ControlSocket();
 * control.accept("n0");
 * control.write(new TextEncoder().encode("frame\n"));
 * const conn = await Deno.connect({ transport: "unix", path: control.path });
 * await conn.write(new TextEncoder().encode("n0\n"));
 * const buf = new Uint8Array(16);
 * const n = await conn.read(buf);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, n ?? 0)), "frame\n");
 * conn.close();
 * control.close();
 * ```
 */
export class ControlSocket {
  /** The socket's path (the process is told it, and has it bound in). */
  readonly path: string;
  readonly #listener: Deno.UnixListener;
  #listening = true;
  #conn: Deno.UnixConn | null = null;
  // Frames written before the process connected, or while one is on its way.
  #queue: Uint8Array[] = [];
  #current: Uint8Array | null = null;
  // Connections that have not said a nonce yet: closed once the process
  // is found, or the socket closed, so none is held open by its peer.
  readonly #greeting = new Set<Deno.UnixConn>();
  #closed = false;

  constructor() {
    this.path = privateSocketPath();
    this.#listener = Deno.listen({ transport: "unix", path: this.path });
  }

  /** Whether the process has connected. */
  get connected(): boolean {
    return this.#conn !== null;
  }

  /**
   * Starts taking connections: the first whose first line is `nonce` is the
   * process's; others are closed.
   *
   * @param nonce the process's nonce
   */
  accept(nonce: string): void {
    (async () => {
      for await (const conn of this.#listener) {
        this.#greeting.add(conn);
        this.#hello(conn, nonce);
      }
    })().catch(() => {
      // The listener was closed.
    });
  }

  /**
   * Writes one frame (or several) after all those before it.
   *
   * @param bytes the framed lines; not changed afterwards by the caller
   */
  write(bytes: Uint8Array): void {
    if (this.#closed) return;
    if (this.#conn === null || this.#current !== null) {
      this.#queue.push(bytes);
      return;
    }
    this.#send(bytes);
  }

  /** Stops listening and closes the connection (the process reads its end). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#stopListening();
    closeQuietly(this.#conn);
  }

  async #hello(conn: Deno.UnixConn, nonce: string): Promise<void> {
    const expected = new TextEncoder().encode(nonce + "\n");
    const got = new Uint8Array(MAX_HELLO);
    let at = 0;
    try {
      while (at < expected.length) {
        const n = await conn.read(got.subarray(at));
        if (n === null) break;
        at += n;
      }
    } catch {
      // Gone: not the process.
    }
    this.#greeting.delete(conn);
    const same = at === expected.length &&
      expected.every((byte, i) => got[i] === byte);
    if (!same || this.#conn !== null || this.#closed) {
      closeQuietly(conn);
      return;
    }
    this.#conn = conn;
    this.#stopListening();
    this.#next();
  }

  #send(bytes: Uint8Array): void {
    this.#current = bytes;
    this.#conn!.write(bytes).then(this.#wrote, this.#failed);
  }

  // Arrow functions: one per socket, not one per write.
  #wrote = (n: number): void => {
    if (this.#closed) return;
    const rest = this.#current!.subarray(n);
    if (rest.length > 0) return this.#send(rest);
    this.#current = null;
    this.#next();
  };

  #failed = (): void => {
    // The process is gone; its exit is seen on its pipes.
    this.close();
  };

  #next(): void {
    const bytes = this.#queue.shift();
    if (bytes !== undefined) this.#send(bytes);
  }

  #stopListening(): void {
    for (const conn of this.#greeting) closeQuietly(conn);
    this.#greeting.clear();
    if (!this.#listening) return;
    this.#listening = false;
    try {
      this.#listener.close();
    } catch {
      // Closed already.
    }
    try {
      Deno.removeSync(this.path);
    } catch {
      // Removed with the listener.
    }
  }
}

function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Closed already.
  }
}

/**
 * A control socket for a new process, or null where none can be made (no
 * Unix sockets on the platform, or a socket path too long for it): the
 * process then reads every frame on stdin, as the host and the process both
 * still can, only slower.
 *
 * @returns the socket, or null
 * @example
 * ```ts
 * import { openControlSocket } from "./sandbox_process.ts";
 * const control = openControlSocket();
 * control?.close();
 * ```
 */
export function openControlSocket(): ControlSocket | null {
  try {
    return new ControlSocket();
  } catch {
    return null;
  }
}

// The command line of a sandbox (or discovery) process, and how its death
// is told.

/** What {@link sandboxCommand} needs. */
interface SandboxCommandOptions {
  /** The grant's permission flags (see `grantToFlags`). */
  flags: string[];
  /** The grant (its `env` names are passed through, its `run` adds PATH). */
  grant: Permissions;
  /** Heap cap in MiB. */
  memoryMb: number;
  /** Working folder. */
  cwd: string;
  /** The script the process runs. @default the sandbox process main */
  main?: URL;
  /**
   * The host's control socket for this process ({@link ControlSocket}):
   * the process may connect to it, is told its path,
   * and has it bound in when confined. @default none: frames come on stdin
   */
  controlSocket?: string;
}

/** A command to spawn: program, arguments, environment, folder. */
export interface SandboxCommand {
  program: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Called once the process has exited (set by confinement). */
  release?: () => void;
  /** Unix sockets it connects to, bound in at the same path when confined. */
  sockets?: string[];
}

/** The main script of a call sandbox process. */
export const SANDBOX_MAIN: URL = new URL(
  "../../sandbox/process/main.ts",
  import.meta.url,
);

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

/**
 * The command that starts one sandbox process for a grant.
 *
 * @param options flags, grant, heap cap and folder
 * @returns the program, its arguments, a clean environment, and the folder
 * @example No network import, the grant's flags last before the script
 * ```ts
 * import { sandboxCommand } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * const cmd = sandboxCommand({ flags: ["--allow-read=/s"], grant: {}, memoryMb: 64, cwd: "/" });
 * assert.ok(cmd.args.includes("--no-remote"));
 * assert.equal(cmd.args.at(-2), "--allow-read=/s");
 * assert.equal(cmd.env.PATH, undefined);
 * ```
 */
export function sandboxCommand(options: SandboxCommandOptions): SandboxCommand {
  const url = options.main ?? SANDBOX_MAIN;
  const main = url.protocol === "file:" ? fileURLToPath(url) : url.href;
  const control = options.controlSocket;
  const flags = control === undefined
    ? options.flags
    : [...options.flags, ...socketFlags(control, options.flags)];
  return {
    program: Deno.execPath(),
    args: [
      ...denoArgs({
        workers: true,
        heapMb: options.memoryMb,
        singleThreaded: true,
        permissions: flags,
      }),
      main,
      ...(control === undefined ? [] : [controlArg(control)]),
    ],
    env: sandboxEnv(options.grant),
    cwd: options.cwd,
    ...(control === undefined ? {} : { sockets: [control] }),
  };
}

/**
 * The environment of a sandbox process: what Deno needs to find its cache,
 * plus the variables the grant names (and PATH when it may run binaries).
 *
 * @param grant the process's grant
 * @returns a clean environment
 * @example A clean environment
 * ```ts
 * import { sandboxEnv } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sandboxEnv({}).NO_COLOR, "1");
 * ```
 */
export function sandboxEnv(grant: Permissions): Record<string, string> {
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

/**
 * Spawns a sandbox command with piped stdio and a clean environment.
 * Never started: what confinement opened for it (its egress proxy's
 * listener and socket) is closed now, as its exit would have.
 *
 * @param command what to spawn
 * @returns the child
 * @throws {Error} when it cannot be spawned (after `release`)
 * @example A command that cannot start
 * ```ts
 * import { spawnSandbox } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * let released = false;
 * assert.throws(() => spawnSandbox({ program: "/nonexistent/deno", args: [],
 *   env: {}, cwd: "/", release: () => released = true }));
 * assert.ok(released);
 * ```
 */
export function spawnSandbox(command: SandboxCommand): Deno.ChildProcess {
  try {
    return new Deno.Command(command.program, {
      args: command.args,
      cwd: command.cwd,
      clearEnv: true,
      env: command.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    command.release?.();
    throw err;
  }
}

/**
 * Reads a sandbox (or discovery) process's stderr to its end, keeping only
 * the tail: enough to tell an out-of-memory abort from other deaths
 * ({@link ranOutOfMemory}), bounded however much the process writes.
 *
 * @param child the process
 * @returns the last 8192 characters it wrote to stderr
 * @example What a process wrote last
 * ```ts
 * import { stderrTail } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * const child = new Deno.Command(Deno.execPath(), {
 *   args: ["eval", "console.error('x'.repeat(9000) + 'end')"],
 *   stdout: "null", stderr: "piped",
 * }).spawn();
 * const tail = await stderrTail(child);
 * await child.status;
 * assert.equal(tail.length, 8192);
 * assert.ok(tail.endsWith("end\n"));
 * ```
 */
export async function stderrTail(child: Deno.ChildProcess): Promise<string> {
  const decoder = new TextDecoder();
  let tail = "";
  try {
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(
        -STDERR_TAIL,
      );
    }
  } catch {
    // Ignored: the process is going away.
  }
  return tail;
}

/**
 * Whether a process's exit was V8's heap-limit abort. That abort is a
 * SIGTRAP (exit code 133 through a shell); the stderr check tells it from a
 * debugger trap, and the signal keeps code printing "out of memory" from
 * faking one.
 *
 * @param status how the process exited
 * @param stderrTail the end of what it wrote to stderr
 * @returns true when it ran out of memory
 * @example A heap-limit trap, and an exit that only says so
 * ```ts
 * import { ranOutOfMemory } from "./sandbox_process.ts";
 * import assert from "node:assert/strict";
 * const trap = { success: false, code: 133, signal: "SIGTRAP" as const };
 * assert.equal(ranOutOfMemory(trap, "Fatal JavaScript out of memory"), true);
 * const exit = { success: false, code: 1, signal: null };
 * assert.equal(ranOutOfMemory(exit, "out of memory"), false);
 * ```
 */
export function ranOutOfMemory(
  status: Deno.CommandStatus,
  stderrTail: string,
): boolean {
  return (status.signal === "SIGTRAP" || status.code === 133) &&
    /out of memory|heap limit/i.test(stderrTail);
}

// The outcome of the operations a sandbox process's death cut short:
// `out_of_memory`, or a retryable `sandbox_crash`.
function exitOutcome(
  status: Deno.CommandStatus,
  stderrTail: string,
): SandboxOutcome & { ok: false } {
  return ranOutOfMemory(status, stderrTail)
    ? {
      ok: false,
      code: "out_of_memory",
      message: "Sandbox process ran out of memory",
      retryable: false,
    }
    : {
      ok: false,
      code: "sandbox_crash",
      message: `Sandbox process exited with code ${status.code}`,
      retryable: true,
    };
}
