import assert from "node:assert/strict";
import { startHost } from "./support/host.ts";
import { assertPong, RAW } from "./support/wire.ts";
import { openWs } from "./support/ws_client.ts";

const SESSIONS = 200;
const PINGS = 50;

Deno.test("200 concurrent WebSocket sessions × 50 pings: all answered, none lost", async () => {
  await using t = await startHost();
  const clients = await Promise.all(
    Array.from({ length: SESSIONS }, () => openWs(t.wsUrl)),
  );
  assert.equal(t.host.sessionCount, SESSIONS);
  await Promise.all(clients.map(async (ws, s) => {
    // All pings in flight at once, then every answer checked by req_id.
    for (let i = 0; i < PINGS; i++) ws.send(RAW.ping(`s${s}-${i}`));
    const seen = new Set<string>();
    for (let i = 0; i < PINGS; i++) {
      const pong = await ws.next(20_000);
      assert.equal(pong.type, "pong");
      seen.add(String(pong.req_id));
    }
    for (let i = 0; i < PINGS; i++) assert.ok(seen.has(`s${s}-${i}`));
  }));
  await Promise.all(clients.map((ws) => ws.close()));

  // Still serving afterwards.
  const after = await openWs(t.wsUrl);
  after.send(RAW.ping("after"));
  assertPong(await after.next(), "after");
  await after.close();
  const health = await fetch(`${t.url}/health`);
  assert.equal((await health.json()).status, "ok");
});
