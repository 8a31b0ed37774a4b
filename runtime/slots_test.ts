import assert from "node:assert/strict";
import { FairSlots, runsCode, Semaphore, WaitQueue } from "./slots.ts";

Deno.test("WaitQueue hands values out in arrival order, a front waiter first", async () => {
  const queue = new WaitQueue<string>();
  const order: string[] = [];
  const waits = ["a", "b"].map((name) =>
    queue.wait().then((value) => order.push(`${name}:${value}`))
  );
  const front = queue.wait({ front: true }).then((value) =>
    order.push(`front:${value}`)
  );
  assert.equal(queue.length, 3);
  for (const value of ["1", "2", "3"]) assert.ok(queue.handOver(value));
  assert.equal(queue.handOver("4"), false);
  await Promise.all([...waits, front]);
  assert.deepEqual(order, ["front:1", "a:2", "b:3"]);
});

Deno.test("WaitQueue drops a waiter whose signal aborts, and tells its owner", async () => {
  let left = 0;
  const queue = new WaitQueue<number>(() => left++);
  const controller = new AbortController();
  const first = queue.wait({ signal: controller.signal });
  const second = queue.wait();
  controller.abort(new Error("gone"));
  await assert.rejects(first, /gone/);
  assert.equal(queue.length, 1);
  assert.equal(left, 1);
  queue.handOver(7);
  assert.equal(await second, 7);
  await assert.rejects(queue.wait({ signal: controller.signal }), /gone/);
  assert.equal(queue.length, 0, "an aborted signal never joins the line");
});

Deno.test("WaitQueue gives up at the deadline with the reason it is given", async () => {
  let left = 0;
  const queue = new WaitQueue(() => left++);
  const waiting = queue.wait({
    deadline: performance.now() + 1,
    onTimeout: (ms) => new Error(`waited ${ms} ms`),
  });
  const kept = queue.wait({ deadline: performance.now() + 60_000 });
  await assert.rejects(waiting, /^Error: waited \d+ ms$/);
  assert.equal(queue.length, 1);
  assert.equal(left, 1);
  queue.wake();
  await kept;
  const bare = queue.wait({ deadline: performance.now() });
  await assert.rejects(bare, (e: Error) => e.name === "TimeoutError");
});

Deno.test("WaitQueue forgets the deadline of a waiter handed its value", async () => {
  const queue = new WaitQueue();
  let timeouts = 0;
  const handed = queue.wait({
    deadline: performance.now() + 1,
    onTimeout: () => new Error(`timed out ${++timeouts}`),
  });
  queue.wake();
  await handed;
  // A later deadline passing means the earlier one's timer would have fired.
  const later = queue.wait({ deadline: performance.now() + 20 });
  await assert.rejects(later, (e: Error) => e.name === "TimeoutError");
  assert.equal(timeouts, 0);
});

Deno.test("WaitQueue.wake() wakes at most the count, oldest first", async () => {
  const queue = new WaitQueue();
  const woken: number[] = [];
  const waits = [0, 1, 2].map((n) => queue.wait().then(() => woken.push(n)));
  queue.wake(2);
  assert.equal(queue.length, 1);
  await Promise.all(waits.slice(0, 2));
  assert.deepEqual(woken, [0, 1]);
  queue.wake(0);
  assert.equal(queue.length, 1);
  queue.wake();
  await waits[2];
  assert.deepEqual(woken, [0, 1, 2]);
});

Deno.test("WaitQueue.firstArrival compares the first waiters of two queues", () => {
  const a = new WaitQueue();
  const b = new WaitQueue();
  assert.equal(a.firstArrival, Infinity);
  void b.wait();
  void a.wait();
  assert.ok(b.firstArrival < a.firstArrival);
  b.wake();
  a.wake();
});

Deno.test("Semaphore hands slots out in arrival order", async () => {
  const gate = new Semaphore(1);
  const order: number[] = [];
  const first = await gate.acquire();
  const waiters = [1, 2, 3].map((n) =>
    gate.acquire().then((release) => {
      order.push(n);
      release();
    })
  );
  first();
  await Promise.all(waiters);
  assert.deepEqual(order, [1, 2, 3]);
  assert.equal(gate.active, 0);
});

Deno.test("Semaphore drops a waiter whose signal aborts", async () => {
  const gate = new Semaphore(1);
  const held = await gate.acquire();
  const controller = new AbortController();
  const waiting = gate.acquire(controller.signal);
  controller.abort(new Error("gone"));
  await assert.rejects(waiting, /gone/);
  assert.equal(gate.waiting, 0);
  held();
  assert.equal(gate.active, 0);
  assert.throws(() => new Semaphore(0), RangeError);
});

Deno.test("Semaphore.tryAcquire() takes a free slot and never jumps the queue", async () => {
  const gate = new Semaphore(1);
  const held = gate.tryAcquire();
  assert.ok(held);
  assert.equal(gate.active, 1);
  const waiting = gate.acquire();
  assert.equal(gate.tryAcquire(), null, "no slot while one is held");
  held();
  // The slot went to the waiter, so a try still finds none.
  assert.equal(gate.tryAcquire(), null);
  (await waiting)();
  const again = gate.tryAcquire();
  assert.ok(again);
  again();
  again();
  assert.equal(gate.active, 0, "a release is idempotent");
});

