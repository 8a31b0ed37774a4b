import assert from "node:assert/strict";
import { Session } from "./session.ts";

Deno.test("Session.drain waits for every request begun until each has ended", async () => {
  const session = new Session({ send() {} });
  assert.equal(await session.drain(10), true);
  session.begin();
  session.begin();
  assert.equal(session.inFlight, 2);
  const drained = session.drain(5_000);
  session.end();
  assert.equal(session.inFlight, 1);
  setTimeout(() => session.end(), 0);
  assert.equal(await drained, true);
  assert.equal(session.inFlight, 0);
});

Deno.test("Session.drain gives up after its bound when a request never ends", async () => {
  const session = new Session({ send() {} });
  session.begin();
  assert.equal(await session.drain(5), false);
  session.end();
  assert.equal(await session.drain(5), true);
});

Deno.test("Session.shutdown refuses new requests, lets those in flight end, then closes", async () => {
  const session = new Session({ send() {} });
  session.begin();
  const done = session.shutdown(5_000, "going away");
  assert.equal(session.draining, true);
  assert.equal(session.closed, false);
  session.end();
  await done;
  assert.equal(session.closed, true);
  assert.match(String(session.signal.reason), /going away/);
});

Deno.test("Session.close ends the session once: closed, signal aborted, send dropped", () => {
  const sent: unknown[] = [];
  let ended = 0;
  const session = new Session({
    send: (m) => sent.push(m),
    onEnd: () => ended++,
  });
  assert.equal(session.closed, false);
  session.close("bye");
  session.close("again");
  assert.equal(session.closed, true);
  assert.ok(session.signal.aborted);
  assert.equal(ended, 1);
  session.send({ type: "pong", id: "x", version: "1.0", ts: 0 } as never);
  assert.deepEqual(sent, []);
});

Deno.test("Session.drain() waits out a bound longer than a timer can", async () => {
  // A shutdown's `timeout` is the client's: 3e6 s is 2^31 ms and more, which
  // Deno's setTimeout cut to 1 ms, cancelling the calls it asked to wait for.
  const session = new Session({ send: () => {} });
  session.begin();
  const drained = session.drain(3e6 * 1000);
  let settled = false;
  drained.then(() => settled = true);
  // Timers fire in due order: a 1 ms timer set before this one fires first.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(settled, false);
  session.end();
  assert.equal(await drained, true);
});

Deno.test("Session keeps the token it was accepted with: a refused or pending one may still change", () => {
  const session = new Session({ send() {} });
  session.authenticate("refused", "wrong");
  session.authenticate("accepted", "t1");
  assert.throws(
    () => session.authenticate("accepted", "t2"),
    (error: unknown) =>
      error instanceof TypeError &&
      /^Cannot change the session's token/.test(error.message),
  );
  assert.throws(() => session.authenticate("refused", "t1"), TypeError);
  assert.deepEqual([session.auth, session.token], ["accepted", "t1"]);
});

Deno.test("Session bounds what waits for its slots: the first waiter always gets room, and room given back is free again", () => {
  const session = new Session({ send() {} });
  assert.equal(session.holdWaiting(150, 100), true);
  assert.equal(session.holdWaiting(1, 100), false);
  assert.equal(session.waitingWeight, 150);
  session.releaseWaiting(150);
  assert.equal(session.holdWaiting(60, 100), true);
  assert.equal(session.holdWaiting(40, 100), true);
  assert.equal(session.holdWaiting(1, 100), false);
  session.releaseWaiting(60);
  session.releaseWaiting(40);
  assert.equal(session.waitingWeight, 0);
});

Deno.test("Session.send answers a request whose answer cannot be encoded with an error", () => {
  const wire: string[] = [];
  // As the WebSocket, SSE and stdio transports do: encode, then write.
  const session = new Session({
    send: (m) => wire.push(JSON.stringify(m)),
  });
  const cyclic: Record<string, unknown> = { type: "pong", req_id: "r1" };
  cyclic.self = cyclic;
  session.send(cyclic as never);
  // Before: the TypeError was taken for a failed transport, and the
  // request was never answered.
  assert.equal(wire.length, 1);
  const answer = JSON.parse(wire[0]!);
  assert.equal(answer.type, "error");
  assert.equal(answer.req_id, "r1");
  assert.equal(answer.code, "runtime_error");
  assert.match(answer.message, /^Cannot encode the answer to "pong": /);
  // An event that cannot be encoded is dropped: its call's answer follows.
  session.send({ type: "tool/call/event", req_id: "r2", n: 1n } as never);
  assert.equal(wire.length, 1);
});
