import assert from "node:assert/strict";
import type { OutgoingMessage } from "./capability.ts";
import { defaultConfig } from "./config.ts";
import { Dispatcher } from "./dispatcher.ts";
import { Session } from "./session.ts";
import { createStandardCapabilities } from "./standard_capabilities.ts";

async function emptyStack() {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${dir}/noop.ts`,
    `export default { kind: "tool", name: "noop", description: "Does nothing", run: () => ({ ok: true }) };`,
  );
  const config = { ...defaultConfig(), skills: [dir], builtinSkills: false };
  config.sandbox.cacheDir = null;
  const stack = createStandardCapabilities(config, { broadcast() {} });
  // A failed load fails this too; the host catches it as here.
  stack.mcpServers.ready.catch(() => {});
  const sent: OutgoingMessage[] = [];
  const session = new Session({ send: (m) => sent.push(m) });
  const dispatcher = new Dispatcher({ capabilities: stack.capabilities });
  return {
    stack,
    sent,
    receive: (text: string) => dispatcher.receive(session, text),
    async [Symbol.asyncDispose]() {
      await stack.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("a request before the load waits for it; then the loaded handler answers directly", async () => {
  await using fixture = await emptyStack();
  const tools = fixture.stack.capabilities.find((c) => c.name === "tools")!;
  const waiting = tools.handlers["tool/call/req"];
  const early = fixture.receive(
    '{"type":"tool/call/req","id":"early","tool_name":"noop","arguments":{}}',
  );
  await fixture.stack.ready;
  await early;
  // The table now holds the loaded capability's own handler.
  assert.notEqual(tools.handlers["tool/call/req"], waiting);
  await fixture.receive(
    '{"type":"tool/call/req","id":"late","tool_name":"noop","arguments":{}}',
  );
  assert.deepEqual(
    fixture.sent.map((m) => [
      m.req_id,
      m.type,
      (m.data as { data?: unknown } | undefined)?.data,
    ]),
    [
      ["early", "tool/call/resp", { ok: true }],
      ["late", "tool/call/resp", { ok: true }],
    ],
  );
});

Deno.test("when the load fails, every request before and after says why", async () => {
  await using fixture = await emptyStack();
  const tools = fixture.stack.capabilities.find((c) => c.name === "tools")!;
  const waiting = tools.handlers["tool/list/req"];
  const early = fixture.receive('{"type":"tool/list/req","id":"early"}');
  // Closing before the load ends makes the load fail.
  const closed = fixture.stack.close();
  await assert.rejects(fixture.stack.ready, /The host is closing/);
  await closed;
  await early;
  await fixture.receive('{"type":"tool/list/req","id":"late"}');
  assert.equal(tools.handlers["tool/list/req"], waiting);
  assert.deepEqual(
    fixture.sent.map((m) => [m.req_id, m.type, m.message]),
    [
      "early",
      "late",
    ].map((id) => [
      id,
      "error",
      'Cannot handle "tool/list/req": the skills folders failed to load: The host is closing',
    ]),
  );
  assert.ok(fixture.sent.every((m) => m.retryable === true));
});
