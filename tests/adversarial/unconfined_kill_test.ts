/**
 * Unconfined (no bubblewrap: no PID namespace ends what a sandbox process
 * started), a module granted `run` starts a process tree several levels
 * deep, with one level forking in a loop and one starting a session whose
 * orphan lives on; its call times out. Killing its process ends the whole
 * tree, not just the process and its direct child.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";
import { killNaming, leftAfter } from "../support/processes.ts";

// Every process of the tree runs this script, so its path (in a fresh
// folder) names them all; each prints its role on the module's pipe.
const TREE = `d=$(dirname "$0")
echo "$1"
case "$1" in
  root) sh "$0" child & wait ;;
  child) sh "$0" grandchild & sh "$0" forker & sh "$0" session & wait ;;
  grandchild) sh "$0" great & wait ;;
  great) sh "$0" idle & read x < "$d/fifo" ;;
  forker)
    i=0
    while [ $i -lt 200 ]; do sh "$0" idle & i=$((i+1)); done
    wait ;;
  session) setsid sh "$0" leader & wait ;;
  leader) ( sh "$0" orphan & ) ; read x < "$d/fifo" ;;
  orphan | idle) read x < "$d/fifo" ;;
esac
`;

// Starts the tree, waits until each kind of process has said it runs (the
// forker a few times over), then spins: only its timeout ends the call.
const MODULE = `export default {
  kind: "tool",
  name: "process_tree",
  description: "Starts a process tree, then spins",
  async run(args) {
    const child = new Deno.Command("/bin/sh", {
      args: [args.script, "root"],
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    // Never released: the tree keeps a reader on its pipe.
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    const count = {};
    const ready = () =>
      ["great", "forker", "orphan"].every((role) => count[role] > 0) &&
      count.idle >= 8;
    let rest = "";
    while (!ready()) {
      const { value, done } = await reader.read();
      if (done) throw new Error("The tree's pipe closed");
      const lines = (rest + value).split("\\n");
      rest = lines.pop();
      for (const role of lines) count[role] = (count[role] ?? 0) + 1;
    }
    while (true) {
      // Spin: only killing the process stops this.
    }
  },
};
`;

/** What `ps` says of processes (parent, state, command), for a failure. */
async function states(pids: number[]): Promise<string> {
  if (pids.length === 0) return "";
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "pid=,ppid=,pgid=,sid=,stat=,args=", "-p", pids.join(",")],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).trim().slice(0, 1000);
}

Deno.test("an unconfined process's whole tree dies when its call times out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_unconfined_kill_" });
  const sandbox = createSandbox({ cacheDir: null, confinement: "off" });
  try {
    const script = join(dir, "tree.sh");
    await Deno.writeTextFile(script, TREE);
    await Deno.writeTextFile(join(dir, "mod.ts"), MODULE);
    const fifo = await new Deno.Command("mkfifo", {
      args: [join(dir, "fifo")],
    }).output();
    assert.ok(fifo.success, "mkfifo failed");
    assert.equal((await sandbox.confinement()).active, false);
    const outcome = await sandbox.call({
      path: join(dir, "mod.ts"),
      export: "default",
      version: "v1",
      args: { script },
      grant: { run: ["/bin/sh"] },
      timeoutMs: 5_000,
      sessionId: "s1",
      callId: crypto.randomUUID(),
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent() {},
      callTool: () => Promise.reject(new Error("No tools in this test")),
      chat: () => Promise.reject(new Error("No LLM in this test")),
    });
    assert.equal(
      !outcome.ok && outcome.code,
      "timeout",
      JSON.stringify(outcome),
    );
    // The sandbox process (its flags name the folder) and every process
    // of the tree.
    const left = await leftAfter(dir, 5_000);
    assert.deepEqual(left, [], await states(left));
  } finally {
    await sandbox.close();
    // Whatever a failing run left is ended here, by pid.
    await killNaming(dir);
    await Deno.remove(dir, { recursive: true });
  }
});
