import assert from "node:assert/strict";
import { Admission, bearerToken } from "./admission.ts";
import { Session } from "./session.ts";

function session(): Session {
  return new Session({ send: () => {} });
}

const limits = {
  maxSessions: 2,
  maxPending: 3,
  handshakeTimeoutMs: 60_000,
  requiresAuth: true,
};

Deno.test("Admission never counts pending sessions against max_sessions", () => {
  const admission = new Admission(limits);
  const guests = Array.from({ length: 10 }, session);
  for (const guest of guests) assert.equal(admission.open(guest), "");
  // The pending cap closed the oldest to make room.
  assert.equal(admission.pending, 3);
  assert.equal(guests.filter((g) => g.closed).length, 7);
  const holder = session();
  admission.open(holder);
  assert.equal(admission.admit(holder, "t1"), "");
  assert.equal(admission.admitted, 1);
  for (const g of guests) admission.leave(g);
  admission.leave(holder);
  assert.deepEqual([admission.admitted, admission.pending], [0, 0]);
});

Deno.test("Admission refuses a handshake past max_sessions and keeps it pending", () => {
  const admission = new Admission(limits);
  const all = [session(), session(), session()];
  for (const s of all) admission.open(s);
  assert.equal(admission.admit(all[0]!, "t1"), "");
  assert.equal(admission.admit(all[1]!, "t1"), "");
  assert.match(admission.admit(all[2]!, "t1"), /at most 2 sessions/);
  assert.equal(admission.pending, 1);
  admission.leave(all[0]!);
  assert.equal(admission.admit(all[2]!, "t1"), "");
  for (const s of all) admission.leave(s);
});

Deno.test("Admission applies a token's max_sessions quota, per token", () => {
  const admission = new Admission({
    ...limits,
    maxSessions: 10,
    quotas: new Map([["t1", { maxSessions: 1 }]]),
  });
  const [a, b, c] = [session(), session(), session()];
  for (const s of [a, b, c]) admission.open(s);
  assert.equal(admission.admit(a, "t1"), "");
  assert.match(admission.admit(b, "t1"), /token's quota of 1 sessions/);
  assert.equal(admission.admit(c, "t2"), "");
  // Re-handshaking under the same token is not a second session.
  assert.equal(admission.admit(a, "t1"), "");
  for (const s of [a, b, c]) admission.leave(s);
});

Deno.test("Admission closes a session not admitted within the handshake timeout", async () => {
  const admission = new Admission({ ...limits, handshakeTimeoutMs: 20 });
  const guest = session();
  const closed = new Promise((resolve) =>
    guest.signal.addEventListener("abort", resolve)
  );
  admission.open(guest);
  // The expiry timer is unref'd: a bound keeps the test's event loop alive.
  const bound = setTimeout(() => {}, 5000);
  await closed;
  clearTimeout(bound);
  assert.match(String(guest.signal.reason), /Handshake not completed/);
  assert.equal(admission.pending, 0);
});

Deno.test("Admission admits every session at once when no token is required", () => {
  const admission = new Admission({ ...limits, requiresAuth: false });
  const [a, b, c] = [session(), session(), session()];
  assert.equal(admission.open(a), "");
  assert.equal(admission.open(b), "");
  assert.match(admission.open(c), /at most 2 sessions/);
  assert.equal(admission.pending, 0);
  admission.leave(a);
  admission.leave(b);
});

Deno.test("bearerToken() reads only a valid Bearer token", () => {
  assert.equal(bearerToken("bearer  t1 ", ["t1"]), "t1");
  assert.equal(bearerToken("Basic t1", ["t1"]), null);
  assert.equal(bearerToken("Bearer", ["t1"]), null);
  assert.equal(bearerToken("Bearer t1", []), undefined);
});
