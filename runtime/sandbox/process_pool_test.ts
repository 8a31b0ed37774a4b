import assert from "node:assert/strict";
import { dirname } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import { noProcess, type ProcessPool, type Route } from "./process_pool.ts";
import type { SandboxProcess } from "./sandbox_process.ts";
import { callOp, fixture, testPool } from "./_test_support.ts";

const ADD = fixture("add");
const grant = Object.freeze({ read: [dirname(ADD)] });

Deno.test("operations of one principal run on its one process, each bounded by its wait for room", async () => {
  const pool = testPool();
  try {
    const route: Route = { principal: `module:${dirname(ADD)}` };
    const first = await pool.run(callOp(ADD, { a: 2, b: 3 }), {
      grant,
      route: route,
      timeoutMs: 10_000,
      hooks: null,
    });
    assert.deepEqual(first, { ok: true, value: { sum: 5 }, truncated: false });
    assert.ok(route.deadline !== undefined, "the wait for room is bounded");
    const again = await pool.run(callOp(ADD, { a: 1, b: 1 }), {
      grant,
      route: route,
      timeoutMs: 10_000,
      hooks: null,
    });
    assert.deepEqual(again, { ok: true, value: { sum: 2 }, truncated: false });
    assert.equal([...pool.processes].length, 1);
  } finally {
    await pool.close();
  }
});

Deno.test("no room under the cap within the wait bound: timeout; a closed pool: sandbox_crash", async () => {
  const pool = testPool({ maxProcesses: 1, processWaitMs: 50 });
  try {
    // Another principal holds the only process.
    const held = await pool.processFor(grant, { principal: "module:/other" });
    const outcome = await pool.run(callOp(ADD, { a: 1, b: 1 }), {
      grant,
      route: { principal: `module:${dirname(ADD)}` },
      timeoutMs: 10_000,
      hooks: null,
    });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.code, "timeout");
    held.release();
  } finally {
    await pool.close();
  }
  const closed = await pool.run(callOp(ADD, { a: 1, b: 1 }), {
    grant,
    route: { principal: "module:/x" },
    timeoutMs: 1000,
    hooks: null,
  });
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

Deno.test("ProcessPool shares a process per grant and starts another for another grant", async () => {
  const pool = testPool();
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const a = await pool.processFor(grant);
    a.release();
    const b = pool.processFor(grant);
    assert.equal(b, a, "a ready process is returned without an await");
    a.release();
    const other = await pool.processFor({ read: [dirname(fixture("noop"))] });
    other.release();
    assert.notEqual(other, a);
    assert.equal([...pool.processes].length, 2);
  } finally {
    await pool.close();
  }
});

Deno.test("ProcessPool routes nothing to a process whose stopped worker has not answered, and retires it when its place was taken", async () => {
  const pool = testPool();
  try {
    const grant = { read: [dirname(fixture("add"))] };
    const first = await pool.processFor(grant);
    first.release();
    pool.stopping(first);
    const second = await pool.processFor(grant);
    second.release();
    assert.notEqual(second, first);
    // The worker answered, but its place is taken: retired once idle.
    pool.stopped(first, true);
    assert.equal(first.tainted, true);
    await first.exited;
    assert.deepEqual([...pool.processes], [second]);
  } finally {
    await pool.close();
  }
});

Deno.test("ProcessPool routes to a process again only once every stopped worker on it answered", async () => {
  const pool = testPool();
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const route = { principal: "module:/kit" };
    const proc = await pool.processFor(grant, route);
    proc.release();
    // Two operations stopped on it: either worker may be spinning.
    pool.stopping(proc);
    pool.stopping(proc);
    pool.stopped(proc, true);
    assert.equal(proc.routed, false, "one worker has not answered yet");
    pool.stopped(proc, true);
    assert.equal(proc.routed, true);
    assert.equal(proc.tainted, false);
    const again = pool.processFor(grant, route);
    assert.equal(again, proc);
    proc.release();
    // A worker that never answers taints its process at once.
    pool.stopping(proc);
    pool.stopping(proc);
    pool.stopped(proc, false);
    assert.equal(proc.tainted, true);
    await proc.exited;
  } finally {
    await pool.close();
  }
});

