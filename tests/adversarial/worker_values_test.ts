import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";

// Structured clone carries what JSON cannot (a BigInt, a cycle): the main
// thread must answer for it, not throw and end every call in its process.
const MODULE = `export default {
  kind: "tool",
  name: "unjsonable",
  description: "Hands the main thread values JSON cannot hold",
  async run(args, ctx) {
    if (args.send === "bigint") ctx.progress(1, 10n);
    if (args.send === "cycle") { const o = {}; o.o = o; ctx.progress(1, o); }
    if (args.send === "rpc") {
      return await ctx.tools.call("x", { a: 1n }).catch((e) => e.message);
    }
    if (args.send === "message") {
      // Past the bootstrap's own String(): the worker's globals are its.
      globalThis.String = (value) => value;
      const error = new Error("x");
      error.message = { toString: 1, valueOf: 1 };
      throw error;
    }
    if (args.send === "wait") await new Promise((r) => setTimeout(r, 1000));
    return "ok";
  },
};
`;

Deno.test("the sandbox process survives worker values that JSON or String() refuse", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mod.ts`;
  await Deno.writeTextFile(path, MODULE);
  const sandbox = createSandbox({ cacheDir: null });
  const logs: unknown[] = [];
  const call = (send: string, sessionId: string, timeoutMs = 10_000) =>
    sandbox.call({
      path,
      export: "default",
      version: "v1",
      args: { send },
      grant: { read: [dir] },
      timeoutMs,
      sessionId,
      callId: crypto.randomUUID(),
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent: (kind, data) => kind === "log" && logs.push(data.message),
      callTool: () => Promise.reject(new Error("No tools in this test")),
      chat: () => Promise.reject(new Error("No LLM in this test")),
    });
  try {
    // Another session's call in the same process is in flight throughout.
    const other = call("wait", "s2");
    for (const send of ["bigint", "cycle"]) {
      assert.deepEqual(await call(send, "s1"), {
        ok: true,
        value: "ok",
        truncated: false,
      });
    }
    assert.deepEqual(logs, [
      "Dropped an event that is not JSON",
      "Dropped an event that is not JSON",
    ]);
    assert.deepEqual(await call("rpc", "s1"), {
      ok: true,
      value: "Request is not JSON",
      truncated: false,
    });
    // A message String() refuses is read as "(not text)": the call fails
    // with that, alone.
    const unreadable = await call("message", "s3", 5_000);
    assert.ok(!unreadable.ok, JSON.stringify(unreadable));
    assert.match(unreadable.message, /\(not text\)/);
    assert.deepEqual(await other, { ok: true, value: "ok", truncated: false });
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
});
