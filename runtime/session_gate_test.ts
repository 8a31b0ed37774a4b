import assert from "node:assert/strict";
import { Admission } from "./admission.ts";
import { defaultConfig } from "./config.ts";
import { Session } from "./session.ts";
import { sessionGate } from "./session_gate.ts";

function gateWith(tokens: string[], maxSessions = 4) {
  const ended: string[] = [];
  const sessions = new Set<Session>();
  const admission = new Admission({
    maxSessions,
    maxPending: maxSessions,
    handshakeTimeoutMs: 60_000,
    requiresAuth: tokens.length > 0,
  });
  const open = sessionGate({
    config: { ...defaultConfig(), tokens },
    admission,
    sessions,
    endSession: (id) => ended.push(id),
    closing: () => false,
  });
  return { open, sessions, ended };
}

Deno.test("sessionGate refuses a wrong bearer token with 401", () => {
  const { open, sessions } = gateWith(["secret"]);
  const refused = open({
    transport: "websocket",
    send: () => {},
    authorization: "Bearer wrong",
  });
  assert.ok(!(refused instanceof Session));
  assert.equal(refused.status, 401);
  assert.equal(sessions.size, 0);
});

Deno.test("sessionGate tracks an admitted session until it ends, then ends what it ran", () => {
  const { open, sessions, ended } = gateWith(["secret"]);
  const reasons: string[] = [];
  const session = open({
    transport: "websocket",
    send: () => {},
    authorization: "Bearer secret",
    onEnd: (reason) => reasons.push(reason),
  });
  assert.ok(session instanceof Session);
  assert.equal(sessions.size, 1);
  session.close("bye");
  assert.equal(sessions.size, 0);
  assert.deepEqual(ended, [session.id]);
  assert.deepEqual(reasons, ["bye"]);
});

Deno.test("sessionGate refuses with 503 once admission is full", () => {
  const { open, sessions } = gateWith([], 1);
  assert.ok(
    open({ transport: "websocket", send: () => {} }) instanceof Session,
  );
  const refused = open({ transport: "websocket", send: () => {} });
  assert.ok(!(refused instanceof Session));
  assert.equal(refused.status, 503);
  assert.equal(sessions.size, 1);
});
