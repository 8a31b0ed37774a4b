import assert from "node:assert/strict";
import type { Capability, OutgoingMessage } from "./capability.ts";
import { Dispatcher } from "./dispatcher.ts";
import { SkillboxError } from "../protocol/errors.ts";
import { envelope } from "../protocol/envelope.ts";
import { Session } from "./session.ts";

function record() {
  const sent: OutgoingMessage[] = [];
  return { sent, session: new Session({ send: (m) => sent.push(m) }) };
}

const failing: Capability = {
  name: "tools",
  handlers: {
    "tool/call/req": () =>
      Promise.reject(new SkillboxError("unknown_tool", 'Unknown tool "x"')),
    "tool/list/req": () =>
      // A handler that forgets req_id still gets it echoed.
      Promise.resolve(envelope("tool/list/resp", { tools: [], req_id: "" })),
  },
};

Deno.test("Dispatcher maps a handler's SkillboxError to an error naming the capability", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ capabilities: [failing] });
  await dispatcher.receive(
    session,
    '{"type":"tool/call/req","id":"c","arguments":{}}',
  );
  assert.equal(sent[0]?.type, "error");
  assert.equal(sent[0]?.code, "unknown_tool");
  assert.equal(sent[0]?.req_id, "c");
  assert.equal(sent[0]?.capability_name, "tools");
});

Deno.test("Dispatcher echoes req_id even when a handler omits it", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ capabilities: [failing] });
  await dispatcher.receive(session, '{"type":"tool/list/req","id":"l"}');
  assert.equal(sent[0]?.req_id, "l");
});

Deno.test("Dispatcher refuses capabilities outside the A2E list", () => {
  assert.throws(
    () =>
      new Dispatcher().addCapability({
        name: "streaming" as "tools",
        handlers: {},
      }),
    /not an A2E capability name/,
  );
});

Deno.test("Dispatcher rejects a message over max_message_bytes with its id", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ maxMessageBytes: 1024 });
  await dispatcher.receive(
    session,
    `{"type":"ping","id":"big","pad":"${"é".repeat(600)}"}`,
  );
  assert.equal(sent[0]?.code, "invalid_message");
  assert.equal(sent[0]?.req_id, "big");
  assert.match(String(sent[0]?.message), /exceeds the limit of 1024 bytes/);
});

Deno.test("Dispatcher pong carries a float uptime", async () => {
  const { sent, session } = record();
  await new Dispatcher().receive(session, '{"type":"ping","id":"p"}');
  assert.equal(typeof sent[0]?.uptime_seconds, "number");
  assert.ok(!Number.isInteger(sent[0]?.uptime_seconds));
});