Deno.test("ProcessPool refuses work once closed", async () => {
  const pool = testPool();
  await pool.close();
  assert.throws(() => pool.processFor({}), /closed/);
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

Deno.test("ProcessPool.endPrincipal kills a session's processes, busy or not, and no other's", async () => {
  const pool = testPool();
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const mine = await pool.processFor(grant, { principal: "session:a" });
    // Leased (busy): ending the session kills it anyway.
    const other = await pool.processFor(grant, { principal: "session:b" });
    other.release();
    const module = await pool.processFor(grant, { principal: "module:/m" });
    module.release();
    assert.equal(pool.endPrincipal("session:a"), 1);
    await exitedWithin(mine);
    assert.deepEqual(
      new Set(pool.processes),
      new Set([other, module]),
    );
    assert.equal(other.dead, false);
    // Session a gets no process again; b's is still its own.
    assert.throws(
      () => pool.processFor(grant, { principal: "session:a" }),
      /session has ended/,
    );
    const again = pool.processFor(grant, { principal: "session:b" });
    assert.equal(again, other);
    other.release();
  } finally {
    await pool.close();
  }
});

Deno.test("ProcessPool.endPrincipal stops a call of the session still waiting for room", async () => {
  const pool = testPool({ maxProcesses: 1 });
  try {
    const grant = Object.freeze({ read: [dirname(fixture("add"))] });
    const busy = await pool.processFor(grant, { principal: "session:x" });
    // At the cap and the only process busy: session a's call waits.
    const waiting = pool.processFor(grant, { principal: "session:a" });
    pool.endPrincipal("session:a");
    busy.release();
    pool.retireIdle();
    await assert.rejects(
      Promise.resolve(waiting),
      /session has ended/,
    );
    assert.deepEqual(
      [...pool.processes].map((p) => p.key.split("\u0000")[0]),
      [
        "session:x",
      ],
    );
  } finally {
    await pool.close();
  }
});

function spares(pool: ProcessPool): SandboxProcess[] {
  return [...pool.processes].filter((p) => p.key.startsWith("spare:"));
}

// A session's process, asked for as a new session's first call would.
async function sessionProcess(
  pool: ProcessPool,
  id: string,
): Promise<SandboxProcess> {
  const proc = await pool.processFor(grant, {
    principal: `session:${id}`,
    session: id,
  });
  proc.release();
  return proc;
}

async function add(proc: SandboxProcess) {
  proc.lease();
  return await proc.run(callOp(ADD, { a: 2, b: 3 }), {
    timeoutMs: 10_000,
    hooks: null,
  });
}

Deno.test("a new session gets a never-used spare process, each spare goes to one session only, and a replacement is started", async () => {
  const pool = testPool({ spareProcesses: 1 });
  try {
    const a = await sessionProcess(pool, "a");
    // The first session taught the pool the grant: a spare is starting.
    const [spare] = spares(pool);
    assert.ok(spare, "a spare was started");
    assert.notEqual(spare, a);
    await spare.ready;
    const b = await sessionProcess(pool, "b");
    assert.equal(b, spare, "session b got the spare");
    assert.ok(b.key.startsWith("session:b\u0000"), b.key);
    const [next] = spares(pool);
    assert.ok(next, "a replacement spare was started");
    assert.ok(next !== a && next !== b);
    await next.ready;
    const c = await sessionProcess(pool, "c");
    assert.equal(c, next);
    // Each session keeps its own process; none is shared.
    assert.equal(pool.processFor(grant, { principal: "session:a" }), a);
    a.release();
    assert.equal(pool.processFor(grant, { principal: "session:b" }), b);
    b.release();
    assert.equal(new Set([a.pid, b.pid, c.pid]).size, 3);
    assert.deepEqual(await add(b), {
      ok: true,
      value: { sum: 5 },
      truncated: false,
    });
    // A module's work never takes a spare.
    const module = await pool.processFor(grant, { principal: "module:/m" });
    module.release();
    assert.ok(![a, b, c, ...spares(pool)].includes(module));
  } finally {
    await pool.close();
  }
});

Deno.test("a spare that died is replaced, never handed out", async () => {
  const pool = testPool({ spareProcesses: 1 });
  try {
    await sessionProcess(pool, "a");
    const [spare] = spares(pool);
    assert.ok(spare);
    await spare.ready;
    // Killed from outside (not retired by the pool).
    Deno.kill(spare.pid, "SIGKILL");
    await spare.exited;
    const [replacement] = spares(pool);
    assert.ok(replacement, "a replacement was started");
    assert.notEqual(replacement, spare);
    const b = await sessionProcess(pool, "b");
    assert.notEqual(b, spare);
    assert.equal(b, replacement);
    const outcome = await add(b);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
  } finally {
    await pool.close();
  }
});

Deno.test("no spare process with spareProcesses 0", async () => {
  const pool = testPool({ spareProcesses: 0 });
  try {
    await sessionProcess(pool, "a");
    await sessionProcess(pool, "b");
    assert.equal([...pool.processes].length, 2);
    assert.deepEqual(spares(pool), []);
  } finally {
    await pool.close();
  }
});

Deno.test("spares count against the process cap and the idle bound: a flood of sessions never grows past them", async () => {
  const CAP = 3;
  const pool = testPool({ spareProcesses: 2, maxProcesses: CAP });
  let peak = 0;
  const seen = new Set<SandboxProcess>();
  try {
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const proc = await sessionProcess(pool, `s${i}`);
        assert.ok(!seen.has(proc), "a process served two sessions");
        seen.add(proc);
        peak = Math.max(peak, [...pool.processes].length);
        pool.retireIdle();
      }),
    );
    assert.ok(peak <= CAP, `at most ${CAP} processes, saw ${peak}`);
    assert.equal(seen.size, 12);
  } finally {
    await pool.close();
  }
  const idle = testPool({ spareProcesses: 4, maxIdle: 1 });
  try {
    await sessionProcess(idle, "a");
    idle.retireIdle();
    // One idle process at most: the spare and a's process share the bound.
    assert.ok(spares(idle).length <= 1);
  } finally {
    await idle.close();
  }
});
