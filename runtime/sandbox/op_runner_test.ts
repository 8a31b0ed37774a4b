import assert from "node:assert/strict";
import { dirname } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import { noProcess, OpRunner } from "./op_runner.ts";
import type { Route } from "./router.ts";
import { callOp, fixture, testRouter } from "./_test_support.ts";

const ADD = fixture("add");
const grant = Object.freeze({ read: [dirname(ADD)] });

Deno.test("operations of one principal run on its one process, each bounded by its wait for room", async () => {
  const router = testRouter();
  try {
    const runner = new OpRunner(router, 30_000);
    const route: Route = { principal: `module:${dirname(ADD)}` };
    const first = await runner.run(
      callOp(ADD, { a: 2, b: 3 }),
      grant,
      route,
      10_000,
      null,
    );
    assert.deepEqual(first, { ok: true, value: { sum: 5 }, truncated: false });
    assert.ok(route.deadline !== undefined, "the wait for room is bounded");
    const again = await runner.run(
      callOp(ADD, { a: 1, b: 1 }),
      grant,
      route,
      10_000,
      null,
    );
    assert.deepEqual(again, { ok: true, value: { sum: 2 }, truncated: false });
    assert.equal([...router.processes].length, 1);
  } finally {
    await router.close();
  }
});

Deno.test("no room under the cap within the wait bound: timeout; a closed router: sandbox_crash", async () => {
  const router = testRouter({ maxProcesses: 1 });
  try {
    const runner = new OpRunner(router, 50);
    // Another principal holds the only process.
    const held = await router.processFor(grant, { principal: "module:/other" });
    const outcome = await runner.run(
      callOp(ADD, { a: 1, b: 1 }),
      grant,
      { principal: `module:${dirname(ADD)}` },
      10_000,
      null,
    );
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.code, "timeout");
    held.release();
  } finally {
    await router.close();
  }
  const closed = await new OpRunner(router, 50).run(
    callOp(ADD, { a: 1, b: 1 }),
    grant,
    { principal: "module:/x" },
    1000,
    null,
  );
  assert.equal(!closed.ok && closed.code, "sandbox_crash");
  assert.match(
    !closed.ok ? closed.message : "",
    /Cannot start a sandbox process/,
  );
});

Deno.test("noProcess tells a timeout from a failure to start", () => {
  const late = noProcess(new SkillboxError("timeout", "No room in time"));
  assert.deepEqual(late, {
    ok: false,
    code: "timeout",
    message: "No room in time",
    retryable: true,
  });
  const broke = noProcess(new Error("spawn ENOENT"));
  assert.equal(!broke.ok && broke.code, "sandbox_crash");
  assert.equal(
    !broke.ok && broke.message,
    "Cannot start a sandbox process: spawn ENOENT",
  );
});
