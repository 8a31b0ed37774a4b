/**
 * Host side of one discovery process: starts it with the union of its
 * batch's read paths as its only permission, sends the batch, closes its
 * stdin, and collects one answer per module. Each module's describe has its
 * own deadline, counted from the frame saying its worker starts; when one
 * passes, the process is killed (a spinning worker cannot be stopped any
 * other way) and the module is reported as timed out. What was not answered
 * when the process ended is reported as unfinished, for the caller to run
 * again elsewhere.
 *
 * @module
 */

import { makeNonce, readFrames } from "../../protocol/sandbox/frames.ts";
import {
  decodeDiscoveryFrame,
  type DiscoveryInit,
  type DiscoveryModule,
} from "../../protocol/sandbox/discovery.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import type { CommandWrapper } from "./confiner.ts";
import { sandboxCommand, spawnSandbox } from "./spawn.ts";
import { killTree } from "./_kill_tree.ts";
import { ranOutOfMemory } from "./spawn.ts";

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
  /** CPU time the process reported using, in ms (0 when it did not). */
  cpuMs: number;
}

/** What discovery processes cost this host so far (see {@link discoveryUsage}). */
export interface DiscoveryUsage {
  /** Discovery processes started. */
  processes: number;
  /** Modules they described (answered, by a worker). */
  modules: number;
  /** CPU time they reported, in ms (all threads, confined or not). */
  cpuMs: number;
}

const usage: DiscoveryUsage = { processes: 0, modules: 0, cpuMs: 0 };

/**
 * What every discovery process of this host has cost so far: a running
 * total (compare two readings). A confined process's CPU time is not
 * counted in the host's children's time by the kernel (it runs in its own
 * PID namespace), so each process reports its own before it exits.
 *
 * @returns a copy of the totals
 * @example A running total, never negative
 * ```ts
 * import { discoveryUsage } from "./_discovery_process.ts";
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
const MAIN = DISCOVERY_MAIN;
const STDERR_TAIL = 8192;

/**
 * Runs one batch in a discovery process.
 *
 * @param modules the batch (paths and each module's read paths)
 * @param options how to start the process, and the run's hooks
 * @returns the answers, and why it ended early if it did
 * @example Describe one module
 * ```ts
 * import { runDiscoveryProcess } from "./_discovery_process.ts";
 * import { loadBootstrap } from "./spawn.ts";
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
  const deny = options.deny.length > 0
    ? [
      `--deny-read=${options.deny.join(",")}`,
      `--deny-write=${options.deny.join(",")}`,
    ]
    : [];
  // The same command as every sandbox process, run with the discovery main.
  // The only permission: reading the batch's own files. No write, net, env,
  // run, sys or ffi, so a worker cannot get more than this either.
  const unconfined = {
    ...sandboxCommand({
      flags: [
        ...(union.length > 0 ? [`--allow-read=${union.join(",")}`] : []),
        ...deny,
      ],
      grant: {},
      memoryMb: options.memoryMb,
      cwd: options.cwd,
      main: MAIN,
    }),
    env: options.env,
  };
  const command = options.wrapper
    ? (await options.wrapper())(unconfined, { read: union })
    : unconfined;
  usage.processes++;
  const child = spawnSandbox(command);

  const answers = new Map<number, ModuleAnswer>();
  let cpuMs = 0;
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
      cpuMs = frame.cpuMs;
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
          const message = `Timed out after ${options.timeoutMs} ms`;
          settle(frame.i, { ok: false, code: "timeout", message });
          failure ??= { code: "timeout", message };
          kill();
        }, options.timeoutMs),
      );
      return;
    }
    clearTimeout(timers.get(frame.i));
    usage.modules++;
    settle(
      frame.i,
      frame.ok
        ? { ok: true, value: frame.value }
        : { ok: false, code: "tool_error", message: frame.message },
    );
  };

  let stderr = "";
  const drainStderr = async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of child.stderr) {
        stderr = (stderr + decoder.decode(chunk, { stream: true }))
          .slice(-STDERR_TAIL);
      }
    } catch {
      // The process is going away.
    }
  };
  const [status] = await Promise.all([
    child.status.finally(() => exited = true),
    readFrames(child.stdout, onFrame, {
      nonce,
      maxLineBytes: options.maxResultBytes + 65536,
    }).catch(() => {}),
    drainStderr(),
  ]);
  signal?.removeEventListener("abort", onAbort);
  clearTimeout(watchdog);
  for (const timer of timers.values()) clearTimeout(timer);
  if (failure === null && answers.size < modules.length) {
    failure = ranOutOfMemory(status, stderr)
      ? { code: "out_of_memory", message: "Discovery ran out of memory" }
      : {
        code: "sandbox_crash",
        message: `Discovery process exited with code ${status.code}`,
      };
  }
  usage.cpuMs += cpuMs;
  return { answers, failure, started, cpuMs };
}
