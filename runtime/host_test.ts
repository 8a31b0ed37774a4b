import assert from "node:assert/strict";
import { fakeTools } from "../tests/support/fake_capability.ts";
import { openWs } from "../tests/support/ws_client.ts";
import { SkillboxError } from "../protocol/errors.ts";
import { envelope } from "../protocol/envelope.ts";
import { createHost } from "./host.ts";

Deno.test("callTool() routes through the capability's handler and streams events", async () => {
  const host = createHost({ capabilities: [fakeTools().capability] });
  const events: number[] = [];
  const result = await host.callTool("stream", { count: 4 }, {
    onEvent: (event) => events.push(event.seq),
  });
  assert.equal(result.success, true);
  assert.equal(result.toolName, "stream");
  assert.deepEqual(events, [0, 1, 2, 3]);
  await host.close();
});

Deno.test("callTool() aborts the handler's signal when the caller's signal aborts", async () => {
  const fake = fakeTools();
  const host = createHost({ capabilities: [fake.capability] });
  const controller = new AbortController();
  const call = host.callTool("hang", {}, { signal: controller.signal });
  await fake.hanging;
  controller.abort(new Error("caller gave up"));
  await assert.rejects(call, SkillboxError);
  assert.match(String((await fake.aborted as Error).message), /caller gave up/);
  await host.close();
});

Deno.test("callSkill() without a skill capability rejects with a clear error", async () => {
  const host = createHost({ capabilities: [] });
  await assert.rejects(
    host.callSkill("x", {}),
    /"skill" capability is not served/,
  );
  await host.close();
});

Deno.test("addCapability() plugs in later and refuses a duplicate request type", async () => {
  const host = createHost({ capabilities: [] });
  host.addCapability(fakeTools().capability);
  assert.deepEqual(host.capabilities, ["tools"]);
  assert.throws(
    () => host.addCapability(fakeTools().capability),
    /already handled/,
  );
  const list = await host.request({ type: "tool/list/req" });
  assert.equal(list.type, "tool/list/resp");
  await host.close();
});

Deno.test("broadcast() reaches every authorized session, not refused ones", async () => {
  const host = createHost({ capabilities: [], config: { tokens: ["t"] } });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const wsUrl = url.replace("http", "ws") + "/a2e";
  const good = await openWs(wsUrl);
  const bad = await openWs(wsUrl);
  good.send('{"type":"handshake/req","id":"g","auth_token":"t"}');
  bad.send('{"type":"handshake/req","id":"b","auth_token":"x"}');
  assert.equal((await good.next()).ok, true);
  assert.equal((await bad.next()).ok, false);
  const sent = host.broadcast(envelope("invoke/event", {
    req_id: "",
    kind: "status",
    data: { message: "hello" },
    seq: 0,
  }));
  assert.equal(sent, 1);
  assert.equal((await good.next()).kind, "status");
  // The refused session gets its next answer, not the broadcast.
  bad.send('{"type":"ping","id":"p"}');
  assert.equal((await bad.next()).code, "unauthorized");
  await good.close();
  await bad.close();
  await host.close();
});

Deno.test("close() waits for in-flight calls, then refuses new ones", async () => {
  const fake = fakeTools();
  const host = createHost({ capabilities: [fake.capability] });
  const call = host.callTool("gate", {});
  await fake.gate.whenRunning(1);
  const closed = host.close({ timeoutSeconds: 5 });
  fake.gate.open();
  assert.equal((await call).success, true);
  await closed;
  await assert.rejects(host.callTool("echo", {}), /host is closed/);
});

Deno.test("close() closes an idle session at once, while another's call still runs", async () => {
  const fake = fakeTools();
  const host = createHost({ capabilities: [fake.capability] });
  const opened = await host.fetch(
    new Request("http://127.0.0.1:8787/a2e/session", { method: "POST" }),
  );
  await opened.body?.cancel();
  assert.equal(host.sessionCount, 1);
  const call = host.callTool("gate", {});
  await fake.gate.whenRunning(1);
  const closed = host.close({ timeoutSeconds: 60 });
  // Nothing of the idle session's is in flight: it need not wait for the
  // in-process call (a bounded wait, well under the close's timeout).
  for (let i = 0; i < 200 && host.sessionCount > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(host.sessionCount, 0);
  fake.gate.open();
  assert.equal((await call).success, true);
  await closed;
});

Deno.test("max_sessions refuses the next connection with 503", async () => {
  const host = createHost({
    capabilities: [],
    config: { limits: { maxSessions: 1 } },
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const first = await fetch(`${url}/a2e/session`, { method: "POST" });
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const second = await fetch(`${url}/a2e/session`, { method: "POST" });
  assert.equal(second.status, 503);
  assert.match((await second.json()).error, /at most 1 sessions/);
  await host.close();
});
