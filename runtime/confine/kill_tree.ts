/**
 * Kills a confined process and the processes it started, for a process
 * under bubblewrap killed early (sandbox processes, discovery processes).
 *
 * @module
 */

/**
 * SIGKILL to a process and the processes it started. A confined process is
 * bubblewrap: killed in its first milliseconds, before the Deno it starts in
 * its namespaces asked to die with it (or before that child even ran Deno),
 * the child lives on, unseen: running the batch it was already sent (a
 * spinning module: forever) or stuck in bubblewrap's set-up, and holding the
 * output pipe open. So the process is stopped first (stopped, it cannot
 * start another), its children are listed from a table read after it
 * showed as stopped, then all are killed. Its child is the PID namespace's
 * first process: killing it ends everything inside. An unconfined process
 * (Deno, workers are threads) has no children; stopping it first costs
 * nothing.
 *
 * @param pid the process
 * @param gone whether it has already exited (its pid may be reused)
 * @example Kill a shell and the sleep it started
 * ```ts
 * import { killTree } from "./kill_tree.ts";
 * import assert from "node:assert/strict";
 * const child = new Deno.Command("sh", { args: ["-c", "sleep 60 & wait"] }).spawn();
 * let exited = false;
 * const status = child.status.finally(() => exited = true);
 * await killTree(child.pid, () => exited);
 * assert.equal((await status).signal, "SIGKILL");
 * ```
 */
export async function killTree(
  pid: number,
  gone: () => boolean,
): Promise<void> {
  const signal = (target: number, sig: Deno.Signal) => {
    try {
      Deno.kill(target, sig);
      return true;
    } catch {
      return false; // already gone
    }
  };
  if (gone() || !signal(pid, "SIGSTOP")) return;
  // A signal is taken when the process next leaves the kernel (a clone in
  // progress completes first): bounded wait for it to show as stopped.
  const end = Date.now() + 2000;
  let table = await processTable();
  while (
    !gone() && table !== null && Date.now() < end &&
    table.find((p) => p.pid === pid)?.stopped === false
  ) {
    await new Promise((r) => setTimeout(r, 1));
    table = await processTable();
  }
  if (gone()) return;
  // Listed again: a table is read one process at a time, so the one that
  // showed it stopped may have missed a child it made just before stopping
  // (read before the child existed). Stopped, it makes no more: a table
  // read from now on holds them all.
  table = await processTable() ?? table;
  if (gone()) return;
  const children = (table ?? []).filter((p) => p.ppid === pid);
  signal(pid, "SIGKILL");
  for (const child of children) signal(child.pid, "SIGKILL");
}

/** One process of {@link processTable}. */
interface ProcessRow {
  pid: number;
  ppid: number;
  stopped: boolean;
}

/**
 * Every process's parent and whether it is stopped: from `/proc` when this
 * process may read it (Deno asks for `--allow-all` there), else from `ps`
 * (with `--allow-run`, as the host runs); null when neither answers.
 */
async function processTable(): Promise<ProcessRow[] | null> {
  try {
    const rows: ProcessRow[] = [];
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
        const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        rows.push({
          pid: Number(entry.name),
          ppid: Number(ppid),
          stopped: state === "T" || state === "t",
        });
      } catch {
        // Gone meanwhile.
      }
    }
    return rows;
  } catch {
    // Not readable: ask ps.
  }
  try {
    const { stdout, success } = await new Deno.Command("ps", {
      args: ["-A", "-o", "pid=,ppid=,stat="],
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).output();
    if (!success) return null;
    return new TextDecoder().decode(stdout).split("\n").flatMap((line) => {
      const [pid, ppid, stat] = line.trim().split(/\s+/);
      if (!pid || !ppid || !stat) return [];
      return [{
        pid: Number(pid),
        ppid: Number(ppid),
        stopped: /^[Tt]/.test(stat),
      }];
    });
  } catch {
    return null;
  }
}
