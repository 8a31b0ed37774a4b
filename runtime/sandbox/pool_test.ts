import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createSandbox } from "./pool.ts";
import type { SandboxHooks } from "./types.ts";

const ADD = fileURLToPath(
  new URL("../../tests/fixtures/sandbox/add/mod.ts", import.meta.url),
);

function call(over: Record<string, unknown> = {}) {
  return {
    path: ADD,
    export: "default",
    version: "v1",
    args: { a: 1, b: 2 },
    grant: {},
    timeoutMs: 5000,
    sessionId: "s",
    callId: "c",
    config: {},
    metadata: {},
    isolation: "warm" as const,
    ...over,
  };
}

const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

Deno.test("call() shares one process per grant and runs per-call isolation too", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const outcomes = await Promise.all([
      sandbox.call(call(), hooks),
      sandbox.call(call({ sessionId: "other" }), hooks),
      sandbox.call(call({ isolation: "per-call" }), hooks),
    ]);
    for (const o of outcomes) {
      assert.deepEqual(o, { ok: true, value: { sum: 3 }, truncated: false });
    }
    assert.equal(sandbox.processes().length, 1);
  } finally {
    await sandbox.close();
  }
});

Deno.test("call() retires idle processes beyond the limit, least recently used first", async () => {
  const sandbox = createSandbox({ cacheDir: null, maxIdleProcesses: 1 });
  try {
    const dir = await Deno.makeTempDir();
    await sandbox.call(call(), hooks);
    const [first] = sandbox.processes();
    // A different grant needs a different process.
    await sandbox.call(call({ grant: { read: [dir] } }), hooks);
    await first!.exited;
    assert.equal(sandbox.processes().length, 1);
    await Deno.remove(dir);
  } finally {
    await sandbox.close();
  }
});

Deno.test("ctx.tools.call reaches hooks.callTool and gets its answer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/caller`);
    await Deno.writeTextFile(
      `${dir}/caller/mod.ts`,
      `export default { kind: "skill", name: "caller", description: "d",
        async run(_a, ctx) {
          const r = await ctx.tools.call("add", { a: 1 });
          try { await ctx.tools.call("fail"); } catch (e) { return { r, e: e.message }; }
        } };`,
    );
    const sandbox = createSandbox({ cacheDir: null });
    try {
      const seen: unknown[] = [];
      const outcome = await sandbox.call(
        call({ path: `${dir}/caller/mod.ts` }),
        {
          ...hooks,
          callTool(name, args) {
            seen.push([name, args]);
            return name === "add"
              ? Promise.resolve({ sum: 1 })
              : Promise.reject(new Error("denied"));
          },
        },
      );
      assert.deepEqual(outcome, {
        ok: true,
        value: { r: { sum: 1 }, e: "denied" },
        truncated: false,
      });
      assert.deepEqual(seen, [["add", { a: 1 }], ["fail", {}]]);
    } finally {
      await sandbox.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("call() never routes to a process just retired as least recently used", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createSandbox({ cacheDir: null, maxIdleProcesses: 1 });
  try {
    await sandbox.call(call(), hooks);
    const [first] = sandbox.processes();
    // Finishing this call retires the first process (SIGKILL sent, exit not
    // yet seen); the next call for its grant starts in the same tick.
    const again = await sandbox.call(call({ grant: { read: [dir] } }), hooks)
      .then(() => sandbox.call(call(), hooks));
    assert.deepEqual(again, { ok: true, value: { sum: 3 }, truncated: false });
    await first!.exited;
    assert.ok(sandbox.processes().every((p) => p.pid !== first!.pid));
  } finally {
    await sandbox.close();
    await Deno.remove(dir);
  }
});

Deno.test("call() does not let retirement kill a process still starting for another call", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createSandbox({ cacheDir: null, maxIdleProcesses: 1 });
  try {
    await sandbox.call(call(), hooks);
    // The cold call's process is starting (no operation yet) while the warm
    // call ends and runs retirement with two processes over a limit of one.
    const [cold, warm] = await Promise.all([
      sandbox.call(call({ grant: { read: [dir] } }), hooks),
      sandbox.call(call(), hooks),
    ]);
    assert.deepEqual(cold, { ok: true, value: { sum: 3 }, truncated: false });
    assert.deepEqual(warm, { ok: true, value: { sum: 3 }, truncated: false });
  } finally {
    await sandbox.close();
    await Deno.remove(dir);
  }
});

Deno.test("endSession() retires the session's own processes and refuses its later calls; other sessions and modules stay", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const evalCall = (sessionId: string) =>
      call({ sessionId, principal: "session" as const });
    for (const c of [evalCall("s1"), evalCall("s2"), call()]) {
      const outcome = await sandbox.call(c, hooks);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    // The spare process started ahead of the next session serves no one.
    const before = sandbox.processes().filter((p) => p.principal !== "spare:");
    const s1 = before.find((p) => p.principal === "session:s1");
    assert.ok(s1, JSON.stringify(before.map((p) => p.principal)));
    assert.equal(before.length, 3);
    sandbox.endSession("s1");
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      s1.exited.finally(() => clearTimeout(timer)),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("s1 still alive")), 15_000);
      }),
    ]);
    assert.deepEqual(
      sandbox.processes().map((p) => p.principal)
        .filter((p) => p !== "spare:").sort(),
      [
        before.find((p) => p.principal.startsWith("module:"))!.principal,
        "session:s2",
      ]
        .sort(),
    );
    const late = await sandbox.call(evalCall("s1"), hooks);
    assert.equal(late.ok, false);
    assert.match(late.ok ? "" : late.message, /session has ended/);
    const s2 = await sandbox.call(evalCall("s2"), hooks);
    assert.deepEqual(s2, { ok: true, value: { sum: 3 }, truncated: false });
  } finally {
    await sandbox.close();
  }
});

Deno.test("endSession() drops the session's warm workers in the module process at once; another session keeps its own", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    for (const sessionId of ["s1", "s2"]) {
      const outcome = await sandbox.call(call({ sessionId }), hooks);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    const [module] = sandbox.processes().filter((p) =>
      p.principal.startsWith("module:")
    );
    assert.ok(module);
    assert.equal((await module.stats("s1"))?.sessionWorkers, 1);
    assert.equal((await module.stats("s2"))?.sessionWorkers, 1);
    const before = (await module.stats())!.workers;
    sandbox.endSession("s1");
    // The pipe keeps order: the end is handled before this question.
    assert.equal((await module.stats("s1"))?.sessionWorkers, 0);
    assert.equal((await module.stats("s2"))?.sessionWorkers, 1);
    // Terminated, not only forgotten.
    assert.equal((await module.stats())!.workers, before - 1);
    const again = await sandbox.call(call({ sessionId: "s2" }), hooks);
    assert.deepEqual(again, { ok: true, value: { sum: 3 }, truncated: false });
  } finally {
    await sandbox.close();
  }
});
