/**
 * CPU time of a process tree, for the benches: user + system time of a
 * process and all its descendants (a host and its sandbox processes, bwrap
 * included), from /proc. CPU time hardly moves with the other load on a
 * shared machine, where wall-clock medians do.
 *
 * @module
 */

import { cpuUsage } from "node:process";

const TICKS_PER_SECOND = 100;

/**
 * CPU time spent so far by a process and its live descendants, in ms:
 * utime + stime, plus cutime + cstime (children that ended and were
 * waited for). Resolution: one clock tick (10 ms) per process, so measure
 * many calls at a time.
 *
 * @param root the process id
 * @returns milliseconds of CPU
 * @example This process
 * ```ts
 * import { treeCpuMs } from "./_proc_cpu.ts";
 * import assert from "node:assert/strict";
 * assert.ok(treeCpuMs(Deno.pid) >= 0);
 * ```
 */
export function treeCpuMs(root: number): number {
  let ticks = 0;
  const seen = new Set<number>();
  const visit = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const fields = statFields(pid);
    if (fields === null) return; // Ended meanwhile.
    for (const i of [11, 12, 13, 14]) ticks += Number(fields[i] ?? 0);
    for (const child of childrenOf(pid)) visit(child);
  };
  visit(root);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * CPU time spent so far by one process alone (all its threads, none of
 * its children), in ms: utime + stime. Resolution: one clock tick.
 *
 * @param pid the process id
 * @returns milliseconds of CPU, NaN when the process is gone
 * @example This process
 * ```ts
 * import { processCpuMs } from "./_proc_cpu.ts";
 * import assert from "node:assert/strict";
 * assert.ok(processCpuMs(Deno.pid) >= 0);
 * ```
 */
export function processCpuMs(pid: number): number {
  const fields = statFields(pid);
  if (fields === null) return NaN;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

// The fields of /proc/<pid>/stat after the name (which, in parentheses,
// may hold spaces), or null when the process is gone.
function statFields(pid: number): string[] | null {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      const text = Deno.readTextFileSync(
        `/proc/${pid}/task/${task.name}/children`,
      );
      for (const id of text.trim().split(/\s+/)) {
        if (id !== "") children.push(Number(id));
      }
    }
  } catch {
    // Ended meanwhile.
  }
  return children;
}

/**
 * CPU time of this process so far (user + system), in ms, at microsecond
 * resolution.
 *
 * @returns milliseconds of CPU
 * @example
 * ```ts
 * import { selfCpuMs } from "./_proc_cpu.ts";
 * import assert from "node:assert/strict";
 * assert.ok(selfCpuMs() > 0);
 * ```
 */
export function selfCpuMs(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1000;
}
