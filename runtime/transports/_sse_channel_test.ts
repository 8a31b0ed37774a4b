import assert from "node:assert/strict";
import { Channel, REPLAY_LIMIT } from "./_sse_channel.ts";
import type { Session } from "../session.ts";

const channel = () => new Channel({} as Session);

Deno.test("Channel counts the backlog of the queue and take() empties it", () => {
  const c = channel();
  c.push("abc");
  c.push("de");
  assert.equal(c.backlog, 5);
  assert.deepEqual(c.take().map((m) => m.text), ["abc", "de"]);
  assert.equal(c.backlog, 0);
  assert.deepEqual(c.queue, []);
  c.push("f");
  assert.deepEqual(c.take().map((m) => m.seq), [3]);
});

Deno.test("Channel keeps at most REPLAY_LIMIT sent messages for a replay", () => {
  const c = channel();
  for (let i = 0; i < REPLAY_LIMIT + 5; i++) c.push("x");
  c.take();
  assert.equal(c.sent.length, REPLAY_LIMIT);
  assert.equal(c.sent[0]?.seq, 6);
});

Deno.test("Channel.resume() puts what the old stream lost before what is queued", () => {
  const c = channel();
  c.push("1");
  c.push("2");
  c.push("3");
  c.take();
  c.push("4");
  c.resume(1);
  assert.deepEqual(c.queue.map((m) => m.text), ["2", "3", "4"]);
  assert.equal(c.backlog, 3);
  assert.deepEqual(c.sent, []);
});

Deno.test("Channel.wait() ends on push, and on its own after the time", async () => {
  const c = channel();
  const woken = c.wait(60_000);
  c.push("x");
  await woken;
  const start = performance.now();
  await c.wait(20);
  assert.ok(performance.now() - start >= 15);
  c.wake(); // nothing waits: no effect
});
