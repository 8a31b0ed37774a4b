/**
 * Kills a sandbox or discovery process killed early, and every process it
 * started: confined (bubblewrap) or not.
 *
 * @module
 */

import { commandOutput } from "./confine.ts";

// Bounds of the walk: past either, what was found so far is killed.
const STOP_BOUND_MS = 2000;
const MAX_PROCESSES = 8192;

/**
 * SIGKILL to a process and every process it started. The whole tree is
 * stopped first (a stopped process starts no other), level by level: the
 * process list is read and each new descendant in it stopped; the states
 * of those it did not show stopped are read until they are (every thread:
 * a thread busy in a clone completes it before it stops; one seen running
 * again, continued by another, is stopped again); the list is read again;
 * until a list read after all showed stopped shows none new. Then all are
 * killed. Bounded: 2 s and 8192 processes, past which what was found is
 * killed. The process itself is stopped before this returns its promise:
 * close its pipes after calling it, or an unconfined main that reads their
 * end may exit first and leave what it started to init, out of reach.
 *
 * Descendants are those by parentage, plus the members of any process group
 * or session a descendant started (`setsid`): the orphan a session leader's
 * subshell left behind is found by its session. Never the host's own group
 * or session, which an unconfined process shares (Deno starts no new one).
 * Not found: a process whose parent exited before the kill and that stayed
 * in the host's group (a double fork re-parents it to init); only a PID
 * namespace holds those, and bubblewrap gives one.
 *
 * Confined, the process is bubblewrap and its child the first process of a
 * PID namespace: killing that child ends everything inside, so a descendant
 * in another PID namespace than the process is killed without being stopped
 * or waited for, and what it started is not walked. That keeps the confined
 * case at two list reads, as before the tree was walked. Killed in its first
 * milliseconds, bubblewrap can die before the Deno it starts asked to die
 * with it: stopped first, it cannot, and that child is killed with it.
 *
 * @param pid the process
 * @param gone whether it has already exited (its pid may be reused)
 * @example Kill a shell and the sleep its subshell started
 * ```ts
 * import { killTree } from "./kill_tree.ts";
 * import assert from "node:assert/strict";
 * const child = new Deno.Command("sh", {
 *   args: ["-c", "(sleep 60 & wait) & wait"],
 *   stdout: "piped",
 * }).spawn();
 * let exited = false;
 * child.status.finally(() => exited = true);
 * await killTree(child.pid, () => exited);
 * // Its stdout ends once the sleep, which holds it too, is gone.
 * assert.equal((await child.output()).signal, "SIGKILL");
 * ```
 */
export async function killTree(
  pid: number,
  gone: () => boolean,
): Promise<void> {
  if (gone() || !signal(pid, "SIGSTOP")) return;
  const end = Date.now() + STOP_BOUND_MS;
  // Every descendant found: whether it is in another PID namespace than
  // the process (undefined: not known yet).
  const members = new Map<number, boolean | undefined>([[pid, false]]);
  let tree: number[] = [];
  // Whether every member outside another namespace showed stopped before
  // the next list is read (so that list misses none of their children).
  let stopped = false;
  // The first list says which namespace each process is in (then read for
  // the new ones only: the column costs a read of every process's links).
  let first = true;
  while (!gone()) {
    const table = await listProcesses(first);
    if (table === null || gone()) break;
    const rows = new Map(table.map((row) => [row.pid, row]));
    const own = first ? rows.get(pid)?.pidns ?? null : null;
    first = false;
    tree = treeOf(table, pid, members);
    const fresh = new Set(tree.filter((p) => !members.has(p)));
    if (fresh.size === 0 && stopped) break;
    for (const p of fresh) {
      const ns = rows.get(p)?.pidns ?? null;
      const inner = own !== null && ns !== null && ns !== own;
      members.set(p, inner ? true : undefined);
      if (!inner) signal(p, "SIGSTOP");
    }
    // Those this list showed stopped (one thread, signalled before) stay
    // so; the others' states are read until they are.
    const pending = [...members].filter(([p, inner]) => {
      if (inner) return false;
      const row = rows.get(p);
      return fresh.has(p) || row === undefined || !row.stopped ||
        row.threads !== 1;
    }).map(([p]) => p);
    stopped = pending.length === 0 ||
      await waitStopped(pid, pending, members, end);
    if (!stopped || members.size >= MAX_PROCESSES) break;
  }
  if (!gone()) signal(pid, "SIGKILL");
  // Not the process when it is gone: its pid may be another's now; the
  // others were stopped, or end with their namespace.
  for (const p of tree) if (p !== pid) signal(p, "SIGKILL");
}

