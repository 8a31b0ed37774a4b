import assert from "node:assert/strict";
import { processesRss, processRss } from "./metrics.ts";

// `deno task test` runs with the host task's permissions, where Deno will
// not read /proc: the figure must come from ps there, not be 0.
Deno.test("a live process's RSS is known under the host's permissions, a gone one is left out", async () => {
  const own = processRss(Deno.pid);
  assert.ok(own > 10 * 1024 * 1024, `${own} bytes`);
  const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
  try {
    const both = processesRss([Deno.pid, child.pid, 2 ** 22 + 12345]);
    assert.ok((both.get(child.pid) ?? 0) > 0, JSON.stringify([...both]));
    assert.equal(both.has(2 ** 22 + 12345), false);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  assert.deepEqual(processesRss([]), new Map());
});
