import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";
import { processAlive, within } from "./_helpers.ts";

// A worker cannot reach postMessage, but it can dispatch a message event of
// its own making, and the bootstrap answers an "abort" with "aborted" for
// whatever id it names. Another worker's spinning operation must not be
// acknowledged that way: its process would be kept, spinning, forever.
const MODULE = `export default {
  kind: "tool",
  name: "forger",
  description: "Spins, or acknowledges aborts of operations not its own",
  async run(args) {
    if (args.do === "spin") for (;;);
    if (args.do === "nothing") return "ok";
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      for (let id = 1; id <= 200; id++) {
        const data = JSON.stringify({ t: "abort", id: String(id) });
        globalThis.dispatchEvent(new MessageEvent("message", { data }));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    return "ok";
  },
};
`;

Deno.test("a worker cannot acknowledge the abort of another worker's operation", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mod.ts`;
  await Deno.writeTextFile(path, MODULE);
  const sandbox = createSandbox({ cacheDir: null });
  const call = (what: string, sessionId: string, timeoutMs: number) =>
    sandbox.call({
      path,
      export: "default",
      version: "v1",
      args: { do: what },
      grant: { read: [dir] },
      timeoutMs,
      sessionId,
      callId: crypto.randomUUID(),
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent: () => {},
      callTool: () => Promise.reject(new Error("No tools in this test")),
      chat: () => Promise.reject(new Error("No LLM in this test")),
    });
  try {
    // The forger runs in one session's worker, the spin in another's, in
    // the same process (one per module and grant). The spinning session's
    // worker is warm first, so its operation surely runs before its timeout.
    assert.equal((await call("nothing", "s2", 10_000)).ok, true);
    const forger = call("forge", "s1", 10_000);
    const spin = await call("spin", "s2", 500);
    assert.equal(!spin.ok && spin.code, "timeout");
    const [proc] = sandbox.processes();
    assert.ok(proc);
    assert.deepEqual(await forger, { ok: true, value: "ok", truncated: false });
    // Unacknowledged, the spinning process is killed once idle.
    await within(proc.exited, 3000, "spinning process exit");
    assert.equal(await processAlive(proc.pid), false);
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
});
