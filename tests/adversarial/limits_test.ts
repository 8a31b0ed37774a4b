import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";
import {
  assertNormalCallWorks,
  callFixture,
  fixture,
  processAlive,
  valueOf,
  within,
} from "./_helpers.ts";

Deno.test("a busy loop fails with timeout at its deadline and its process is killed", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    // Reading its permissions starts the process the call will use (same
    // grant). (Describing runs in a discovery process of its own.)
    await sandbox.resolvePermissions(fixture("busy_loop"), "default", {});
    const [proc] = sandbox.processes();
    assert.ok(proc);
    assert.equal(await processAlive(proc.pid), true, "alive before the call");
    const { outcome } = await callFixture(sandbox, "busy_loop", {
      timeoutMs: 500,
    });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.code, "timeout");
    assert.match(!outcome.ok ? outcome.message : "", /Timed out after 500 ms/);
    // Answered at the deadline, not after the abort the worker never
    // acknowledges: the host taints the process only once it gave up on it.
    const [now] = sandbox.processes();
    assert.equal(now?.pid, proc.pid);
    assert.equal(now?.tainted, false, "answered after the abort's grace");
    await within(proc.exited, 2000, "spinning process exit");
    assert.equal(await processAlive(proc.pid), false);
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a call right after a busy loop's timeout is not routed behind the spin", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    // The same module, session and config: the same warm worker key.
    const first = await callFixture(sandbox, "spin_on_demand", {
      args: { spin: false },
    });
    assert.equal(first.outcome.ok, true);
    const [spinning] = sandbox.processes();
    const spin = await callFixture(sandbox, "spin_on_demand", {
      args: { spin: true },
      timeoutMs: 200,
    });
    assert.equal(!spin.outcome.ok && spin.outcome.code, "timeout");
    // Sent at once, while the host is still waiting for the abort's answer:
    // it must get a live worker, not queue behind the spinning one (which
    // would make it time out too).
    const next = await callFixture(sandbox, "spin_on_demand", {
      args: { spin: false },
      timeoutMs: 5000,
    });
    assert.deepEqual(next.outcome, { ok: true, value: "ok", truncated: false });
    await within(spinning!.exited, 2000, "spinning process exit");
    assert.equal(await processAlive(spinning!.pid), false);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a call that waits is stopped at its timeout without killing the process", async () => {
  const sandbox = createSandbox({ cacheDir: null, describeTimeoutMs: 300 });
  try {
    // Times out loading, in the process the call will use (same grant).
    await sandbox.resolvePermissions(fixture("never_loads"), "default", {})
      .catch(() => {});
    const [proc] = sandbox.processes();
    const { outcome } = await callFixture(sandbox, "never_loads", {
      timeoutMs: 300,
    });
    assert.equal(!outcome.ok && outcome.code, "timeout");
    await assertNormalCallWorks(sandbox);
    // Read again: an entry of processes() is a snapshot of its moment.
    const [after] = sandbox.processes();
    assert.equal(after?.pid, proc!.pid);
    assert.equal(after?.tainted, false);
    assert.equal(await processAlive(proc!.pid), true);
  } finally {
    await sandbox.close();
  }
});

Deno.test("exhausting the heap fails with out_of_memory", async () => {
  const sandbox = createSandbox({ cacheDir: null, memoryMb: 96 });
  try {
    const { outcome } = await callFixture(sandbox, "oom", {
      timeoutMs: 20_000,
    });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.code, "out_of_memory");
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("Deno.exit(1) fails with a retryable sandbox_crash", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const { outcome } = await callFixture(sandbox, "exit", {
      timeoutMs: 5000,
    });
    assert.equal(outcome.ok, false);
    // A crash, not the deadline: had the host missed the exit, the call
    // would end at its timeout, with the code "timeout".
    if (!outcome.ok) {
      assert.equal(outcome.code, "sandbox_crash");
      assert.equal(outcome.retryable, true);
    }
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a module that never finishes loading is reported by describe", async () => {
  const sandbox = createSandbox({ cacheDir: null, describeTimeoutMs: 400 });
  try {
    const [hung, normal] = await Promise.all([
      sandbox.describe(fixture("never_loads")),
      sandbox.describe(fixture("add")),
    ]);
    assert.deepEqual(hung.definitions, []);
    assert.match(hung.error ?? "", /Timed out after 400 ms/);
    assert.equal(normal.error, null);
    assert.equal(normal.definitions[0]?.name, "add");
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("100 MB printed to stdout neither corrupts the pipe nor stalls the call", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const { outcome } = await callFixture(sandbox, "big_output", {
      timeoutMs: 30_000,
    });
    assert.deepEqual(valueOf(outcome), { printed: 100 });
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a 100 MB result is cut to the limit and marked truncated", async () => {
  const sandbox = createSandbox({ cacheDir: null, maxResultBytes: 1000 });
  try {
    const { outcome } = await callFixture(sandbox, "big_result", {
      timeoutMs: 30_000,
    });
    assert.equal(outcome.ok, true);
    if (outcome.ok) {
      assert.equal(outcome.truncated, true);
      assert.equal(outcome.value, "y".repeat(1000));
    }
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("200,000 events in a tight loop are bounded and the last progress arrives", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const { outcome, events } = await callFixture(sandbox, "event_flood", {
      timeoutMs: 30_000,
    });
    assert.deepEqual(valueOf(outcome), { emitted: 200_000 });
    assert.ok(
      events.length <= 2048,
      `${events.length} events reached the host`,
    );
    const progress = events.filter((e) => e.kind === "progress");
    assert.deepEqual(progress.at(-1)?.data, {
      pct: 100,
      message: "step 100000",
    });
    assert.ok(
      events.some((e) => /Dropped \d+ events/.test(String(e.data.message))),
      "the drop is reported",
    );
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("cancelling through hooks.signal ends the call", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const controller = new AbortController();
    const pending = callFixture(sandbox, "busy_loop", {
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    controller.abort();
    const { outcome } = await pending;
    assert.equal(outcome.ok, false);
    // Cancelled, not ended by its deadline ("Timed out after 10000 ms").
    assert.match(!outcome.ok ? outcome.message : "", /cancelled/);
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});
