/**
 * Memory of a process tree, for the benches: a confined sandbox process is
 * bwrap with the Deno process inside it.
 *
 * @module
 */

/**
 * RSS of a process and all its descendants, in MB (`ps`, not /proc: Deno
 * wants --allow-all for /proc/<pid>).
 *
 * @param root the process id
 * @returns the tree's resident memory in MB
 * @example This process
 * ```ts
 * import { treeRssMb } from "./_rss.ts";
 * import assert from "node:assert/strict";
 * assert.ok((await treeRssMb(Deno.pid)) > 1);
 * ```
 */
export async function treeRssMb(root: number): Promise<number> {
  const out = await new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,rss="],
  }).output();
  const rows = new TextDecoder().decode(out.stdout).trim().split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number));
  const tree = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of rows) {
      if (tree.has(ppid!) && !tree.has(pid!)) {
        tree.add(pid!);
        grew = true;
      }
    }
  }
  let kb = 0;
  for (const [pid, , rss] of rows) if (tree.has(pid!)) kb += rss!;
  return kb / 1024;
}
