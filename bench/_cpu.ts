/**
 * CPU time of a process tree, for the benches: the bench process with all
 * its threads, and every process below it (sandbox processes, confined ones
 * inside bwrap, the floor's child). Read by `sh` from /proc (Deno asks for
 * --allow-all to read /proc itself), so only before and after a phase.
 *
 * @module
 */

import { cpuUsage } from "node:process";

// Prints the summed on-CPU nanoseconds of every thread of `$1` and of its
// descendants, leaving out this script's own processes.
const SCRIPT = `
ps -eo pid=,ppid= | awk -v r="$1" -v me="$$" '
  { parent[$1] = $2 }
  END {
    tree[r] = 1
    do {
      grew = 0
      for (p in parent) {
        if ((parent[p] in tree) && !(p in tree) && p != me && parent[p] != me) {
          tree[p] = 1; grew = 1
        }
      }
    } while (grew)
    for (p in tree) print p
  }' | while read -r p; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
  awk '{ s += $1 } END { printf "%.0f\\n", s }'
`;

/**
 * On-CPU time of a process, its threads and its descendants, from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds, not clock ticks).
 *
 * @param root the process id
 * @returns nanoseconds, or NaN where /proc has no schedstat
 * @example This process
 * ```ts
 * import { treeCpuNs } from "./_cpu.ts";
 * import assert from "node:assert/strict";
 * const ns = await treeCpuNs(Deno.pid);
 * assert.ok(Number.isNaN(ns) || ns > 0);
 * ```
 */
export function treeCpuNs(root: number): Promise<number> {
  return nanoseconds(SCRIPT, root);
}

// Runs one of the scripts above for `pid`; NaN when it printed no time.
async function nanoseconds(script: string, pid: number): Promise<number> {
  const out = await new Deno.Command("sh", {
    args: ["-c", script, "sh", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const ns = Number(new TextDecoder().decode(out.stdout).trim());
  return out.success && ns > 0 ? ns : NaN;
}

/**
 * On-CPU time of one process alone (all its threads, none of its
 * children), from /proc/<pid>/task/<tid>/schedstat.
 *
 * @param pid the process id
 * @returns nanoseconds, or NaN where /proc has no schedstat
 * @example This process
 * ```ts
 * import { processCpuNs } from "./_cpu.ts";
 * import assert from "node:assert/strict";
 * const ns = await processCpuNs(Deno.pid);
 * assert.ok(Number.isNaN(ns) || ns > 0);
 * ```
 */
export function processCpuNs(pid: number): Promise<number> {
  return nanoseconds(PROCESS_SCRIPT, pid);
}

const PROCESS_SCRIPT = `cat /proc/"$1"/task/*/schedstat 2>/dev/null |
  awk '{ s += $1 } END { printf "%.0f\\n", s }'`;

/**
 * CPU time of this process so far (user + system, all its threads).
 *
 * @returns nanoseconds
 * @example
 * ```ts
 * import { selfCpuNs } from "./_cpu.ts";
 * import assert from "node:assert/strict";
 * assert.ok(selfCpuNs() > 0);
 * ```
 */
export function selfCpuNs(): number {
  const { user, system } = cpuUsage();
  return (user + system) * 1000;
}
