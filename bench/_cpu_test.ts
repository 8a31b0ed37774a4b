import assert from "node:assert/strict";
import process from "node:process";
import { treeCpuNs } from "./_cpu.ts";

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

Deno.test("treeCpuNs counts this process's work, and a child's", async () => {
  const before = await treeCpuNs(Deno.pid);
  if (Number.isNaN(before)) return; // no schedstat on this kernel
  // 50 ms of this thread's own CPU (not of wall time: on a loaded machine
  // the thread may wait for a core).
  const spin = cpuUs();
  while (cpuUs() - spin < 50_000) { /* busy */ }
  const mid = await treeCpuNs(Deno.pid);
  assert.ok(mid - before >= 45e6, `only ${(mid - before) / 1e6} ms counted`);
  // A busy child counts while it lives.
  const child = new Deno.Command("sh", {
    args: ["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5"],
  }).spawn();
  try {
    let after = mid;
    const until = performance.now() + 10_000;
    while (after - mid < 30e6 && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      after = await treeCpuNs(Deno.pid);
    }
    assert.ok(after - mid >= 30e6, `the child's work was not counted`);
  } finally {
    child.kill();
    await child.status;
  }
});
