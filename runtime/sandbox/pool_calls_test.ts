import assert from "node:assert/strict";
import { dirname } from "node:path";
import { PoolCalls } from "./pool_calls.ts";
import { OpRunner } from "./op_runner.ts";
import { OwnReads } from "./own_reads.ts";
import { fixture, testRouter } from "./_test_support.ts";
import type { Policy } from "./permissions.ts";
import type { SandboxCall, SandboxHooks } from "./types.ts";

const ADD = fixture("add");
const DYNAMIC = fixture("dynamic_perms");

function setup(policy: Policy = {}) {
  const router = testRouter();
  const calls = new PoolCalls({
    runner: new OpRunner(router, 30_000),
    own: new OwnReads(policy),
    policy,
    shared: new Set(),
    describeTimeoutMs: 10_000,
  });
  const close = async () => {
    await router.close();
  };
  return { router, calls, close };
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
const hooks: SandboxHooks = {
  onEvent: (kind) => events.push(kind),
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

Deno.test("a call runs in its module's process, with the module's own reads granted", async () => {
  const { router, calls, close } = setup();
  try {
    const outcome = await calls.call(addCall(), hooks);
    assert.deepEqual(outcome, {
      ok: true,
      value: { sum: 5 },
      truncated: false,
    });
    assert.ok(events.includes("progress"), "its events reach the hooks");
    const keys = [...router.processes].map((p) => p.key);
    assert.equal(keys.length, 1);
    assert.ok(keys[0]!.startsWith(`module:${dirname(ADD)}\u0000`), keys[0]);
    assert.ok(keys[0]!.includes(dirname(ADD)), "its folder is in the grant");
  } finally {
    await close();
  }
});

Deno.test("session code runs in the session's own process, per call as well as warm", async () => {
  const { router, calls, close } = setup();
  try {
    for (const isolation of ["warm", "per-call"] as const) {
      const outcome = await calls.call(
        addCall({ principal: "session", isolation, sessionId: "s9" }),
        hooks,
      );
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    const principals = [...router.processes].map((p) =>
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
      result = calls.call(bad, hooks);
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
  const { router, calls, close } = setup();
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
      const outcome = await calls.call(addCall(over), hooks);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    const principals = new Set(
      [...router.processes].map((p) => p.key.slice(0, p.key.indexOf("\u0000"))),
    );
    assert.deepEqual(
      [...principals].sort(),
      [`module:${dirname(ADD)}`, "session:s8", "session:s9"],
    );
  } finally {
    await close();
  }
});
