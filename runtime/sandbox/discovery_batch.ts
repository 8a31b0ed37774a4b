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
 * @module
 */

import type { ErrorCode } from "../../protocol/codes.ts";
import type { DiscoveryModule } from "../../protocol/sandbox/discovery.ts";
import {
  type BatchReport,
  type DiscoveryProcessOptions,
  type ModuleAnswer,
  runDiscoveryProcess,
} from "./_discovery_process.ts";

export type { DiscoveryUsage, ModuleAnswer } from "./_discovery_process.ts";
export { discoveryUsage } from "./_discovery_process.ts";

/** Options of {@link DiscoveryQueue}. */
export interface DiscoveryQueueOptions
  extends Omit<DiscoveryProcessOptions, "workers" | "bootstrap"> {
  /** The worker bootstrap as JavaScript, or how to load it (once). */
  bootstrap: string | (() => Promise<string>);
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
 * import { DiscoveryQueue } from "./discovery_batch.ts";
 * import { loadBootstrap } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * for (const name of ["a", "b"]) {
 *   await Deno.writeTextFile(`${dir}/${name}.ts`,
 *     `export default { kind: "tool", name: "${name}", run: () => 1 };`);
 * }
 * const bootstrap = await loadBootstrap();
 * const queue = new DiscoveryQueue({
 *   bootstrap, timeoutMs: 10_000, memoryMb: 256, maxResultBytes: 1 << 20,
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
    let loaded: Promise<string> | null = null;
    this.#bootstrap = typeof bootstrap === "string"
      ? () => Promise.resolve(bootstrap)
      : () => loaded ??= bootstrap();
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
    const answered = new Set<number>();
    const onAnswer = (i: number, answer: ModuleAnswer) => {
      if (answered.has(i)) return;
      answered.add(i);
      batch[i]!.resolve(answer);
    };
    const report = await this.#bootstrap().then((bootstrap) =>
      this.#runBatch(
        batch.map((j) => j.module),
        { ...this.#options, bootstrap, signal: this.#stop.signal, onAnswer },
      )
    ).catch((err): BatchReport => ({
      answers: new Map<number, ModuleAnswer>(),
      started: 0,
      cpuMs: 0,
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
      unanswered[0]!.resolve(soloFailure(failure));
    } else if (unanswered.length === 1) {
      this.#retries.push(unanswered);
    } else {
      const half = Math.ceil(unanswered.length / 2);
      this.#retries.push(unanswered.slice(0, half), unanswered.slice(half));
    }
  }
}

function soloFailure(
  failure: { code: ErrorCode; message: string },
): Extract<ModuleAnswer, { ok: false }> {
  if (failure.code === "out_of_memory") {
    return {
      ok: false,
      code: "out_of_memory",
      message: "Ran out of memory while loading",
    };
  }
  return { ok: false, code: "sandbox_crash", message: failure.message };
}

function closedAnswer(): ModuleAnswer {
  return { ok: false, code: "sandbox_crash", message: "Sandbox is closed" };
}
