/**
 * A confined discovery process (bubblewrap) stopped in its first
 * milliseconds, or timed out at once, leaves no process behind: every
 * process whose command line names the batch's folder (bwrap, and the Deno
 * it starts in its namespaces) is gone once `runDiscoveryProcess` returns,
 * and it returns at all. The module spins at top level, so a process that
 * outlived its bubblewrap would run forever.
 *
 * Without working bubblewrap the test is ignored (its name says so).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DISCOVERY_MAIN, runDiscoveryProcess } from "./_discovery_process.ts";
import { Confiner } from "./confiner.ts";
import type { CommandWrapper } from "./confiner.ts";
import { loadBootstrap } from "./spawn.ts";
import { settlesWithin } from "../deadline.ts";
import { killNaming, leftAfter } from "./_test_support.ts";

const confiner = new Confiner("auto");
const status = await confiner.status();
const ROUNDS = 12;

type Stop = "aborted before" | "aborted at spawn" | "timed out at once";

// One batch of a spinning module, stopped as `stop` says; returns whether
// it returned within the bound and the processes left after it.
async function oneRound(
  stop: Stop,
  bootstrap: string,
): Promise<{ returned: boolean; left: number[] }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_early_kill_" });
  const path = join(dir, "spin.ts");
  await Deno.writeTextFile(path, "while (true) {}\nexport default {};\n");
  const abort = new AbortController();
  if (stop === "aborted before") abort.abort();
  const wrapper = async (): Promise<CommandWrapper> => {
    const wrap = await confiner.wrapperFor(DISCOVERY_MAIN);
    return (command, grant) => {
      const wrapped = wrap(command, grant);
      // Spawned right after this returns: abort as soon as it is.
      if (stop === "aborted at spawn") queueMicrotask(() => abort.abort());
      return wrapped;
    };
  };
  try {
    const run = runDiscoveryProcess([{ path, read: [path] }], {
      bootstrap,
      workers: 1,
      timeoutMs: stop === "timed out at once" ? 1 : 30_000,
      memoryMb: 128,
      maxResultBytes: 1 << 20,
      deny: [],
      cwd: dir,
      env: {},
      wrapper,
      signal: abort.signal,
    });
    const returned = await settlesWithin(run, 10_000);
    return { returned, left: await leftAfter(dir, 3_000) };
  } finally {
    // Whatever the test's own processes left is ended here, by pid.
    await killNaming(dir);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: status.active
    ? "a confined discovery process stopped in its first milliseconds leaves no process behind"
    : `a confined discovery process stopped early leaves no process behind [IGNORED: ${status.reason}]`,
  ignore: !status.active,
  async fn() {
    const bootstrap = await loadBootstrap();
    const stops: Stop[] = [
      "aborted before",
      "aborted at spawn",
      "timed out at once",
    ];
    const failures: string[] = [];
    for (const stop of stops) {
      for (let round = 0; round < ROUNDS; round++) {
        const { returned, left } = await oneRound(stop, bootstrap);
        if (!returned || left.length > 0) {
          failures.push(
            `${stop}, round ${round}: ${
              returned ? "returned" : "never returned"
            }, left pids ${left.join(",") || "none"}`,
          );
        }
      }
    }
    assert.deepEqual(failures, []);
  },
});
