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

Deno.test("20 000 waiters on a session's signal all leave soon after it aborts", async () => {
  const limit = new Semaphore(1);
  const release = limit.tryAcquire()!;
  const session = new AbortController();
  const count = 20_000;
  const waits: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    waits.push(limit.acquire(session.signal).catch(() => "cancelled"));
  }
  assert.equal(limit.waiting, count);
  const started = performance.now();
  session.abort(new Error("client left"));
  const outcomes = await Promise.all(waits);
  const took = performance.now() - started;
  assert.ok(outcomes.every((outcome) => outcome === "cancelled"));
  assert.equal(limit.waiting, 0);
  // Quadratic work took about a minute here; linear work takes well under 1 s.
  assert.ok(took < 4000, `letting ${count} waiters go took ${took} ms`);
  release();
  assert.equal(limit.active, 0);
});
