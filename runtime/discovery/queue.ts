/**
 * Discovery at scale: modules waiting to be described are gathered into
 * batches, and each batch runs in a discovery process of its own (a few at
 * once), where every module loads in a Worker limited to its own files.
 *
 * Why batches are safe enough, and what is left (Deno 2.9.6):
 * - The process's flags grant only reading the union of its batch's module
 *   files (or folders); each worker gets only its own module's. Nothing is
 *   writable, and there is no net, env, run, sys or ffi.
 * - Workers share the process's file descriptors, and `node:fs` on a raw fd
 *   skips Deno's path checks. So the host writes the whole batch (paths
 *   only, nothing secret) as one line and closes stdin before any worker
 *   starts: fd 0 holds nothing. On fd 1 a worker can write, but frames carry
 *   a per-process nonce it never sees, so it cannot forge an answer; junk
 *   that breaks a real frame only makes that module run again.
 * - A module that spins cannot be stopped by `terminate()`: each describe
 *   has its own deadline, and when one passes the process is killed, the
 *   spinner gets a timeout, and the rest of its batch runs again in a fresh
 *   process. A death without a culprit (heap exhaustion aborts the whole
 *   process, an exit, a crash) splits the unanswered rest in halves, each
 *   run again, until the module at fault fails alone.
 * - Left exposed: while a module loads, code of the other modules of its
 *   batch runs in the same process. With raw-fd `node:fs` it could race to
 *   read a file the process has open for a sibling (its source while Deno
 *   loads it, or a file the sibling reads at top level), and it can slow
 *   its siblings down (CPU, memory) up to its deadline. Answers are always
 *   attributed to the right module, and a hostile module costs the others
 *   at most some re-runs.
 *
 * One discovery process ({@link runDiscoveryProcess}) starts with the union
 * of its batch's read paths as its only permission, gets the batch, closes
 * its stdin, and sends one answer per module. Each module's describe has
 * its own deadline, counted from the frame saying its worker starts; when
 * one passes, the process is killed and the module is reported as timed
 * out. What was not answered when the process ended is reported as
 * unfinished, for the queue to run again elsewhere.
 *
 * @module
 */

import type { ErrorCode } from "../../protocol/codes.ts";
import {
  decodeDiscoveryFrame,
  type DiscoveryInit,
  type DiscoveryModule,
  makeNonce,
  maxFrameBytes,
  readFrames,
} from "../../protocol/sandbox/pipe.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import {
  ranOutOfMemory,
  sandboxCommand,
  spawnSandbox,
  stderrTail,
} from "../sandbox/sandbox_process.ts";
import { killOutliversOnExit, killTree } from "../confine/kill_tree.ts";
import { grantToFlags } from "../sandbox/grants.ts";

/** Options of {@link DiscoveryQueue}. */
export interface DiscoveryQueueOptions
  extends Omit<DiscoveryProcessOptions, "workers" | "bootstrap"> {
  /**
   * How to load the worker bootstrap (called for each batch:
   * `loadBootstrap` keeps what it read, not a failure).
   */
  bootstrap: () => Promise<string>;
  /**
   * Discovery processes running at once. Starting a Worker blocks its
   * process's main thread, so one process keeps about one core busy.
   * @default the number of cores, at most 8
   */
  processes?: number;
  /** Modules loading at once in one process. @default 3 */
  workers?: number;
  /** Most modules in one process. @default 128 */
  batchSize?: number;
  /** How long the queue waits for more modules before starting a batch. @default 5 */
  gatherMs?: number;
  /** Runs one batch (tests replace it). @default runDiscoveryProcess */
  runBatch?: typeof runDiscoveryProcess;
}

interface Job {
  module: DiscoveryModule;
  resolve: (answer: ModuleAnswer) => void;
}

