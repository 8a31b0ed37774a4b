/**
 * Spare sandbox processes ahead of new sessions, tried as an attacker
 * would: a process that ran one session's code (`eval_typescript`) must
 * never be handed to another session, a spare must never have served
 * anyone, and a spare that died must be replaced, never handed out. Runs
 * the shipped `eval_typescript` through the real pool, confined when
 * confinement works (`SKILLBOX_TEST_CONFINEMENT=off` runs it without).
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  createSandbox,
  type SandboxPool,
} from "../../runtime/sandbox/sandbox.ts";
import type {
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
} from "../../runtime/sandbox/types.ts";
import { confinement, CONFINEMENT_MODE } from "./_confined.ts";

const EVAL = fileURLToPath(
  new URL("../../skills/code/eval_typescript.ts", import.meta.url),
);

const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

function pool(): SandboxPool {
  return createSandbox({
    cacheDir: null,
    confinement: CONFINEMENT_MODE,
    memoryMb: 128,
    spareProcesses: 1,
    maxIdleProcesses: 8,
  });
}

async function evalIn(
  sandbox: SandboxPool,
  version: string,
  session: string,
  code: string,
): Promise<SandboxOutcome> {
  const call: SandboxCall = {
    path: EVAL,
    export: "default",
    version,
    args: { code },
    grant: {},
    timeoutMs: 20_000,
    sessionId: session,
    callId: `${session}-call`,
    config: {},
    metadata: {},
    isolation: "per-call",
    principal: "session",
  };
  return await sandbox.call(call, hooks);
}

// The value an eval's code gave (or the failure, to fail an assertion).
function valueOf(outcome: SandboxOutcome): unknown {
  if (!outcome.ok) return outcome;
  return (outcome.value as { data: { value: unknown } }).data.value;
}

// Checks every live process against what each pid was seen serving: a pid
// seen for one principal is never seen for another (a spare, `spare:`, may
// become one session's once).
function watchOwners(sandbox: SandboxPool, owners: Map<number, string>) {
  for (const p of sandbox.processes()) {
    const before = owners.get(p.pid);
    if (before !== undefined && before !== "spare:") {
      assert.equal(p.principal, before, `pid ${p.pid} changed hands`);
    }
    if (before !== undefined && p.principal === "spare:") {
      assert.equal(before, "spare:", `pid ${p.pid} became a spare again`);
    }
    owners.set(p.pid, p.principal);
  }
}

function sessionPid(sandbox: SandboxPool, session: string): number {
  const mine = sandbox.processes().filter((p) =>
    p.principal === `session:${session}`
  );
  assert.equal(mine.length, 1, `one process for ${session}`);
  return mine[0]!.pid;
}

Deno.test("new sessions' evals run in spare processes no other session used; two sessions never share one", async () => {
  const sandbox = pool();
  const owners = new Map<number, string>();
  try {
    const { hash } = await sandbox.describe(EVAL);
    const pids = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const session = `s${i}`;
      // Each tries to leave state behind in its process for the next one.
      const got = await evalIn(
        sandbox,
        hash,
        session,
        `globalThis.left = "${session}"; [Deno.pid, "${session}"]`,
      );
      assert.equal(got.ok, true, JSON.stringify(got));
      watchOwners(sandbox, owners);
      const pid = sessionPid(sandbox, session);
      assert.ok(!pids.has(pid), `session ${session} got a used process`);
      pids.add(pid);
      if (!confinement.active && got.ok) {
        // Unconfined, the code sees its real pid: its own session's process.
        const [seen] = valueOf(got) as [number, string];
        assert.equal(seen, pid);
      }
      if (i >= 1) {
        // From the second session on, a spare was waiting for it.
        assert.ok(owners.has(pid), "a spare (seen before) served it");
      }
    }
    // Two new sessions at once: each its own process, both answered.
    const [x, y] = await Promise.all([
      evalIn(sandbox, hash, "x", "'x'"),
      evalIn(sandbox, hash, "y", "'y'"),
    ]);
    assert.equal(valueOf(x), "x");
    assert.equal(valueOf(y), "y");
    watchOwners(sandbox, owners);
    assert.notEqual(sessionPid(sandbox, "x"), sessionPid(sandbox, "y"));
    // An ended session's process is gone, never handed on.
    const ended = sessionPid(sandbox, "s0");
    sandbox.endSession("s0");
    const again = await evalIn(sandbox, hash, "z", "1");
    assert.equal(again.ok, true);
    assert.notEqual(sessionPid(sandbox, "z"), ended);
    watchOwners(sandbox, owners);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a spare process that died is replaced and never handed to a session", async () => {
  const sandbox = pool();
  try {
    const { hash } = await sandbox.describe(EVAL);
    const first = await evalIn(sandbox, hash, "a", "1");
    assert.equal(first.ok, true, JSON.stringify(first));
    const spare = sandbox.processes().find((p) => p.principal === "spare:");
    assert.ok(spare, "a spare was started after the first session");
    Deno.kill(spare.pid, "SIGKILL");
    await spare.exited;
    const replacement = sandbox.processes().find((p) =>
      p.principal === "spare:"
    );
    assert.ok(replacement, "the dead spare was replaced");
    assert.notEqual(replacement.pid, spare.pid);
    const got = await evalIn(sandbox, hash, "b", "'b runs'");
    assert.equal(got.ok, true, JSON.stringify(got));
    assert.equal(valueOf(got), "b runs");
    const b = sessionPid(sandbox, "b");
    assert.notEqual(b, spare.pid);
    assert.equal(b, replacement.pid, "b got the replacement");
  } finally {
    await sandbox.close();
  }
});
