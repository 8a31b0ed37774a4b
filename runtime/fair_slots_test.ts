import assert from "node:assert/strict";
import { FairSlots, runsCode } from "./fair_slots.ts";

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
