import assert from "node:assert/strict";
import { Admission, type AdmissionOptions, bearerToken } from "./admission.ts";
import { defaultConfig } from "./config.ts";
import { Session } from "./session.ts";
import type { TransportKind } from "./session.ts";

// A host's admission: tokens (none: no auth), maxSessions, the pending cap.
function admissionWith(
  tokens: string[],
  limits: { maxSessions?: number; maxPending?: number; handshakeS?: number },
  options: Omit<AdmissionOptions, "config"> = {},
) {
  const config = { ...defaultConfig(), tokens };
  config.limits.maxSessions = limits.maxSessions ?? 2;
  config.limits.maxPendingSessions = limits.maxPending ?? 3;
  config.limits.handshakeTimeoutSeconds = limits.handshakeS ?? 60;
  return new Admission({ config, ...options });
}

// Opens a session that must be taken in.
function open(
  admission: Admission,
  extra: { authorization?: string; transport?: TransportKind } = {},
): Session {
  const session = admission.open({
    transport: "websocket",
    send: () => {},
    ...extra,
  });
  assert.ok(session instanceof Session, JSON.stringify(session));
  return session;
}

Deno.test("Admission never counts pending sessions against max_sessions", () => {
  const admission = admissionWith(["t1"], {});
  const guests = Array.from({ length: 10 }, () => open(admission));
  // The pending cap closed the oldest to make room.
  assert.equal(admission.pending, 3);
  assert.equal(guests.filter((g) => g.closed).length, 7);
  assert.match(String(guests[0]!.signal.reason), /Too many sessions waiting/);
  assert.equal(admission.sessions.size, 3);
  const holder = open(admission);
  assert.equal(admission.admit(holder, "t1"), "");
  assert.equal(admission.admitted, 1);
  for (const g of guests) g.close();
  holder.close();
  assert.deepEqual([admission.admitted, admission.pending], [0, 0]);
  assert.equal(admission.sessions.size, 0);
});

Deno.test("Admission refuses a handshake past max_sessions and keeps it pending", () => {
  const admission = admissionWith(["t1"], {});
  const all = [open(admission), open(admission), open(admission)];
  assert.equal(admission.admit(all[0]!, "t1"), "");
  assert.equal(admission.admit(all[1]!, "t1"), "");
  assert.match(admission.admit(all[2]!, "t1"), /at most 2 sessions/);
  assert.equal(admission.pending, 1);
  all[0]!.close();
  assert.equal(admission.admit(all[2]!, "t1"), "");
  for (const s of all) s.close();
});

Deno.test("Admission applies a token's max_sessions quota, per token", () => {
  const admission = admissionWith(["t1", "t2"], { maxSessions: 10 }, {
    quotas: new Map([["t1", { maxSessions: 1 }]]),
  });
  const [a, b, c] = [open(admission), open(admission), open(admission)];
  assert.equal(admission.admit(a, "t1"), "");
  assert.match(admission.admit(b, "t1"), /token's quota of 1 sessions/);
  assert.equal(admission.admit(c, "t2"), "");
  // Re-handshaking under the same token is not a second session.
  assert.equal(admission.admit(a, "t1"), "");
  // A Bearer header counts under its token too.
  const refused = admission.open({
    transport: "websocket",
    send: () => {},
    authorization: "Bearer t1",
  });
  assert.deepEqual(refused, {
    status: 503,
    reason: "the token's quota of 1 sessions is used up",
  });
  for (const s of [a, b, c]) s.close();
});

Deno.test("Admission closes a session not admitted within the handshake timeout", async () => {
  const admission = admissionWith(["t1"], { handshakeS: 0.02 });
  const guest = open(admission);
  const closed = new Promise((resolve) =>
    guest.signal.addEventListener("abort", resolve)
  );
  // The expiry timer is unref'd: a bound keeps the test's event loop alive.
  const bound = setTimeout(() => {}, 5000);
  await closed;
  clearTimeout(bound);
  assert.match(String(guest.signal.reason), /Handshake not completed/);
  assert.equal(admission.pending, 0);
  assert.equal(admission.sessions.size, 0);
});

Deno.test("Admission admits every session at once when no token is required, up to max_sessions", () => {
  const admission = admissionWith([], {});
  const [a, b] = [open(admission), open(admission)];
  const refused = admission.open({ transport: "websocket", send: () => {} });
  assert.ok(!(refused instanceof Session));
  assert.equal(refused.status, 503);
  assert.match(refused.reason, /at most 2 sessions/);
  assert.equal(admission.pending, 0);
  assert.equal(admission.sessions.size, 2);
  a.close();
  b.close();
});

Deno.test("Admission admits stdio and MCP sessions at once, though tokens are set", () => {
  const admission = admissionWith(["t1"], {});
  for (const transport of ["stdio", "mcp"] as const) {
    const session = open(admission, { transport });
    assert.equal(session.auth, "pending");
  }
  assert.deepEqual([admission.admitted, admission.pending], [2, 0]);
});

Deno.test("Admission refuses a wrong bearer token with 401", () => {
  const admission = admissionWith(["secret"], {});
  const refused = admission.open({
    transport: "websocket",
    send: () => {},
    authorization: "Bearer wrong",
  });
  assert.ok(!(refused instanceof Session));
  assert.equal(refused.status, 401);
  assert.equal(admission.sessions.size, 0);
});

Deno.test("Admission holds a session opened with a valid bearer token until it ends, then ends what it ran", () => {
  const ended: string[] = [];
  const admission = admissionWith(["secret"], {}, {
    endSession: (id) => ended.push(id),
  });
  const reasons: string[] = [];
  const session = admission.open({
    transport: "websocket",
    send: () => {},
    authorization: "Bearer secret",
    onEnd: (reason) => reasons.push(reason),
  });
  assert.ok(session instanceof Session);
  assert.deepEqual([session.auth, session.token], ["accepted", "secret"]);
  assert.deepEqual([admission.admitted, admission.pending], [1, 0]);
  assert.equal(admission.sessions.size, 1);
  session.close("bye");
  assert.equal(admission.sessions.size, 0);
  assert.equal(admission.admitted, 0);
  assert.deepEqual(ended, [session.id]);
  assert.deepEqual(reasons, ["bye"]);
});

Deno.test("Admission keeps the client's address key on the session, for the handshake throttle", () => {
  const admission = admissionWith(["t1"], {});
  const session = admission.open({
    transport: "websocket",
    send: () => {},
    client: "203.0.113.7",
  });
  assert.ok(session instanceof Session);
  assert.equal(session.client, "203.0.113.7");
  assert.equal(open(admission).client, undefined);
});

Deno.test("Admission broadcasts only to accepted sessions when tokens are set", () => {
  const admission = admissionWith(["t1"], {});
  const got: string[] = [];
  const guest = admission.open({
    transport: "websocket",
    send: () => got.push("guest"),
  });
  const holder = admission.open({
    transport: "websocket",
    send: () => got.push("holder"),
    authorization: "Bearer t1",
  });
  assert.ok(guest instanceof Session && holder instanceof Session);
  const message = { type: "x", id: "1", version: "1.0", ts: 0 };
  assert.equal(admission.broadcast(message), 1);
  assert.deepEqual(got, ["holder"]);
  guest.close();
  holder.close();
});

Deno.test("bearerToken() reads only a valid Bearer token", () => {
  assert.equal(bearerToken("bearer  t1 ", ["t1"]), "t1");
  assert.equal(bearerToken("Basic t1", ["t1"]), null);
  assert.equal(bearerToken("Bearer", ["t1"]), null);
  assert.equal(bearerToken("Bearer t1", []), undefined);
});
