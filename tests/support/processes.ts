/**
 * Finding and ending processes by a marker in their command line: how tests
 * check that nothing they started is left behind.
 *
 * @module
 */

import { processesNaming } from "../../runtime/confine/kill_tree.ts";

/** Waits (bounded) until no process names `marker`; returns those left. */
export async function leftAfter(
  marker: string,
  boundMs: number,
): Promise<number[]> {
  const end = Date.now() + boundMs;
  let left = await processesNaming(marker);
  while (left.length > 0 && Date.now() < end) {
    // A killed process is reaped within milliseconds: look again soon.
    await new Promise((r) => setTimeout(r, 20));
    left = await processesNaming(marker);
  }
  return left;
}

/** Ends, by pid, whatever process still names `marker` (a test's leftovers). */
export async function killNaming(marker: string): Promise<void> {
  for (const pid of await processesNaming(marker)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  await leftAfter(marker, 3_000);
}
