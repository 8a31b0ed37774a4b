import assert from "node:assert/strict";
import { join } from "node:path";
import { killOutliversOnExit, killTree } from "./kill_tree.ts";
import { settlesWithin } from "../deadline.ts";
import { killNaming, leftAfter } from "../../tests/support/processes.ts";

// An unconfined process (no PID namespace to end with it) killed with what
// it started: the tree is several levels deep, one level forks in a loop
// while it is being killed, and one calls setsid and leaves an orphan in
// its session. Every process of a tree runs one script whose path (in a
// fresh folder) names them all, and prints its role and pid on the root's
// stdout, so the test knows each pid and sees the pipe close only when
// every holder of it is gone.
//
// Each tree shares the test's process group and session (Deno.Command does
// not start a new one): a kill by the root's group would end this test.

const TREE = `d=$(dirname "$0")
echo "$1 $$"
case "$1" in
  root) sh "$0" child & wait ;;
  child) sh "$0" grandchild & sh "$0" forker & wait ;;
  grandchild) sh "$0" great & wait ;;
  great) sh "$0" idle & read x < "$d/fifo" ;;
  forker)
    # Forks as fast as it can, bounded, while the kill goes on.
    i=0
    while [ $i -lt 400 ]; do sh "$0" idle & i=$((i+1)); done
    wait ;;
  session) setsid sh "$0" leader & wait ;;
  leader)
    # A subshell starts the orphan and exits: the orphan's parent is init,
    # its session and group the leader's.
    ( sh "$0" orphan & )
    read x < "$d/fifo" ;;
  orphan | idle) read x < "$d/fifo" ;;
esac
`;

/** A tree started from the script above, its processes' roles and pids. */
interface Tree {
  dir: string;
  child: Deno.ChildProcess;
  exited: () => boolean;
  /** pid → role, every line read so far. */
  seen: Map<number, string>;
  /** Resolves when the root's stdout ends (every holder of it is gone). */
  closed: Promise<void>;
  /** Resolves once `count` lines of each role were read (caller bounds it). */
  saw(counts: Record<string, number>): Promise<void>;
}

async function startTree(root: string): Promise<Tree> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_kill_tree_" });
  await Deno.writeTextFile(join(dir, "tree.sh"), TREE);
  // Readers block on opening it: nobody ever writes.
  const fifo = await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] })
    .output();
  assert.ok(fifo.success, "mkfifo failed");
  const child = new Deno.Command("sh", {
    args: [join(dir, "tree.sh"), root],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let exited = false;
  child.status.finally(() => exited = true);
  const seen = new Map<number, string>();
  const count = (role: string) =>
    [...seen.values()].filter((r) => r === role).length;
  const has = (counts: Record<string, number>) =>
    Object.entries(counts).every(([role, n]) => count(role) >= n);
  const waiters: Array<{ counts: Record<string, number>; resolve(): void }> =
    [];
  const closed = (async () => {
    let rest = "";
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        const [role, pid] = line.split(" ");
        seen.set(Number(pid), role!);
        for (const w of waiters.filter((w) => has(w.counts))) w.resolve();
      }
    }
  })();
  return {
    dir,
    child,
    exited: () => exited,
    seen,
    closed,
    saw: (counts) =>
      has(counts)
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ counts, resolve })),
  };
}

/** The pids of `pids` still alive (zombies count as gone), from `ps`. */
async function alive(pids: number[]): Promise<string[]> {
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "pid=,ppid=,stat=,args=", "-p", pids.join(",")],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^\d+\s+\d+\s+Z/.test(line));
}

/** The command line of a process's parent, from `ps`. */
async function parentArgs(pid: number): Promise<string> {
  const ps = async (field: string, of: string) => {
    const { stdout } = await new Deno.Command("ps", {
      args: ["-o", `${field}=`, "-p", of],
      stdout: "piped",
    }).output();
    return new TextDecoder().decode(stdout).trim();
  };
  return await ps("args", await ps("ppid", String(pid)));
}

function summary(lines: string[]): string {
  return `${lines.length}: ${lines.slice(0, 4).join("; ")}`;
}

async function killed(tree: Tree): Promise<void> {
  await killTree(tree.child.pid, tree.exited);
  assert.equal((await tree.child.status).signal, "SIGKILL");
  // The pipe closes only when the last process holding it is gone.
  assert.ok(
    await settlesWithin(tree.closed, 10_000),
    `the tree's stdout is still open; alive: ${
      summary(await alive([...tree.seen.keys()]))
    }`,
  );
  assert.deepEqual(await leftAfter(tree.dir, 5_000), []);
  assert.deepEqual(await alive([...tree.seen.keys()]), []);
}

async function withTree(
  root: string,
  fn: (tree: Tree) => Promise<void>,
): Promise<void> {
  const tree = await startTree(root);
  try {
    await fn(tree);
  } finally {
    // Whatever a failing run left is ended here, by pid.
    await killNaming(tree.dir);
    await tree.closed.catch(() => {});
    await Deno.remove(tree.dir, { recursive: true });
  }
}

Deno.test("killTree() ends every level of an unconfined tree, one forking in a loop", async () => {
  await withTree("root", async (tree) => {
    // The forker has started a few of its 400 processes: it is killed
    // while it still forks.
    const ready = tree.saw({ great: 1, forker: 1, idle: 8 });
    assert.ok(await settlesWithin(ready, 10_000), "the tree did not start");
    await killed(tree);
    const roles = new Set(tree.seen.values());
    for (const role of ["root", "child", "grandchild", "great", "forker"]) {
      assert.ok(roles.has(role), `no ${role} in ${[...roles].join(", ")}`);
    }
  });
});

Deno.test("killTree() ends the orphan of a member that started a session", async () => {
  await withTree("session", async (tree) => {
    const ready = tree.saw({ leader: 1, orphan: 1 });
    assert.ok(await settlesWithin(ready, 10_000), "the tree did not start");
    const orphan = [...tree.seen].find(([, role]) => role === "orphan")![0];
    // Found by its session only once the subshell that started it is gone.
    const end = Date.now() + 10_000;
    while ((await parentArgs(orphan)).includes(tree.dir)) {
      assert.ok(Date.now() < end, "the orphan's parent did not exit");
    }
    await killed(tree);
  });
});

// A process that exits by itself, or is killed by another, leaving what it
// started on its stdout: that pipe never ends until they are gone. What it
// leaves is a sleep named by a marker (sleep adds up its arguments).
Deno.test("killOutliversOnExit() ends what a process left holding its stdout", async () => {
  const marker = `0.000000${Math.floor(Math.random() * 1e9)}`;
  try {
    const child = new Deno.Command("sh", {
      args: ["-c", `sleep 60 ${marker} & read _ || true`],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    killOutliversOnExit(child, () => false, marker);
    await child.stdin.close();
    assert.equal(await settlesWithin(child.output(), 10_000), true);
    assert.deepEqual(await leftAfter(marker, 3_000), []);
  } finally {
    await killNaming(marker);
  }
});
