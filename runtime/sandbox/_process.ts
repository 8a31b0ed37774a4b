/**
 * Host side of one sandbox process: spawns it with a grant's flags, frames
 * operations to it, routes its frames back to the waiting operations, and
 * turns its death into outcomes (`out_of_memory`, `sandbox_crash`).
 *
 * @module
 */

import { makeNonce, readFrames } from "../../protocol/sandbox/frames.ts";
import {
  decodeSandboxMessage,
  type HostMessage,
  type InitMessage,
  type OpMessage,
  type RpcMethod,
  type WorkerPermissions,
} from "../../protocol/sandbox/messages.ts";
import { type SandboxCommand, spawnSandbox } from "./spawn.ts";
import { killTree } from "../confine/kill_tree.ts";
import { exitOutcome } from "./process_exit.ts";
import { ReadHold } from "./read_hold.ts";
import type { ControlSocket } from "./control_socket.ts";
import type { ProcessWorkerStats, SandboxOutcome } from "./types.ts";

/** What a sandbox process reports of its workers. */
export type ProcessStats = ProcessWorkerStats;

/** What the pool needs to start a sandbox process. */
export interface ProcessOptions {
  /** The grant key it is routed by. */
  key: string;
  /** What to spawn (see `sandboxCommand`). */
  command: SandboxCommand;
  permissions: WorkerPermissions;
  bootstrap: string;
  spares: number;
  maxWarmWorkers: number;
  maxResultBytes: number;
  maxEventBytes: number;
  /**
   * Where frames go after the first (the command names its path): stdin
   * then carries only the init frame. @default none: every frame on stdin
   */
  control?: ControlSocket;
}

/** Callbacks of one operation. */
export interface OpHandlers {
  onEvent(kind: string, data: Record<string, unknown>): void;
  onRpc(rid: number, method: RpcMethod, payload: unknown): void;
  onOutcome(outcome: SandboxOutcome): void;
}

const STDERR_TAIL = 8192;
// Sessions remembered per process for telling it their end.
const MAX_SESSIONS = 8192;

