import assert from "node:assert/strict";
import { dirname } from "node:path";
import { fixture, testRouter } from "./_test_support.ts";

Deno.test("ProcessRouter shares a process per grant and starts another for another grant", async () => {
  const router = testRouter();
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const a = await router.processFor(grant);
    a.release();
    const b = router.processFor(grant);
    assert.equal(b, a, "a ready process is returned without an await");
    a.release();
    const other = await router.processFor({ read: [dirname(fixture("noop"))] });
    other.release();
    assert.notEqual(other, a);
    assert.equal([...router.processes].length, 2);
  } finally {
    await router.close();
  }
});

Deno.test("ProcessRouter routes nothing to a process whose stopped worker has not answered, and retires it when its place was taken", async () => {
  const router = testRouter();
  try {
    const grant = { read: [dirname(fixture("add"))] };
    const first = await router.processFor(grant);
    first.release();
    router.stopping(first);
    const second = await router.processFor(grant);
    second.release();
    assert.notEqual(second, first);
    // The worker answered, but its place is taken: retired once idle.
    router.stopped(first, true);
    assert.equal(first.tainted, true);
    await first.exited;
    assert.deepEqual([...router.processes], [second]);
  } finally {
    await router.close();
  }
});

Deno.test("ProcessRouter refuses work once closed", async () => {
  const router = testRouter();
  await router.close();
  assert.throws(() => router.processFor({}), /closed/);
});

// Resolves when the process has exited; fails after `ms` (never hangs).
function exitedWithin(proc: { exited: Promise<number> }, ms = 15_000) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    proc.exited.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("still alive")), ms);
    }),
  ]);
}

Deno.test("ProcessRouter.endPrincipal kills a session's processes, busy or not, and no other's", async () => {
  const router = testRouter();
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const mine = await router.processFor(grant, { principal: "session:a" });
    // Leased (busy): ending the session kills it anyway.
    const other = await router.processFor(grant, { principal: "session:b" });
    other.release();
    const module = await router.processFor(grant, { principal: "module:/m" });
    module.release();
    assert.equal(router.endPrincipal("session:a"), 1);
    await exitedWithin(mine);
    assert.deepEqual(
      new Set(router.processes),
      new Set([other, module]),
    );
    assert.equal(other.dead, false);
    // Session a gets no process again; b's is still its own.
    assert.throws(
      () => router.processFor(grant, { principal: "session:a" }),
      /session has ended/,
    );
    const again = router.processFor(grant, { principal: "session:b" });
    assert.equal(again, other);
    other.release();
  } finally {
    await router.close();
  }
});

Deno.test("ProcessRouter.endPrincipal stops a call of the session still waiting for room", async () => {
  const router = testRouter({ maxProcesses: 1 });
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const busy = await router.processFor(grant, { principal: "session:x" });
    // At the cap and the only process busy: session a's call waits.
    const waiting = router.processFor(grant, { principal: "session:a" });
    router.endPrincipal("session:a");
    busy.release();
    router.retireIdle();
    await assert.rejects(
      Promise.resolve(waiting),
      /session has ended/,
    );
    assert.deepEqual(
      [...router.processes].map((p) => p.key.split("\u0000")[0]),
      [
        "session:x",
      ],
    );
  } finally {
    await router.close();
  }
});