const owner = (session: string, token = "") => ({ session, token });

Deno.test("FairSlots gives every session one call even when the pool is held", async () => {
  const slots = new FairSlots(2);
  // Eight sessions each hold two calls that never end: floors plus the pool.
  for (let i = 0; i < 8; i++) {
    await slots.acquire(owner(`s${i}`));
  }
  await slots.acquire(owner("s0"));
  await slots.acquire(owner("s1"));
  assert.equal(slots.pooled, 2);
  const stuck = slots.acquire(owner("s2"));
  assert.equal(slots.waiting, 1);
  // A new session's call starts at once.
  const release = await slots.acquire(owner("new"));
  assert.equal(slots.running, 11);
  release();
  assert.equal(slots.running, 10);
  void stuck;
});

Deno.test("FairSlots hands a freed pool slot to the session holding fewest", async () => {
  const slots = new FairSlots(2);
  await slots.acquire(owner("a"));
  await slots.acquire(owner("b"));
  const a1 = await slots.acquire(owner("a"));
  await slots.acquire(owner("a"));
  assert.equal(slots.pooled, 2);
  const order: string[] = [];
  // "a" asks first, but "b" holds no pool slot.
  const moreA = slots.acquire(owner("a")).then(() => order.push("a"));
  const moreB = slots.acquire(owner("b")).then(() => order.push("b"));
  a1();
  await moreB;
  assert.deepEqual(order, ["b"]);
  assert.equal(slots.waiting, 1);
  void moreA;
});

Deno.test("FairSlots shares the pool between tokens before sessions", async () => {
  const slots = new FairSlots(2);
  // Token t1's session x holds its floor and both pool slots; t2's w its floor.
  await slots.acquire(owner("x", "t1"));
  const held = await slots.acquire(owner("x", "t1"));
  await slots.acquire(owner("x", "t1"));
  await slots.acquire(owner("w", "t2"));
  await slots.acquire(owner("y", "t1"));
  const order: string[] = [];
  // y (t1) asks first and holds no pool slot, but its token holds one more.
  const y = slots.acquire(owner("y", "t1")).then(() => order.push("y"));
  const w = slots.acquire(owner("w", "t2")).then(() => order.push("w"));
  held();
  await w;
  assert.deepEqual(order, ["w"]);
  assert.equal(slots.waiting, 1);
  void y;
});

Deno.test("FairSlots holds a token to its max_parallel quota", async () => {
  const slots = new FairSlots(8);
  const capped = (s: string) => ({ session: s, token: "t", tokenLimit: 2 });
  const first = await slots.acquire(capped("a"));
  await slots.acquire(capped("b"));
  let third = false;
  const pending = slots.acquire(capped("c")).then((r) => {
    third = true;
    return r;
  });
  await Promise.resolve();
  assert.equal(third, false);
  assert.equal(slots.waiting, 1);
  // Another token is not held back.
  (await slots.acquire(owner("d", "other")))();
  first();
  (await pending)();
  assert.equal(third, true);
});

Deno.test("FairSlots drops a waiter whose signal aborts", async () => {
  const slots = new FairSlots(1);
  await slots.acquire(owner("a"));
  await slots.acquire(owner("a"));
  const controller = new AbortController();
  const waiting = slots.acquire(owner("a"), controller.signal);
  controller.abort(new Error("gone"));
  await assert.rejects(waiting, /gone/);
  assert.equal(slots.waiting, 0);
});

Deno.test("FairSlots keeps no record of the tokens of sessions gone idle", async () => {
  const slots = new FairSlots(4);
  // A host without auth takes whatever token a client names.
  const held = await slots.acquire(owner("keep", "kept"));
  for (let i = 0; i < 5000; i++) {
    (await slots.acquire(owner(`s${i}`, `t${i}`)))();
  }
  assert.ok(slots.tokensKept <= 2048, `kept ${slots.tokensKept}`);
  // The token of a running call keeps its one record: its limit still holds.
  const capped = (s: string) => ({ session: s, token: "kept", tokenLimit: 2 });
  const second = await slots.acquire(capped("keep2"));
  let third = false;
  const pending = slots.acquire(capped("keep3")).then((r) => {
    third = true;
    return r;
  });
  await Promise.resolve();
  assert.equal(third, false);
  held();
  second();
  (await pending)();
  assert.equal(third, true);
});

Deno.test("runsCode() lets lists, discovery and configuration skip slots", () => {
  for (
    const type of [
      "tool/list/req",
      "toolkit/list/req",
      "toolkit/configure/req",
      "skill/discover/req",
    ]
  ) assert.equal(runsCode(type), false, type);
  assert.equal(runsCode("tool/call/req"), true);
  assert.equal(runsCode("skill/call/req"), true);
});

Deno.test("FairSlots without floors runs at most its limit, whatever the sessions", async () => {
  const slots = new FairSlots(2, { floors: false });
  const a = slots.tryAcquire({ session: "a", token: "" });
  const b = slots.tryAcquire({ session: "b", token: "" });
  assert.ok(a && b);
  // With floors, a third session would start at once on its own slot.
  assert.equal(slots.tryAcquire({ session: "c", token: "" }), null);
  const c = slots.acquire({ session: "c", token: "" });
  assert.equal(slots.waiting, 1);
  a();
  (await c)();
  b();
  assert.equal(slots.running, 0);
});