/** One running sandbox process. */
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
  /** Whether the router sends new work here (false once unrouted). */
  routed = true;
  /** No new work once set; killed when its operations end. */
  tainted = false;
  /** Last time an operation started or ended (for LRU retirement). */
  lastUsed: number = performance.now();
  readonly #child: Deno.ChildProcess;
  readonly #readiness = Promise.withResolvers<void>();
  readonly #ops = new Map<string, OpHandlers>();
  readonly #stopWaiters = new Map<string, () => void>();
  readonly #statsWaiters = new Map<
    string,
    (stats: ProcessStats | null) => void
  >();
  #nextStats = 0;
  // Sessions whose operations it ran (warm workers may be kept for them),
  // so a session's end is told only to processes that saw the session.
  readonly #sessions = new Set<string>();
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #control: ControlSocket | null;
  readonly #encoder = new TextEncoder();
  #stderr = "";
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
  // The frame reader waits while no answer is awaited (read_hold.ts).
  readonly #reads: ReadHold;

  /** @param options the flags, init fields and environment */
  constructor(options: ProcessOptions) {
    this.key = options.key;
    this.#control = options.control ?? null;
    try {
      this.#child = spawnSandbox(options.command);
    } catch (err) {
      this.#control?.close();
      throw err;
    }
    this.#writer = this.#child.stdin.getWriter();
    const awaited = [this.#ops, this.#stopWaiters, this.#statsWaiters];
    this.#reads = new ReadHold(this, awaited, this.#child.status);
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
    const frames = this.#readFrames(
      nonce,
      options.maxResultBytes + options.maxEventBytes + 65536,
    );
    const stderr = this.#drainStderr();
    const status = this.#child.status.finally(() => this.#reaped = true);
    this.exited = Promise.all([status, frames, stderr]).then(([status]) =>
      this.#onExit(status)
    );
    // What confinement opened for it (its egress proxy socket) goes with it.
    const release = options.command.release;
    if (release) this.exited.then(release, release);
    const control = this.#control;
    if (control) this.exited.finally(() => control.close());
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
    return !this.#killed && !this.#dead && !this.tainted;
  }

  /**
   * Reserves the process for one operation about to start: it counts as
   * busy until {@link start} or {@link release}.
   */
  lease(): void {
    this.#leases++;
  }

  /** Gives back a lease that will not become an operation. */
  release(): void {
    if (this.#leases > 0) this.#leases--;
  }

  /**
   * Starts an operation.
   *
   * @param op the operation frame
   * @param handlers where its events, RPCs and outcome go
   */
  start(op: OpMessage, handlers: OpHandlers): void {
    this.release();
    if (this.#dead || this.#killed) {
      handlers.onOutcome({
        ok: false,
        code: "sandbox_crash",
        message: "Sandbox process is gone",
        retryable: true,
      });
      return;
    }
    // The frame goes out first; its outcome cannot arrive before this turn
    // ends, so the bookkeeping after it is off the call's path.
    this.send(op);
    this.#ops.set(op.id, handlers);
    this.lastUsed = performance.now();
    if (op.session !== "" && !this.#sessions.has(op.session)) {
      // Bounded: a session forgotten here loses its warm workers by LRU.
      if (this.#sessions.size >= MAX_SESSIONS) {
        this.#sessions.delete(this.#sessions.values().next().value!);
      }
      this.#sessions.add(op.session);
    }
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
  stats(session?: string): Promise<ProcessStats | null> {
    if (this.#dead) return Promise.resolve(null);
    const id = `stats-${++this.#nextStats}`;
    return new Promise((resolve) => {
      this.#statsWaiters.set(id, resolve);
      this.send(
        session === undefined
          ? { t: "stats", id }
          : { t: "stats", id, session },
      );
    });
  }

  /**
   * Forgets an operation (its outcome was decided by the host) and asks the
   * sandbox to abort it.
   *
   * @param id the operation id
   * @returns true when the worker answered (it is not spinning)
   */
  async abort(id: string, ackMs: number): Promise<boolean> {
    this.#ops.delete(id);
    if (this.#dead) return true;
    let stopped = false;
    const wait = new Promise<void>((resolve) => {
      this.#stopWaiters.set(id, () => {
        stopped = true;
        resolve();
      });
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((r) => timer = setTimeout(r, ackMs));
    this.send({ t: "abort", id });
    await Promise.race([wait, bound]);
    clearTimeout(timer);
    this.#stopWaiters.delete(id);
    return stopped;
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
    if (this.#dead) return;
    if (this.#killed) return;
    this.#killed = true;
    // Nothing more reaches its stdin: a main still waiting for frames reads
    // the end of it and exits.
    this.#writer.close().catch(() => {});
    this.#control?.close();
    // Killed within its first few milliseconds, bubblewrap can die before
    // its child asked to die with it: that child (Deno, or bwrap still
    // setting up) would live on, uncounted, running what it was sent and
    // holding stdout open, so `exited` would never resolve. killTree stops
    // bwrap first and kills its children with it.
    killTree(this.#child.pid, () => this.#reaped).catch(() => {});
  }

  #write(json: string): void {
    const bytes = this.#encoder.encode(json + "\n");
    if (this.#control !== null) this.#control.write(bytes);
    else this.#writer.write(bytes).catch(() => {});
    this.#reads.wrote();
  }

  async #readFrames(nonce: string, maxLineBytes: number): Promise<void> {
    try {
      await readFrames(
        this.#child.stdout,
        (raw) => this.#onFrame(raw),
        { nonce, maxLineBytes, hold: this.#reads.hold },
      );
    } catch {
      // The pipe broke: the exit handler answers what is still pending.
    }
  }

  #onFrame(raw: unknown): void {
    const msg = decodeSandboxMessage(raw);
    if (msg === null) return;
    if (msg.t === "ready") {
      this.isReady = true;
      this.#readiness.resolve();
      return;
    }
    if (msg.t === "stopped") {
      this.#stopWaiters.get(msg.id)?.();
      return;
    }
    if (msg.t === "stats") {
      const answer = this.#statsWaiters.get(msg.id);
      this.#statsWaiters.delete(msg.id);
      answer?.({ workers: msg.workers, sessionWorkers: msg.sessionWorkers });
      return;
    }
    const handlers = this.#ops.get(msg.id);
    if (!handlers) return;
    if (msg.t === "event") handlers.onEvent(msg.kind, msg.data);
    else if (msg.t === "rpc") handlers.onRpc(msg.rid, msg.method, msg.payload);
    else {
      this.#ops.delete(msg.id);
      this.lastUsed = performance.now();
      handlers.onOutcome(
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
  #onExit(status: Deno.CommandStatus): number {
    this.#dead = true;
    const failure = exitOutcome(status, this.#stderr);
    this.#readiness.reject(new Error(failure.message));
    for (const handlers of this.#ops.values()) handlers.onOutcome(failure);
    this.#ops.clear();
    for (const wake of this.#stopWaiters.values()) wake();
    for (const answer of this.#statsWaiters.values()) answer(null);
    this.#statsWaiters.clear();
    return status.code;
  }

  async #drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.#child.stderr) {
        // Keep only a tail, for telling an OOM from other deaths.
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true }))
          .slice(-STDERR_TAIL);
      }
    } catch {
      // Ignored: the process is going away.
    }
  }
}

/** The first frame a process reads: its nonce, bootstrap and limits. */
function initMessage(nonce: string, options: ProcessOptions): InitMessage {
  return {
    t: "init",
    nonce,
    bootstrap: options.bootstrap,
    permissions: options.permissions,
    spares: options.spares,
    maxWarmWorkers: options.maxWarmWorkers,
    maxResultBytes: options.maxResultBytes,
    maxEventBytes: options.maxEventBytes,
  };
}