/**
 * Once `child` has exited, unless `killed()` says the caller killed it
 * (with {@link killTree}), SIGKILL to every process whose command line
 * still names `marker` (a path made for this child alone): what it left
 * behind. Bubblewrap killed by another in its first milliseconds leaves
 * its child running (still waiting for bubblewrap to finish the set-up, or
 * the Deno it starts, before that asked to die with bubblewrap) in a PID
 * namespace no list of descendants reaches once bubblewrap is gone, and
 * that child holds its stdout open: the caller's wait for the end of it
 * would never end.
 *
 * @param child the process, just spawned
 * @param killed whether the caller killed it
 * @param marker what only its command line and its children's name
 * @example A shell that exits leaving a sleep named by a marker
 * ```ts
 * import { killOutliversOnExit } from "./kill_tree.ts";
 * import assert from "node:assert/strict";
 * // sleep adds up its arguments: the marker is a few more nanoseconds.
 * const marker = `0.000000${Math.floor(Math.random() * 1e9)}`;
 * const child = new Deno.Command("sh", {
 *   args: ["-c", `sleep 60 ${marker} & read _ || true`],
 *   stdin: "piped", stdout: "piped",
 * }).spawn();
 * killOutliversOnExit(child, () => false, marker);
 * await child.stdin.close();
 * // Its stdout ends: the sleep that held it is gone.
 * assert.equal((await child.output()).code, 0);
 * ```
 */
export function killOutliversOnExit(
  child: Deno.ChildProcess,
  killed: () => boolean,
  marker: string,
): void {
  child.status.then(async () => {
    if (killed()) return;
    // What it left may not show in the first list: a discovery process's
    // Deno, killed by another early, was missed by a list taken at once in
    // 3 to 4 runs of 10 of its test and found by one taken a few
    // milliseconds later. Each list takes that long; a few in a row, until
    // one finds something, cover that window.
    for (let look = 0; look < OUTLIVER_LOOKS; look++) {
      if (await killProcessesNaming(marker) > 0) return;
    }
  }).catch(() => {});
}

// Lists `killOutliversOnExit` takes, one after another, until one finds
// what the process left (only when it ended without the caller's kill).
const OUTLIVER_LOOKS = 4;

/**
 * SIGKILL to every process whose command line includes `marker` (never the
 * host): what a process that was to name its run alone left behind.
 *
 * @param marker what the command lines must include
 * @returns how many were signalled
 * @example A sleep ended by its argument
 * ```ts
 * import { killProcessesNaming } from "./kill_tree.ts";
 * import assert from "node:assert/strict";
 * const marker = String(60 + Math.random());
 * const child = new Deno.Command("sleep", { args: [marker] }).spawn();
 * assert.equal(await killProcessesNaming(marker), 1);
 * assert.equal((await child.status).signal, "SIGKILL");
 * ```
 */
export async function killProcessesNaming(marker: string): Promise<number> {
  const signalled = new Set<number>();
  // One killed between the list and its signal may have started another
  // meanwhile (bwrap forks its namespace's first process, naming the same):
  // look again until a list shows none not signalled yet.
  for (let pass = 0; pass < MAX_SWEEPS; pass++) {
    const fresh = (await processesNaming(marker)).filter((pid) =>
      !signalled.has(pid)
    );
    if (fresh.length === 0) break;
    for (const pid of fresh) if (signal(pid, "SIGKILL")) signalled.add(pid);
  }
  return signalled.size;
}

// Lists `killProcessesNaming` takes at most: each one past the first only
// finds what a process killed by the one before started first.
const MAX_SWEEPS = 8;

/**
 * Pids of the processes whose command line includes `marker`, from `ps`
 * (Deno asks for `--allow-all` to read `/proc`, which the host does not
 * have); none when `ps` fails.
 *
 * @param marker what the command lines must include
 * @returns their pids
 * @example A sleep found by its argument
 * ```ts
 * import { processesNaming } from "./kill_tree.ts";
 * import assert from "node:assert/strict";
 * const marker = String(60 + Math.random());
 * const child = new Deno.Command("sleep", { args: [marker] }).spawn();
 * assert.deepEqual(await processesNaming(marker), [child.pid]);
 * child.kill("SIGKILL");
 * await child.status;
 * ```
 */
export async function processesNaming(marker: string): Promise<number[]> {
  const lines = await ps(["-A", "-ww", "-o", "pid=,args="]) ?? [];
  return lines.filter((words) => words.slice(1).join(" ").includes(marker))
    .map(([pid]) => Number(pid));
}

function signal(target: number, sig: Deno.Signal): boolean {
  // Never the host, whatever a table says.
  if (target === Deno.pid) return false;
  try {
    Deno.kill(target, sig);
    return true;
  } catch {
    return false; // already gone
  }
}

/**
 * The process and its descendants in a list (at most
 * {@link MAX_PROCESSES}), not walking past one known to be in another PID
 * namespace (what it started ends with it).
 */
function treeOf(
  table: ProcessRow[],
  pid: number,
  members: Map<number, boolean | undefined>,
): number[] {
  if (!table.some((row) => row.pid === pid)) return [];
  const host = table.find((row) => row.pid === Deno.pid);
  const byParent = Map.groupBy(table, (row) => row.ppid);
  const byGroup = Map.groupBy(table, (row) => row.pgid);
  const bySession = Map.groupBy(table, (row) => row.sid);
  const tree = [pid];
  const seen = new Set(tree);
  for (let i = 0; i < tree.length && tree.length < MAX_PROCESSES; i++) {
    const member = tree[i]!;
    if (members.get(member) === true) continue;
    const found = [
      ...byParent.get(member) ?? [],
      // A group or session whose id is a member's pid is one it started
      // (a pid is not reused while a group or session holds it).
      ...(member !== host?.pgid ? byGroup.get(member) ?? [] : []),
      ...(member !== host?.sid ? bySession.get(member) ?? [] : []),
    ];
    for (const { pid: p } of found) {
      if (seen.has(p) || p === Deno.pid) continue;
      seen.add(p);
      tree.push(p);
    }
  }
  return tree.slice(0, MAX_PROCESSES);
}

