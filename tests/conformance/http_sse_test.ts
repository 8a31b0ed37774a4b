import assert from "node:assert/strict";
import { fakeTools } from "../support/fake_capability.ts";
import { startHost } from "../support/host.ts";
import { openSse } from "../support/sse_client.ts";
import {
  assertEnvelope,
  assertHandshake,
  assertPong,
  coreConformance,
  RAW,
} from "../support/wire.ts";

Deno.test("HTTP+SSE: core exchanges are complete and echo req_id", async () => {
  await using t = await startHost();
  const client = await openSse(t.sseUrl);
  const stream = await client.stream();
  await coreConformance(async (raw) => {
    const res = await client.send(raw);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
  }, () => stream.next());
  await stream.close();
});

Deno.test("HTTP+SSE: routes answer as the Python SDK expects", async () => {
  await using t = await startHost();
  const health = await fetch(`${t.sseUrl}/health`);
  assert.deepEqual(await health.json(), { status: "ok" });
  const root = await fetch(`${t.url}/health`);
  assert.equal((await root.json()).status, "ok");
  const session = await fetch(`${t.sseUrl}/session`, { method: "POST" });
  const body = await session.json();
  assert.equal(typeof body.session_id, "string");
  const stream = await fetch(`${t.sseUrl}/stream`, {
    headers: { "x-session-id": body.session_id },
  });
  assert.equal(stream.headers.get("content-type"), "text/event-stream");
  await stream.body?.cancel();
});

Deno.test("HTTP+SSE: messages sent before the stream connects are delivered", async () => {
  await using t = await startHost();
  const client = await openSse(t.sseUrl);
  // The SDK posts its handshake before it opens /stream.
  await (await client.send(RAW.handshake("h"))).body?.cancel();
  await (await client.send(RAW.ping("p"))).body?.cancel();
  const stream = await client.stream();
  assertHandshake(await stream.next(), "h", { ok: true });
  assertPong(await stream.next(), "p");
  await stream.close();
});

Deno.test("HTTP+SSE: a capability's events reach the stream", async () => {
  await using t = await startHost({ capabilities: [fakeTools().capability] });
  const client = await openSse(t.sseUrl);
  const stream = await client.stream();
  await (await client.send(JSON.stringify({
    type: "tool/call/req",
    id: "c",
    tool_name: "stream",
    arguments: { count: 2 },
  }))).body?.cancel();
  for (const seq of [0, 1]) {
    const event = await stream.next();
    assertEnvelope(event, "tool/event");
    assert.equal(event.seq, seq);
  }
  const resp = await stream.next();
  assertEnvelope(resp, "tool/call/resp");
  assert.equal(resp.req_id, "c");
  await stream.close();
});

Deno.test("HTTP+SSE: an idle transport session expires and cancels its calls", async () => {
  const fake = fakeTools();
  await using t = await startHost({
    capabilities: [fake.capability],
    // Long enough that the call below lands before the session expires even
    // on a loaded machine; a send that came too late fails on its status
    // instead of leaving the test waiting for a call that never started.
    config: { limits: { sseIdleSeconds: 0.5 } },
  });
  const client = await openSse(t.sseUrl);
  const sent = await client.send(
    '{"type":"tool/call/req","id":"h","tool_name":"hang","arguments":{}}',
  );
  await sent.body?.cancel();
  assert.equal(sent.status, 200, "the call reached the session before expiry");
  await fake.hanging;
  const reason = await fake.aborted;
  assert.match(String((reason as Error).message), /expired/);
  const res = await client.send(RAW.ping("p"));
  assert.equal(res.status, 404);
  await res.body?.cancel();
});