/**
 * Describes modules in batches (see the module doc for the security model).
 *
 * @example Describe two modules
 * ```ts
 * import { DiscoveryQueue } from "./queue.ts";
 * import { loadBootstrap } from "../sandbox/bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * for (const name of ["a", "b"]) {
 *   await Deno.writeTextFile(`${dir}/${name}.ts`,
 *     `export default { kind: "tool", name: "${name}", run: () => 1 };`);
 * }
 * const queue = new DiscoveryQueue({
 *   bootstrap: loadBootstrap, timeoutMs: 10_000, memoryMb: 256, maxResultBytes: 1 << 20,
 *   deny: [], cwd: dir, env: {},
 * });
 * const answers = await Promise.all(["a", "b"].map((name) =>
 *   queue.describe({ path: `${dir}/${name}.ts`, read: [`${dir}/${name}.ts`] })
 * ));
 * assert.ok(answers.every((a) => a.ok));
 * await queue.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class DiscoveryQueue {
  /** Bound on one module's answer (characters of JSON). */
  readonly maxResultBytes: number;
  readonly #options: Omit<DiscoveryProcessOptions, "bootstrap">;
  readonly #bootstrap: () => Promise<string>;
  readonly #runBatch: typeof runDiscoveryProcess;
  readonly #processes: number;
  readonly #batchSize: number;
  readonly #gatherMs: number;
  readonly #pending: Job[] = [];
  // Batches to run again after their process died: first in line.
  readonly #retries: Job[][] = [];
  readonly #stop = new AbortController();
  readonly #running = new Set<Promise<void>>();
  #gather: ReturnType<typeof setTimeout> | undefined;
  #gathered = false;

  /** @param options how processes start, and how many run at once */
  constructor(options: DiscoveryQueueOptions) {
    const { bootstrap, runBatch, ...rest } = options;
    this.maxResultBytes = options.maxResultBytes;
    this.#options = { ...rest, workers: options.workers ?? 3 };
    this.#runBatch = runBatch ?? runDiscoveryProcess;
    this.#bootstrap = bootstrap;
    this.#processes = Math.max(
      1,
      options.processes ?? Math.min(8, navigator.hardwareConcurrency || 2),
    );
    this.#batchSize = Math.max(1, options.batchSize ?? 128);
    this.#gatherMs = options.gatherMs ?? 5;
  }

  /**
   * Describes one module, in a batch with whatever else is waiting.
   *
   * @param module the module's path and what its worker may read
   * @returns its definitions (as its worker's `describe` gave them), or why not
   */
  describe(module: DiscoveryModule): Promise<ModuleAnswer> {
    if (this.#stop.signal.aborted) {
      return Promise.resolve(closedAnswer());
    }
    return new Promise<ModuleAnswer>((resolve) => {
      this.#pending.push({ module, resolve });
      // Start once arrivals pause (or a batch is full).
      this.#gathered = false;
      clearTimeout(this.#gather);
      this.#gather = setTimeout(() => {
        this.#gathered = true;
        this.#dispatch();
      }, this.#gatherMs);
      if (this.#pending.length >= this.#batchSize) this.#dispatch();
    });
  }

  /** Kills the running processes; waiting modules are answered as closed. */
  async close(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#gather);
    for (const job of this.#pending.splice(0)) job.resolve(closedAnswer());
    for (const batch of this.#retries.splice(0)) {
      for (const job of batch) job.resolve(closedAnswer());
    }
    await Promise.all(this.#running);
  }

  #dispatch(): void {
    while (this.#running.size < this.#processes && !this.#stop.signal.aborted) {
      let batch = this.#retries.shift();
      if (!batch) {
        const ready = this.#pending.length >= this.#batchSize ||
          (this.#gathered && this.#pending.length > 0);
        if (!ready) return;
        // Once arrivals pause, split what waits evenly over free processes.
        const free = this.#processes - this.#running.size;
        const size = this.#gathered
          ? Math.min(this.#batchSize, Math.ceil(this.#pending.length / free))
          : this.#batchSize;
        batch = this.#pending.splice(0, size);
      }
      const run = this.#run(batch).finally(() => {
        this.#running.delete(run);
        this.#dispatch();
      });
      this.#running.add(run);
    }
  }

  async #run(batch: Job[]): Promise<void> {
    // A job's promise keeps its first answer: one told early through
    // onAnswer and again in the report settles it once.
    const onAnswer = (i: number, answer: ModuleAnswer) =>
      batch[i]!.resolve(answer);
    const report = await this.#bootstrap().then((bootstrap) =>
      this.#runBatch(
        batch.map((j) => j.module),
        { ...this.#options, bootstrap, signal: this.#stop.signal, onAnswer },
      )
    ).catch((err): BatchReport => ({
      answers: new Map<number, ModuleAnswer>(),
      started: 0,
      failure: {
        code: "sandbox_crash" as const,
        message: `Cannot start a discovery process: ${(err as Error).message}`,
      },
    }));
    const unanswered: Job[] = [];
    batch.forEach((job, i) => {
      const answer = report.answers.get(i);
      if (answer) onAnswer(i, answer);
      else unanswered.push(job);
    });
    if (unanswered.length === 0) return;
    const failure: { code: ErrorCode; message: string } = report.failure ?? {
      code: "sandbox_crash",
      message: "Discovery process ended early",
    };
    if (this.#stop.signal.aborted) {
      for (const job of unanswered) job.resolve(closedAnswer());
    } else if (report.started === 0) {
      // No module code ran: the process itself failed (bad flags, no deno).
      for (const job of unanswered) job.resolve({ ok: false, ...failure });
    } else if (failure.code === "timeout") {
      // The spinner has its answer; the others were only its neighbours.
      this.#retries.push(unanswered);
    } else if (batch.length === 1) {
      // Alone in its process: the failure is this module's own.
      unanswered[0]!.resolve({ ok: false, ...failure });
    } else if (unanswered.length === 1) {
      this.#retries.push(unanswered);
    } else {
      const half = Math.ceil(unanswered.length / 2);
      this.#retries.push(unanswered.slice(0, half), unanswered.slice(half));
    }
  }
}

