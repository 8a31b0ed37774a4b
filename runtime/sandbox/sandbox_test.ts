import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import {
  configKey,
  createSandbox,
  discoveryOptions,
  processPoolOptions,
  SandboxCalls,
  sandboxSettings,
  WORKER_MB,
  workerKey,
} from "./sandbox.ts";
import { OwnReads, type Policy } from "./grants.ts";
import { fixture, testPool } from "./_test_support.ts";
import type { SandboxCall, SandboxHooks } from "./types.ts";

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

Deno.test("a ctx answer JSON cannot hold fails that ctx call, not the host", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/caller`);
    await Deno.writeTextFile(
      `${dir}/caller/mod.ts`,
      `export default { kind: "skill", name: "caller", description: "d",
        async run(_a, ctx) {
          const out = [];
          for (const name of ["big", "odd"]) {
            try { await ctx.tools.call(name); } catch (e) { out.push(e.message); }
          }
          return out;
        } };`,
    );
    const sandbox = createSandbox({ cacheDir: null });
    try {
      const outcome = await sandbox.call(
        call({ path: `${dir}/caller/mod.ts` }),
        {
          ...hooks,
          // A value JSON.stringify refuses, an error String() refuses.
          callTool: (name) =>
            name === "big"
              ? Promise.resolve({ n: 1n })
              : Promise.reject(Object.create(null)),
        },
      );
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      const [big, odd] = (outcome as { value: string[] }).value;
      assert.match(big ?? "", /cannot be sent/);
      assert.match(odd ?? "", /cannot be sent/);
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

const DYNAMIC = fixture("dynamic_perms");

function setup(policy: Policy = {}) {
  const pool = testPool();
  const calls = new SandboxCalls({
    pool,
    own: new OwnReads(policy),
    policy,
    shared: new Set(),
    describeTimeoutMs: 10_000,
  });
  const close = async () => {
    await pool.close();
  };
  return { pool, calls, close };
}

function addCall(over: Partial<SandboxCall> = {}): SandboxCall {
  return {
    path: ADD,
    export: "default",
    version: "v1",
    args: { a: 2, b: 3 },
    grant: Object.freeze({}),
    timeoutMs: 10_000,
    sessionId: "s1",
    callId: "c1",
    config: {},
    metadata: {},
    isolation: "warm",
    ...over,
  };
}

const events: string[] = [];
const eventHooks: SandboxHooks = {
  onEvent: (kind) => events.push(kind),
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

Deno.test("a call runs in its module's process, with the module's own reads granted", async () => {
  const { pool, calls, close } = setup();
  try {
    const outcome = await calls.call(addCall(), eventHooks);
    assert.deepEqual(outcome, {
      ok: true,
      value: { sum: 5 },
      truncated: false,
    });
    assert.ok(events.includes("progress"), "its events reach the hooks");
    const keys = [...pool.processes].map((p) => p.key);
    assert.equal(keys.length, 1);
    assert.ok(keys[0]!.startsWith(`module:${dirname(ADD)}\u0000`), keys[0]);
    assert.ok(keys[0]!.includes(dirname(ADD)), "its folder is in the grant");
  } finally {
    await close();
  }
});

Deno.test("session code runs in the session's own process, per call as well as warm", async () => {
  const { pool, calls, close } = setup();
  try {
    for (const isolation of ["warm", "per-call"] as const) {
      const outcome = await calls.call(
        addCall({ principal: "session", isolation, sessionId: "s9" }),
        eventHooks,
      );
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    const principals = [...pool.processes].map((p) =>
      p.key.slice(0, p.key.indexOf("\u0000"))
    );
    assert.ok(principals.includes("session:s9"), principals.join());
    assert.ok(!principals.some((p) => p.startsWith("module:")));
  } finally {
    await close();
  }
});

Deno.test("a call that cannot be built rejects, never throws", async () => {
  const { calls, close } = setup();
  try {
    const bad = addCall({ path: undefined as unknown as string });
    let threw = false;
    let result: Promise<unknown> | undefined;
    try {
      result = calls.call(bad, eventHooks);
    } catch {
      threw = true;
    }
    assert.equal(threw, false);
    await assert.rejects(result!);
  } finally {
    await close();
  }
});

Deno.test("dynamic permissions run with the module's own reads; a policy that denies them refuses", async () => {
  const { calls, close } = setup();
  try {
    const perms = await calls.resolvePermissions(DYNAMIC, "default", {
      root: "/srv/data",
    });
    assert.deepEqual(perms, { read: ["/srv/data"] });
  } finally {
    await close();
  }
  const denied = setup({ deny: [dirname(DYNAMIC)] });
  try {
    await assert.rejects(
      denied.calls.resolvePermissions(DYNAMIC, "default", {}),
      (err: Error & { code?: string }) => err.code === "tool_denied",
    );
  } finally {
    await denied.close();
  }
});

Deno.test("calls in a row that differ in principal or session each get their own", async () => {
  const { pool, calls, close } = setup();
  try {
    for (
      const over of [
        {},
        {},
        { principal: "session" as const, sessionId: "s8" },
        { principal: "session" as const, sessionId: "s9" },
        {},
      ]
    ) {
      const outcome = await calls.call(addCall(over), eventHooks);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    const principals = new Set(
      [...pool.processes].map((p) => p.key.slice(0, p.key.indexOf("\u0000"))),
    );
    assert.deepEqual(
      [...principals].sort(),
      [`module:${dirname(ADD)}`, "session:s8", "session:s9"],
    );
  } finally {
    await close();
  }
});

Deno.test("configKey() tells configurations apart, short or long", async () => {
  assert.notEqual(configKey({ a: 1 }), configKey({ a: 2 }));
  const a = await configKey({ text: "a".repeat(500) });
  const b = await configKey({ text: "b".repeat(500) });
  assert.notEqual(a, b);
  assert.equal(await configKey({ text: "a".repeat(500) }), a);
});

Deno.test("configKey() follows a mutable configuration, caches a frozen one", () => {
  const open: Record<string, unknown> = { a: 1 };
  assert.equal(configKey(open), '{"a":1}');
  open.a = 2;
  assert.equal(configKey(open), '{"a":2}');
  const frozen = Object.freeze({ b: 1 });
  assert.equal(configKey(frozen), configKey(frozen));
});

Deno.test("workerKey() cannot be confused by a separator inside a part", () => {
  assert.notEqual(
    workerKey("/a.ts", "v", "s\u0000x", "{}"),
    workerKey("/a.ts", "v", "s", "x\u0000{}"),
  );
});

Deno.test("workerKey() keeps its parts apart: no session or config can pose as another's", () => {
  // A session's warm worker must never be found under another session's
  // key: a separator inside a part must not shift where the parts split.
  const pairs: [string, string, string, string][] = [
    ["s:1", "c", "s", "1:c"],
    ['s","1', "{}", "s", '1","{}'],
    ["s", '"],["x', 's"', '],["x'],
  ];
  for (const [s1, c1, s2, c2] of pairs) {
    assert.notEqual(
      workerKey("/a.ts", "v1", s1, c1),
      workerKey("/a.ts", "v1", s2, c2),
    );
  }
  assert.equal(
    workerKey("/a.ts", "v1", "s", "{}"),
    workerKey("/a.ts", "v1", "s", "{}"),
  );
});

Deno.test("sandbox settings: defaults, the cache folder and policy paths made absolute", () => {
  const settings = sandboxSettings({
    cwd: "/srv/host",
    cacheDir: "cache",
    policy: { deny: ["/a/./b"], sharedFolders: ["/skills/"] },
  });
  assert.equal(settings.cacheDir, "/srv/host/cache");
  assert.deepEqual(settings.deny, ["/a/b"]);
  assert.deepEqual([...settings.shared], ["/skills"]);
  assert.equal(settings.describeTimeoutMs, 5000);
  assert.equal(settings.processWaitMs, 30_000);
  assert.equal(settings.confinement, "auto");
  const bare = sandboxSettings({});
  assert.equal(bare.cwd, Deno.cwd());
  assert.equal(bare.cacheDir, join(Deno.cwd(), ".skillbox-cache"));
  assert.deepEqual(bare.policy, {});
  assert.equal(sandboxSettings({ cacheDir: null }).cacheDir, null);
});

Deno.test("process pool options: the worker budget sets warm workers unless a count is given", () => {
  const budget = { workerBudgetMb: 5 * WORKER_MB + 1 };
  assert.equal(
    processPoolOptions(budget, sandboxSettings(budget)).maxWarmWorkers,
    5,
  );
  const tiny = { workerBudgetMb: 1 };
  assert.equal(
    processPoolOptions(tiny, sandboxSettings(tiny)).maxWarmWorkers,
    1,
  );
  const both = { workerBudgetMb: 600, maxWarmWorkers: 3 };
  assert.equal(
    processPoolOptions(both, sandboxSettings(both)).maxWarmWorkers,
    3,
  );
  const bare = processPoolOptions({}, sandboxSettings({}));
  assert.equal(bare.maxWarmWorkers, Math.floor(1024 / WORKER_MB));
  assert.equal(bare.memoryMb, 512);
  assert.equal(bare.maxIdle, 8);
  assert.equal(bare.spareProcesses, 1);
  assert.equal(bare.maxProcesses, 32);
  assert.ok(bare.perPrincipal! >= 1);
  assert.equal(bare.wrapper, undefined);
});

Deno.test("discovery options: denied paths and the denied trees' entries, listed now", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "secret"));
    await Deno.mkdir(join(root, "skills"));
    const options = {
      memoryMb: 64,
      policy: {
        deny: ["/etc/shadow"],
        deniedTrees: [{ root, except: [join(root, "skills")] }],
      },
    };
    const bootstrap = () => Promise.resolve("js");
    const queue = discoveryOptions(
      options,
      sandboxSettings(options),
      undefined,
      bootstrap,
    );
    assert.equal(queue.memoryMb, 64);
    assert.equal(queue.bootstrap, bootstrap);
    assert.ok(queue.deny.includes("/etc/shadow"));
    assert.ok(queue.deny.includes(join(root, "secret")), queue.deny.join());
    assert.ok(!queue.deny.includes(join(root, "skills")));
    assert.equal(queue.env.NO_COLOR, "1");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
