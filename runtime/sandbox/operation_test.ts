import assert from "node:assert/strict";
import { dirname } from "node:path";
import { callOp, fixture, testRouter } from "./_test_support.ts";
import { runOperation } from "./operation.ts";
import { Deadlines } from "./deadlines.ts";
import type { SandboxHooks } from "./types.ts";

const SPIN = fixture("spin_on_demand");
const grant = Object.freeze({ read: [dirname(SPIN)] });
const deadlines = new Deadlines();
const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

Deno.test("runOperation() answers a spinning call at its deadline and taints its process", async () => {
  const router = testRouter();
  try {
    const proc = await router.processFor(grant);
    const warm = await runOperation(proc, callOp(SPIN, { spin: false }), {
      timeoutMs: 10_000,
      hooks,
      router,
      deadlines,
    });
    assert.deepEqual(warm, { ok: true, value: "ok", truncated: false });
    proc.lease();
    const outcome = await runOperation(proc, callOp(SPIN, { spin: true }), {
      timeoutMs: 300,
      hooks,
      router,
      deadlines,
    });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.equal(outcome.code, "timeout");
    // The spinning worker never acknowledges: the process is killed.
    await proc.exited;
    assert.equal(proc.tainted, true);
  } finally {
    await router.close();
    deadlines.close();
  }
});

Deno.test("runOperation() cancels a call and keeps its process when the worker stops", async () => {
  const router = testRouter();
  try {
    const proc = await router.processFor(grant);
    const controller = new AbortController();
    controller.abort();
    const { promise: settled, resolve } = Promise.withResolvers<boolean>();
    const outcome = await runOperation(proc, callOp(SPIN, { spin: false }), {
      timeoutMs: 10_000,
      hooks: { ...hooks, signal: controller.signal },
      router,
      deadlines,
      onStopped: resolve,
    });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.match(outcome.message, /cancelled/);
    assert.equal(await settled, true);
    const again = await router.processFor(grant);
    again.release();
    assert.equal(again, proc);
    assert.equal(proc.tainted, false);
  } finally {
    await router.close();
    deadlines.close();
  }
});

Deno.test("runOperation() refuses ctx RPCs when it has no hooks", async () => {
  const dir = await Deno.makeTempDir();
  const router = testRouter();
  try {
    const path = `${dir}/mod.ts`;
    await Deno.writeTextFile(
      path,
      `export default { kind: "tool", name: "t", description: "d",
        async run(_a, ctx) {
          try { await ctx.tools.call("x"); } catch (e) { return e.message; }
        } };`,
    );
    const proc = await router.processFor({ read: [dir] });
    const outcome = await runOperation(proc, callOp(path, {}), {
      timeoutMs: 10_000,
      hooks: null,
      router,
      deadlines,
    });
    assert.deepEqual(outcome, {
      ok: true,
      value: "Not available here",
      truncated: false,
    });
  } finally {
    await router.close();
    deadlines.close();
    await Deno.remove(dir, { recursive: true });
  }
});
