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

Deno.test("ProcessRouter routes nothing to an unrouted process and retires it when tainted", async () => {
  const router = testRouter();
  try {
    const grant = { read: [dirname(fixture("add"))] };
    const first = await router.processFor(grant);
    first.release();
    assert.ok(router.unroute(first));
    const second = await router.processFor(grant);
    second.release();
    assert.notEqual(second, first);
    assert.equal(router.reroute(first), false, "its place is taken");
    first.tainted = true;
    router.retireIdle();
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
