/**
 * A session's calls waiting for its `max_parallel` slots leave their line
 * in time linear in their number: the host has one thread, and a client
 * that queues tens of thousands of small calls behind a slow one and then
 * goes away must not stall every other session while the host lets them
 * go. Every such call waits on the session's one signal; with a listener
 * per waiter, each one leaving scanned all the others (20 000 calls left
 * by a closed session took over a minute of the host's thread).
 */

import assert from "node:assert/strict";
import { Semaphore } from "../../runtime/slots.ts";

Deno.test("20 000 waiters on a session's signal share one abort listener", async () => {
  const limit = new Semaphore(1);
  const release = limit.tryAcquire()!;
  const session = new AbortController();
  // The signal's listeners, counted as they come and go: removing one
  // scans all the others, so one each makes the waiters' leaving quadratic.
  const signal = session.signal;
  let listeners = 0;
  let most = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => {
    most = Math.max(most, ++listeners);
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<typeof remove>) => {
    listeners--;
    remove(...args);
  };
  const count = 20_000;
  const waits: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    waits.push(limit.acquire(signal).catch(() => "cancelled"));
  }
  assert.equal(limit.waiting, count);
  session.abort(new Error("client left"));
  const outcomes = await Promise.all(waits);
  assert.ok(outcomes.every((outcome) => outcome === "cancelled"));
  assert.equal(limit.waiting, 0);
  assert.equal(most, 1, `${most} abort listeners on the session's signal`);
  release();
  assert.equal(limit.active, 0);
});
