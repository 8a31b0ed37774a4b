import assert from "node:assert/strict";
import { fakeTools } from "../support/fake_capability.ts";
import { startHost } from "../support/host.ts";
import {
  assertEnvelope,
  assertError,
  assertEvent,
  assertHandshake,
  assertPong,
  coreConformance,
  RAW,
} from "../support/wire.ts";
import { openWs } from "../support/ws_client.ts";

Deno.test("WebSocket: core exchanges are complete and echo req_id", async () => {
  await using t = await startHost();
  const ws = await openWs(t.wsUrl);
  await coreConformance(ws.send, () => ws.next());
  await ws.close();
});

Deno.test("WebSocket: the handshake accepts only asked-and-served capabilities", async (t) => {
  await using h = await startHost({ capabilities: [fakeTools().capability] });
  const ws = await openWs(h.wsUrl);
  await t.step("a client naming no capability gets all served", async () => {
    ws.send(RAW.handshake("a"));
    assertHandshake(await ws.next(), "a", { ok: true, caps: ["tools"] });
  });
  await t.step("asked and served intersect", async () => {
    ws.send(RAW.handshake("b", { agent_caps: ["tools", "skill", "bogus"] }));
    assertHandshake(await ws.next(), "b", { ok: true, caps: ["tools"] });
    ws.send(RAW.handshake("c", { agent_caps: ["skill"] }));
    assertHandshake(await ws.next(), "c", { ok: true, caps: [] });
  });
  await t.step("max_parallel is the configured limit", async () => {
    ws.send(RAW.handshake("d"));
    assert.equal((await ws.next()).max_parallel, 4);
  });
  await ws.close();
});

Deno.test("WebSocket: a wrong token is refused and later requests are unauthorized", async () => {
  await using t = await startHost({ config: { tokens: ["s3cret"] } });
  const ws = await openWs(t.wsUrl);
  ws.send(RAW.ping("early"));
  assertError(await ws.next(), "unauthorized", "early");
  ws.send(RAW.handshake("h", { auth_token: "wrong" }));
  assertHandshake(await ws.next(), "h", { ok: false, caps: [] });
  ws.send(RAW.ping("p"));
  assertError(await ws.next(), "unauthorized", "p", /refused/);
  ws.send('{"type":"tool/list/req","id":"l"}');
  assertError(await ws.next(), "unauthorized", "l");
  ws.send(RAW.handshake("h2", { auth_token: "s3cret" }));
  assertHandshake(await ws.next(), "h2", { ok: true });
  ws.send(RAW.ping("p2"));
  assertPong(await ws.next(), "p2");
  await ws.close();
});

Deno.test("WebSocket: a capability's events stream before its final answer", async () => {
  await using t = await startHost({ capabilities: [fakeTools().capability] });
  const ws = await openWs(t.wsUrl);
  ws.send(JSON.stringify({
    type: "tool/call/req",
    id: "call1",
    tool_name: "stream",
    arguments: { count: 3 },
    streaming: true,
  }));
  for (let seq = 0; seq < 3; seq++) {
    const event = await ws.next();
    assertEvent(event, "tool/event", "call1");
    assert.equal(event.seq, seq);
  }
  const resp = await ws.next();
  assertEnvelope(resp, "tool/call/resp");
  assert.equal(resp.req_id, "call1");
  const data = resp.data as Record<string, unknown>;
  assert.equal(data.success, true);
  assert.equal(data.tool_name, "stream");
  assert.ok(Number.isInteger(data.duration_ms));
  assert.equal(typeof resp.created_at, "number");
  await ws.close();
});

Deno.test("WebSocket: closing the socket aborts the call's signal", async () => {
  const fake = fakeTools();
  await using t = await startHost({ capabilities: [fake.capability] });
  const ws = await openWs(t.wsUrl);
  ws.send(JSON.stringify({
    type: "tool/call/req",
    id: "h",
    tool_name: "hang",
    arguments: {},
  }));
  await fake.hanging;
  await ws.close();
  const reason = await fake.aborted;
  assert.match(String((reason as Error).message), /WebSocket closed/);
  assert.equal(t.host.sessionCount, 0);
});

Deno.test("WebSocket: shutdown drains in-flight calls, then closes the socket", async () => {
  const fake = fakeTools();
  await using t = await startHost({ capabilities: [fake.capability] });
  const ws = await openWs(t.wsUrl);
  ws.send(
    '{"type":"tool/call/req","id":"g","tool_name":"gate","arguments":{}}',
  );
  ws.send(RAW.ping("sync")); // answered after the call started
  await ws.next();
  ws.send('{"type":"shutdown","id":"s","timeout":5}');
  ws.send(
    '{"type":"tool/call/req","id":"late","tool_name":"echo","arguments":{}}',
  );
  assertError(await ws.next(), "invalid_message", "late", /shutting down/);
  fake.gate.open();
  const resp = await ws.next();
  assert.equal(resp.type, "tool/call/resp");
  assert.equal(resp.req_id, "g");
  assert.equal((await ws.closed).code, 1000);
});

Deno.test("WebSocket: max_parallel queues calls beyond the limit, none dropped", async () => {
  const fake = fakeTools();
  await using t = await startHost({
    capabilities: [fake.capability],
    config: { limits: { maxParallel: 2 } },
  });
  const ws = await openWs(t.wsUrl);
  for (let i = 0; i < 5; i++) {
    ws.send(JSON.stringify({
      type: "tool/call/req",
      id: `g${i}`,
      tool_name: "gate",
      arguments: {},
    }));
  }
  const ids = new Set<string>();
  while (ids.size < 5) {
    // Open the gate for whoever runs now, then collect their answers.
    ws.send(RAW.ping(`sync${ids.size}`));
    const pong = await ws.next();
    assert.equal(pong.type, "pong");
    assert.ok(fake.gate.running <= 2);
    fake.gate.open();
    const running = Math.min(2, 5 - ids.size);
    for (let i = 0; i < running; i++) {
      const resp = await ws.next();
      assert.equal(resp.type, "tool/call/resp");
      ids.add(String(resp.req_id));
    }
  }
  assert.equal(fake.gate.peak, 2);
  await ws.close();
});
