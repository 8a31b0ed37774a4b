import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  EmptyResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CallSignal,
  raceAbort,
  settlesWithin,
  startDeadline,
  unwatchAbort,
  watchAbort,
} from "./deadline.ts";

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

Deno.test("watchAbort cancels what is still watched, once, with the signal's reason", () => {
  const session = new AbortController();
  const seen: unknown[] = [];
  const items = Array.from({ length: 4 }, (_, i) => ({
    cancel: (reason: unknown) => seen.push([i, reason]),
  }));
  for (const item of items) watchAbort(session.signal, item);
  unwatchAbort(session.signal, items[1]!);
  unwatchAbort(session.signal, items[1]!);
  const reason = new Error("ended");
  session.abort(reason);
  session.abort(new Error("again"));
  assert.deepEqual(seen, [[0, reason], [2, reason], [3, reason]]);
});

Deno.test("watchAbort keeps the signals apart", () => {
  const a = new AbortController();
  const b = new AbortController();
  let cancelled = 0;
  watchAbort(a.signal, { cancel: () => cancelled++ });
  watchAbort(b.signal, { cancel: () => cancelled += 10 });
  b.abort();
  assert.equal(cancelled, 10);
});

Deno.test("CallSignal aborts with whichever signal aborts first, once", async (t) => {
  for (const first of ["session", "caller"] as const) {
    await t.step(first, () => {
      const session = new AbortController();
      const caller = new AbortController();
      const call = new CallSignal(session.signal, caller.signal);
      const fired: unknown[] = [];
      call.signal.addEventListener(
        "abort",
        () => fired.push(call.signal.reason),
      );
      const [a, b] = first === "session"
        ? [session, caller]
        : [caller, session];
      a.abort(first);
      b.abort("second");
      assert.deepEqual(fired, [first]);
    });
  }
});

Deno.test("CallSignal starts aborted when a signal already is, the session's reason first", () => {
  const both = new CallSignal(
    AbortSignal.abort("session"),
    AbortSignal.abort("caller"),
  );
  assert.equal(both.signal.reason, "session");
  const caller = new CallSignal(
    new AbortController().signal,
    AbortSignal.abort("caller"),
  );
  assert.equal(caller.signal.reason, "caller");
  caller.release();
});

Deno.test("CallSignal released follows neither signal", () => {
  const session = new AbortController();
  const caller = new AbortController();
  const call = new CallSignal(session.signal, caller.signal);
  call.release();
  call.release();
  caller.abort();
  session.abort();
  assert.equal(call.signal.aborted, false);
});

Deno.test("CallSignal of one signal aborts the followers still running, with the reason, and only those", () => {
  const session = new AbortController();
  const followers = Array.from(
    { length: 5 },
    () => new CallSignal(session.signal),
  );
  followers[1]!.release();
  followers[3]!.release();
  followers[3]!.release();
  const reason = new Error("session ended");
  session.abort(reason);
  assert.deepEqual(
    followers.map((f) => f.signal.aborted),
    [true, false, true, false, true],
  );
  assert.equal(followers[0]!.signal.reason, reason);
  const late = new CallSignal(session.signal);
  assert.equal(late.signal.aborted, true);
  assert.equal(late.signal.reason, reason);
});

// A client and a server that counts the cancellations it is sent.
async function connected() {
  const server = new Server({ name: "s", version: "1" }, {
    capabilities: { tools: {} },
  });
  let cancelled = 0;
  server.setNotificationHandler(CancelledNotificationSchema, () => {
    cancelled++;
  });
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "c", version: "1" });
  await client.connect(b);
  // A request after the notifications: they arrive first, in order.
  const count = async () => {
    await client.request({ method: "ping" }, EmptyResultSchema);
    return cancelled;
  };
  return { client, count, close: () => client.close() };
}

Deno.test("calls of a long session with CallSignal send no cancellation of answered requests when it ends", async () => {
  const { client, count, close } = await connected();
  const session = new AbortController();
  for (let i = 0; i < 20; i++) {
    const follower = new CallSignal(session.signal);
    try {
      await client.callTool({ name: "t", arguments: {} }, undefined, {
        signal: follower.signal,
      });
    } finally {
      follower.release();
    }
  }
  session.abort(new Error("session ended"));
  assert.equal(await count(), 0);
  await close();
});

Deno.test("the SDK's client, given the session's signal itself, cancels every answered request when it ends (why CallSignal exists)", async () => {
  const { client, count, close } = await connected();
  const session = new AbortController();
  for (let i = 0; i < 20; i++) {
    await client.callTool({ name: "t", arguments: {} }, undefined, {
      signal: session.signal,
    });
  }
  session.abort(new Error("session ended"));
  assert.equal(await count(), 20);
  await close();
});

Deno.test("startDeadline() keeps a deadline longer than a timer can wait", async () => {
  // Deno's setTimeout cuts a delay over 2^31-1 ms to 1 ms.
  const deadline = startDeadline(2 ** 31, { onTimeout: () => "late" });
  // Timers fire in due order: a 1 ms timer set before this one fires first.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(deadline.signal.aborted, false);
  deadline.dispose();
});

Deno.test("raceAbort() on a signal already aborted still handles the work's later failure", async () => {
  const controller = new AbortController();
  controller.abort(new Error("timed out"));
  // Work started before the race, failing once it sees the signal: left
  // unhandled, its rejection would end the host's process.
  const work = Promise.reject(new Error("aborted work"));
  await assert.rejects(raceAbort(work, controller.signal), /timed out/);
});