function closedAnswer(): ModuleAnswer {
  return { ok: false, code: "sandbox_crash", message: "Sandbox is closed" };
}

// --- one discovery process ----------------------------------------------

/** How one discovery process is started. */
export interface DiscoveryProcessOptions {
  /** The worker bootstrap as JavaScript (see `loadBootstrap`). */
  bootstrap: string;
  /** Modules loading at once inside the process. */
  workers: number;
  /** Deadline of one module's describe, from its worker's start. */
  timeoutMs: number;
  /** Heap cap of the process (each worker's isolate too), in MiB. */
  memoryMb: number;
  /** Bound on one module's answer (characters of JSON). */
  maxResultBytes: number;
  /** Paths passed as `--deny-read`/`--deny-write`. */
  deny: string[];
  cwd: string;
  env: Record<string, string>;
  /** Wraps the process's command (OS confinement). @default none */
  wrapper?: () => Promise<CommandWrapper>;
}

/** Per-run hooks of {@link runDiscoveryProcess}. */
export interface BatchHooks {
  /** Kills the process; unanswered modules are reported unfinished. */
  signal?: AbortSignal;
  /** Told each answer as it arrives (by index in the batch). */
  onAnswer?: (i: number, answer: ModuleAnswer) => void;
}

/** One module's answer. */
export type ModuleAnswer =
  | { ok: true; value: unknown }
  | { ok: false; code: ErrorCode; message: string };

/** What a discovery process gave for its batch. */
export interface BatchReport {
  /** Answers by index in the batch (modules that finished, or timed out). */
  answers: Map<number, ModuleAnswer>;
  /**
   * Why the process ended before answering every module, when it did:
   * `timeout` (a module's deadline passed: that module is in `answers`),
   * `out_of_memory`, or `sandbox_crash`.
   */
  failure: { code: ErrorCode; message: string } | null;
  /**
   * How many modules were started. A process that died before starting
   * any ran no module code: its failure is nobody's in the batch.
   */
  started: number;
}

/** What discovery processes cost this host so far (see {@link discoveryUsage}). */
export interface DiscoveryUsage {
  /** Discovery processes started. */
  processes: number;
  /** CPU time they reported, in ms (all threads, confined or not). */
  cpuMs: number;
}

const usage: DiscoveryUsage = { processes: 0, cpuMs: 0 };

/**
 * What every discovery process of this host has cost so far: a running
 * total (compare two readings). A confined process's CPU time is not
 * counted in the host's children's time by the kernel (it runs in its own
 * PID namespace), so each process reports its own before it exits.
 *
 * @returns a copy of the totals
 * @example A running total, never negative
 * ```ts
 * import { discoveryUsage } from "./queue.ts";
 * import assert from "node:assert/strict";
 * assert.ok(discoveryUsage().cpuMs >= 0);
 * ```
 */
export function discoveryUsage(): DiscoveryUsage {
  return { ...usage };
}

/** The main script of a discovery process. */
export const DISCOVERY_MAIN: URL = new URL(
  "../../sandbox/process/discovery_main.ts",
  import.meta.url,
);

