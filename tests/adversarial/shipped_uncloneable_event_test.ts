import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";

// A progress message is passed on as given, and structured clone refuses
// a function: the event batch holding it cannot be posted. The worker
// must not wait for an acknowledgement of a batch it never sent.
const MODULE = `export default {
  kind: "tool",
  name: "uncloneable",
  description: "Reports progress with a message that cannot be cloned",
  run(args, ctx) {
    if (args.send) {
      try { ctx.progress(1, () => 1); } catch { /* the module's business */ }
      ctx.progress(2, "after");
    }
    return "ok";
  },
};
`;

Deno.test("an event structured clone refuses does not wedge its worker", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mod.ts`;
  await Deno.writeTextFile(path, MODULE);
  const sandbox = createSandbox({ cacheDir: null });
  const events: unknown[] = [];
  const call = (send: boolean) =>
    sandbox.call({
      path,
      export: "default",
      version: "v1",
      args: { send },
      grant: { read: [dir] },
      timeoutMs: 3000,
      sessionId: "s1",
      callId: crypto.randomUUID(),
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent: (kind, data) => events.push([kind, data]),
      callTool: () => Promise.reject(new Error("No tools in this test")),
      chat: () => Promise.reject(new Error("No LLM in this test")),
    });
  try {
    const ok = { ok: true, value: "ok", truncated: false };
    assert.deepEqual(await call(true), ok);
    // The same warm worker answers the next call too.
    assert.deepEqual(await call(false), ok);
    assert.deepEqual(events, [
      ["log", {
        level: "warn",
        message: "Dropped an event that cannot be sent",
      }],
      ["progress", { pct: 2, message: "after" }],
    ]);
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
});
