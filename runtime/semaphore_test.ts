import assert from "node:assert/strict";
import { Semaphore } from "./semaphore.ts";

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
