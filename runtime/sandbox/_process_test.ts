/**
 * A confined sandbox process (bubblewrap) killed in its first milliseconds
 * leaves no process behind: every process whose command line names the
 * grant's folder (bwrap, and the Deno it starts in its namespaces) is gone
 * once `exited` resolves, and it resolves at all. The operation sent to it
 * spins at top level, so a process that outlived its bubblewrap would run
 * forever.
 *
 * Without working bubblewrap the test is ignored (its name says so).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Confiner } from "../confine/sandbox_processes.ts";
import { SANDBOX_MAIN } from "./spawn.ts";
import { loadBootstrap } from "./spawn.ts";
import { startProcess } from "./start_process.ts";
import { settlesWithin } from "../deadline.ts";
import { callOp, killNaming, leftAfter, TEST_LIMITS } from "./_test_support.ts";

const confiner = new Confiner("auto");
const status = await confiner.status();
const ROUNDS = 12;

/** What `ps` says of processes (parent, state, command), for a failure. */
async function states(pids: number[]): Promise<string> {
  if (pids.length === 0) return "";
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "pid=,ppid=,stat=,args=", "-p", pids.join(",")],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).trim().slice(0, 400);
}

type Kill =
  | "at once"
  | "at once, a spinning op sent"
  | "at spawn"
  | "after a spinning op";

// One confined process granted a fresh folder, killed as `kill` says;
// returns whether `exited` resolved within the bound and the processes
// left after it.
async function oneRound(
  kill: Kill,
  bootstrap: string,
): Promise<{ returned: boolean; left: number[]; states: string }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_early_kill_" });
  const path = join(dir, "spin.ts");
  await Deno.writeTextFile(path, "while (true) {}\nexport default {};\n");
  const wrap = await confiner.wrapperFor(SANDBOX_MAIN);
  try {
    const proc = startProcess(
      { ...TEST_LIMITS, cwd: dir },
      "k",
      { read: [dir] },
      bootstrap,
      wrap,
    );
    if (kill !== "at once" && kill !== "at spawn") {
      proc.lease();
      proc.start(callOp(path, {}), {
        onEvent() {},
        onRpc() {},
        onOutcome() {},
      });
    }
    if (kill === "at spawn") await Promise.resolve();
    // A few milliseconds in: bwrap is setting up, or Deno is starting.
    if (kill === "after a spinning op") {
      await new Promise((r) => setTimeout(r, 5));
    }
    proc.kill();
    const returned = await settlesWithin(proc.exited, 10_000);
    const left = await leftAfter(dir, 3_000);
    return { returned, left, states: await states(left) };
  } finally {
    // Whatever the test's own processes left is ended here, by pid.
    await killNaming(dir);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: status.active
    ? "a confined sandbox process killed in its first milliseconds leaves no process behind"
    : `a confined sandbox process killed early leaves no process behind [IGNORED: ${status.reason}]`,
  ignore: !status.active,
  async fn() {
    const bootstrap = await loadBootstrap();
    const kills: Kill[] = [
      "at once",
      "at once, a spinning op sent",
      "at spawn",
      "after a spinning op",
    ];
    const failures: string[] = [];
    for (const kill of kills) {
      for (let round = 0; round < ROUNDS; round++) {
        const { returned, left, states } = await oneRound(kill, bootstrap);
        if (!returned || left.length > 0) {
          failures.push(
            `killed ${kill}, round ${round}: ${
              returned ? "exited" : "never exited"
            }, left pids ${left.join(",") || "none"} ${states}`,
          );
        }
      }
    }
    assert.deepEqual(failures, []);
  },
});
