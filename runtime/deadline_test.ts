import assert from "node:assert/strict";
import { raceAbort, settlesWithin, startDeadline } from "./deadline.ts";

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );

Deno.test("startDeadline() aborts with the timeout reason at the deadline", async () => {
  const deadline = startDeadline(5, { onTimeout: () => new Error("late") });
  try {
    assert.ok(await settlesWithin(aborted(deadline.signal), 5000));
    assert.equal((deadline.signal.reason as Error).message, "late");
    assert.equal(deadline.remainingMs(), 1);
  } finally {
    deadline.dispose();
  }
});

Deno.test("startDeadline() follows its parent with the cancel reason", () => {
  const parent = new AbortController();
  const deadline = startDeadline(60_000, {
    parent: parent.signal,
    onTimeout: () => new Error("late"),
    onCancel: (why) => new Error(`cancelled: ${why}`),
  });
  assert.equal(deadline.signal.aborted, false);
  assert.ok(deadline.remainingMs() > 50_000);
  parent.abort("client left");
  assert.equal(
    (deadline.signal.reason as Error).message,
    "cancelled: client left",
  );
  deadline.dispose();
});

Deno.test("startDeadline() without onCancel takes the parent's reason", () => {
  const parent = new AbortController();
  const deadline = startDeadline(60_000, {
    parent: parent.signal,
    onTimeout: () => "late",
  });
  parent.abort("why");
  assert.equal(deadline.signal.reason, "why");
  deadline.dispose();
});

Deno.test("Deadline.dispose() aborts what still runs and forgets the parent", () => {
  const parent = new AbortController();
  const deadline = startDeadline(60_000, {
    parent: parent.signal,
    onTimeout: () => "late",
    onCancel: () => "cancelled",
  });
  deadline.dispose();
  assert.equal(deadline.signal.aborted, true);
  assert.notEqual(deadline.signal.reason, "late");
  parent.abort("after");
  assert.notEqual(deadline.signal.reason, "cancelled");
});

Deno.test("raceAbort() resolves with the work, or rejects as the signal aborts", async () => {
  const controller = new AbortController();
  assert.equal(await raceAbort(Promise.resolve(7), controller.signal), 7);
  await assert.rejects(
    raceAbort(Promise.reject(new Error("own")), controller.signal),
    /own/,
  );
  const hanging = raceAbort(new Promise(() => {}), controller.signal);
  controller.abort(new Error("stopped"));
  await assert.rejects(hanging, /stopped/);
  await assert.rejects(
    raceAbort(Promise.resolve(1), controller.signal),
    /stopped/,
  );
});

Deno.test("settlesWithin() counts a rejection as settled", async () => {
  assert.equal(await settlesWithin(Promise.reject(new Error("x")), 1000), true);
  assert.equal(await settlesWithin(new Promise(() => {}), 1), false);
});