/**
 * Runs one batch in a discovery process.
 *
 * @param modules the batch (paths and each module's read paths)
 * @param options how to start the process, and the run's hooks
 * @returns the answers, and why it ended early if it did
 * @example Describe one module
 * ```ts
 * import { runDiscoveryProcess } from "./queue.ts";
 * import { loadBootstrap } from "../sandbox/bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/a.ts`;
 * await Deno.writeTextFile(path, `export default { kind: "tool", name: "a" };`);
 * const report = await runDiscoveryProcess([{ path, read: [path] }], {
 *   bootstrap: await loadBootstrap(),
 *   workers: 1, timeoutMs: 10_000, memoryMb: 128, maxResultBytes: 1 << 20,
 *   deny: [], cwd: dir, env: {},
 * });
 * assert.equal(report.failure, null);
 * assert.equal(report.answers.get(0)?.ok, true);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
// Long (about 170 lines): one process's whole life (start, the batch sent,
// each module's deadline, the watchdog, frames, stderr, the exit read) is
// one set of state shared by the closures inside; split, it would be passed
// around whole.
export async function runDiscoveryProcess(
  modules: DiscoveryModule[],
  options: DiscoveryProcessOptions & BatchHooks,
): Promise<BatchReport> {
  const { signal, onAnswer } = options;
  const nonce = makeNonce();
  const union = [...new Set(modules.flatMap((m) => m.read))].sort();
  // The same command as every sandbox process, run with the discovery main.
  // The only permission: reading the batch's own files. No write, net, env,
  // run, sys or ffi, so a worker cannot get more than this either.
  const unconfined = {
    ...sandboxCommand({
      flags: grantToFlags({ read: union }, options.deny),
      grant: {},
      memoryMb: options.memoryMb,
      cwd: options.cwd,
      main: DISCOVERY_MAIN,
    }),
    env: options.env,
  };
  // Names this process (and what it starts) alone in the process list, so
  // what it leaves behind can be found (`killOutliversOnExit`). Not the
  // nonce: that proves its frames, and the module could read its args.
  const marker = `skillbox-discovery-${makeNonce()}`;
  unconfined.args.push(marker);
  const command = options.wrapper
    ? (await options.wrapper())(unconfined, { read: union })
    : unconfined;
  usage.processes++;
  const child = spawnSandbox(command);

  const answers = new Map<number, ModuleAnswer>();
  const settle = (i: number, answer: ModuleAnswer) => {
    answers.set(i, answer);
    onAnswer?.(i, answer);
  };
  let failure: BatchReport["failure"] = null;
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  let exited = false;
  let killed = false;
  const writer = child.stdin.getWriter();
  const kill = () => {
    if (killed || exited) return;
    killed = true;
    // Nothing more reaches its stdin; a main still waiting for the batch
    // reads the end of it and exits.
    writer.close().catch(() => {});
    killTree(child.pid, () => exited).catch(() => {});
  };
  // Bubblewrap killed by another in its first milliseconds leaves its child
  // holding stdout: the frames below would never end.
  killOutliversOnExit(child, () => killed, marker);
  const onAbort = () => {
    failure ??= { code: "sandbox_crash", message: "Discovery was stopped" };
    kill();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();

  const init: DiscoveryInit = {
    t: "discover",
    nonce,
    bootstrap: options.bootstrap,
    modules,
    workers: options.workers,
    maxResultBytes: options.maxResultBytes,
  };
  // One line, then end of stream: fd 0 holds nothing for a worker to read.
  // Stopped already: the batch is never sent.
  if (!killed) {
    writer.write(new TextEncoder().encode(JSON.stringify(init) + "\n"))
      .then(() => writer.close())
      .catch(() => {});
  }

  // A process that stops sending frames (its main thread stuck) is killed
  // like a spinner, with no culprit named.
  let started = 0;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const watch = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      failure ??= {
        code: "sandbox_crash",
        message: "Discovery process stopped answering",
      };
      kill();
    }, options.timeoutMs * 2);
  };
  watch();
  const onFrame = (raw: unknown) => {
    const frame = decodeDiscoveryFrame(raw, modules.length);
    if (frame === null) return;
    if (frame.t === "done") {
      usage.cpuMs += frame.cpuMs;
      return;
    }
    if (answers.has(frame.i)) return;
    watch();
    if (frame.t === "started") {
      started++;
      timers.set(
        frame.i,
        setTimeout(() => {
          if (answers.has(frame.i)) return;
          const message = `Timed out after ${Math.round(options.timeoutMs)} ms`;
          settle(frame.i, { ok: false, code: "timeout", message });
          failure ??= { code: "timeout", message };
          kill();
        }, options.timeoutMs),
      );
      return;
    }
    clearTimeout(timers.get(frame.i));
    settle(
      frame.i,
      frame.ok
        ? { ok: true, value: frame.value }
        : { ok: false, code: "tool_error", message: frame.message },
    );
  };

  const [status, , stderr] = await Promise.all([
    child.status.finally(() => exited = true),
    readFrames(child.stdout, onFrame, {
      nonce,
      // The sandbox bounds a definition in characters, the reader in bytes.
      maxLineBytes: maxFrameBytes(options.maxResultBytes),
    }).catch(() => {}),
    stderrTail(child),
  ]);
  signal?.removeEventListener("abort", onAbort);
  clearTimeout(watchdog);
  for (const timer of timers.values()) clearTimeout(timer);
  if (failure === null && answers.size < modules.length) {
    failure = ranOutOfMemory(status, stderr)
      ? { code: "out_of_memory", message: "Ran out of memory while loading" }
      : {
        code: "sandbox_crash",
        message: `Discovery process exited with code ${status.code}`,
      };
  }
  return { answers, failure, started };
}
