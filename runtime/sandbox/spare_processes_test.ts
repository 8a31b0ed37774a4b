import assert from "node:assert/strict";
import { dirname } from "node:path";
import { callOp, fixture, testRouter } from "./_test_support.ts";
import type { SandboxProcess } from "./sandbox_process.ts";
import type { ProcessRouter } from "./router.ts";

const ADD = fixture("add");
const grant = Object.freeze({ read: [dirname(ADD)] });

function spares(router: ProcessRouter): SandboxProcess[] {
  return [...router.processes].filter((p) => p.key.startsWith("spare:"));
}

// A session's process, asked for as a new session's first call would.
async function sessionProcess(
  router: ProcessRouter,
  id: string,
): Promise<SandboxProcess> {
  const proc = await router.processFor(grant, {
    principal: `session:${id}`,
    session: id,
  });
  proc.release();
  return proc;
}

async function add(router: ProcessRouter, proc: SandboxProcess) {
  proc.lease();
  return await proc.run(callOp(ADD, { a: 2, b: 3 }), {
    timeoutMs: 10_000,
    hooks: null,
  });
}

Deno.test("a new session gets a never-used spare process, each spare goes to one session only, and a replacement is started", async () => {
  const router = testRouter({ spareProcesses: 1 });
  try {
    const a = await sessionProcess(router, "a");
    // The first session taught the router the grant: a spare is starting.
    const [spare] = spares(router);
    assert.ok(spare, "a spare was started");
    assert.notEqual(spare, a);
    await spare.ready;
    const b = await sessionProcess(router, "b");
    assert.equal(b, spare, "session b got the spare");
    assert.ok(b.key.startsWith("session:b\u0000"), b.key);
    const [next] = spares(router);
    assert.ok(next, "a replacement spare was started");
    assert.ok(next !== a && next !== b);
    await next.ready;
    const c = await sessionProcess(router, "c");
    assert.equal(c, next);
    // Each session keeps its own process; none is shared.
    assert.equal(router.processFor(grant, { principal: "session:a" }), a);
    a.release();
    assert.equal(router.processFor(grant, { principal: "session:b" }), b);
    b.release();
    assert.equal(new Set([a.pid, b.pid, c.pid]).size, 3);
    assert.deepEqual(await add(router, b), {
      ok: true,
      value: { sum: 5 },
      truncated: false,
    });
    // A module's work never takes a spare.
    const module = await router.processFor(grant, { principal: "module:/m" });
    module.release();
    assert.ok(![a, b, c, ...spares(router)].includes(module));
  } finally {
    await router.close();
  }
});

Deno.test("a spare that died is replaced, never handed out", async () => {
  const router = testRouter({ spareProcesses: 1 });
  try {
    await sessionProcess(router, "a");
    const [spare] = spares(router);
    assert.ok(spare);
    await spare.ready;
    // Killed from outside (not retired by the router).
    Deno.kill(spare.pid, "SIGKILL");
    await spare.exited;
    const [replacement] = spares(router);
    assert.ok(replacement, "a replacement was started");
    assert.notEqual(replacement, spare);
    const b = await sessionProcess(router, "b");
    assert.notEqual(b, spare);
    assert.equal(b, replacement);
    const outcome = await add(router, b);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
  } finally {
    await router.close();
  }
});

Deno.test("no spare process with spareProcesses 0", async () => {
  const router = testRouter({ spareProcesses: 0 });
  try {
    await sessionProcess(router, "a");
    await sessionProcess(router, "b");
    assert.equal([...router.processes].length, 2);
    assert.deepEqual(spares(router), []);
  } finally {
    await router.close();
  }
});

Deno.test("spares count against the process cap and the idle bound: a flood of sessions never grows past them", async () => {
  const CAP = 3;
  const router = testRouter({ spareProcesses: 2, maxProcesses: CAP });
  let peak = 0;
  const seen = new Set<SandboxProcess>();
  try {
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const proc = await sessionProcess(router, `s${i}`);
        assert.ok(!seen.has(proc), "a process served two sessions");
        seen.add(proc);
        peak = Math.max(peak, [...router.processes].length);
        router.retireIdle();
      }),
    );
    assert.ok(peak <= CAP, `at most ${CAP} processes, saw ${peak}`);
    assert.equal(seen.size, 12);
  } finally {
    await router.close();
  }
  const idle = testRouter({ spareProcesses: 4, maxIdle: 1 });
  try {
    await sessionProcess(idle, "a");
    idle.retireIdle();
    // One idle process at most: the spare and a's process share the bound.
    assert.ok(spares(idle).length <= 1);
  } finally {
    await idle.close();
  }
});