/**
 * Reads the states of `pending` members until each shows stopped (bounded
 * by `end`; one seen running is sent SIGSTOP again, as another member may
 * have continued it), and learns which are in another PID namespace than
 * `pid` (those need not stop). Forgets those that exited. Whether all
 * showed stopped.
 */
async function waitStopped(
  pid: number,
  pending: number[],
  members: Map<number, boolean | undefined>,
  end: number,
): Promise<boolean> {
  for (;;) {
    // Namespaces asked for only when one is not known (they cost).
    const unknown = pending.some((p) => members.get(p) === undefined);
    const states = await processStates([pid, ...pending], unknown);
    if (states === null) return false;
    const own = states.get(pid)?.pidns ?? null;
    const running: number[] = [];
    for (const p of pending) {
      const state = states.get(p);
      if (state === undefined) {
        members.delete(p); // exited
        continue;
      }
      if (members.get(p) === undefined) {
        const inner = own !== null && state.pidns !== null &&
          state.pidns !== own;
        members.set(p, inner);
        if (inner) continue;
      }
      if (!state.stopped) running.push(p);
    }
    if (running.length === 0) return true;
    if (Date.now() >= end) return false;
    for (const p of running) signal(p, "SIGSTOP");
    pending = running;
    // A signal is taken when the process next leaves the kernel (a clone
    // in progress completes first): look again shortly.
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** One process of {@link listProcesses}. */
interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Its main thread stopped, or a zombie. */
  stopped: boolean;
  /** NaN when unknown. */
  threads: number;
  /** Its PID namespace, null when not asked for or unknown. */
  pidns: string | null;
}

/** One process of {@link processStates}. */
interface ProcessState {
  /** Every thread stopped, or a zombie: it starts nothing more. */
  stopped: boolean;
  /** Its PID namespace, null when not asked for or unknown. */
  pidns: string | null;
}

const STOPPED = /^[TtZX]/;

/**
 * Every process's parent, group, session and main thread's state (and PID
 * namespace when `withNs`), from `ps`: Deno asks for `--allow-all` to read
 * `/proc`, which the host's own permissions do not give. Null when `ps`
 * does not answer.
 */
async function listProcesses(withNs: boolean): Promise<ProcessRow[] | null> {
  // `-` for a namespace ps may not read; a ps without a column is asked
  // again without it.
  const fields = "pid=,ppid=,pgid=,sid=,stat=";
  const lines =
    await ps(["-A", "-o", fields + (withNs ? ",nlwp=,pidns=" : ",nlwp=")]) ??
      await ps(["-A", "-o", fields]);
  return lines?.flatMap(([pid, ppid, pgid, sid, stat, threads, pidns]) =>
    pid && ppid && pgid && sid && stat
      ? [{
        pid: Number(pid),
        ppid: Number(ppid),
        pgid: Number(pgid),
        sid: Number(sid),
        stopped: STOPPED.test(stat),
        threads: Number(threads),
        pidns: pidns && pidns !== "-" ? pidns : null,
      }]
      : []
  ) ?? null;
}

/**
 * The state (of every thread) and PID namespace (when `withNs`) of each of
 * `pids` still alive, read from `ps` as {@link listProcesses} reads; null
 * when it does not answer.
 */
async function processStates(
  pids: number[],
  withNs: boolean,
): Promise<Map<number, ProcessState> | null> {
  const states = new Map<number, ProcessState>();
  // One line a thread (-L). A ps without -L or the column is asked for
  // the main threads' states.
  const list = pids.join(",");
  const fields = withNs ? "pid=,stat=,pidns=" : "pid=,stat=";
  const lines = await ps(["-L", "-p", list, "-o", fields]) ??
    await ps(["-p", list, "-o", "pid=,stat="]);
  if (lines === null) return null;
  for (const [pid, stat, pidns] of lines) {
    if (!pid || !stat) continue;
    const state = states.get(Number(pid));
    if (state) state.stopped &&= STOPPED.test(stat);
    else {
      states.set(Number(pid), {
        stopped: STOPPED.test(stat),
        pidns: pidns && pidns !== "-" ? pidns : null,
      });
    }
  }
  return states;
}

// The words of each line `ps` prints; null when it fails or prints nothing
// (the process itself is always asked for, so nothing means a failure).
async function ps(args: string[]): Promise<string[][] | null> {
  const lines = (await commandOutput("ps", args))?.split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((words) => words[0] !== "") ?? [];
  return lines.length > 0 ? lines : null;
}
