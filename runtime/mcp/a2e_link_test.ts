import assert from "node:assert/strict";
import type { CallEvent } from "../../protocol/tool.ts";
import { PendingAnswers } from "./a2e_link.ts";
import { PROTOCOL_VERSION } from "../../protocol/envelope.ts";

const ENVELOPE = { id: "m", version: "1", ts: 0 };

Deno.test("PendingAnswers relays a request's events, then resolves it with its answer once", async () => {
  const pending = new PendingAnswers();
  const events: CallEvent[] = [];
  const answer = pending.wait("r1", (e) => events.push(e));
  assert.equal(pending.size, 1);
  assert.equal(
    pending.deliver({
      ...ENVELOPE,
      type: "tool/event",
      req_id: "r1",
      kind: "log",
      data: { message: "hi" },
      seq: 3,
    }),
    true,
  );
  assert.equal(pending.size, 1);
  assert.equal(
    pending.deliver({ ...ENVELOPE, type: "tool/call/resp", req_id: "r1" }),
    true,
  );
  assert.equal((await answer).type, "tool/call/resp");
  assert.deepEqual(events, [{ kind: "log", data: { message: "hi" }, seq: 3 }]);
  assert.equal(pending.size, 0);
  // A second answer to the same request has no one to go to.
  assert.equal(
    pending.deliver({ ...ENVELOPE, type: "tool/call/resp", req_id: "r1" }),
    false,
  );
});

Deno.test("PendingAnswers does not take a push or another request's answer", () => {
  const pending = new PendingAnswers();
  pending.wait("r1");
  assert.equal(
    pending.deliver({
      ...ENVELOPE,
      type: "invoke/event",
      kind: "tools.changed",
    }),
    false,
  );
  assert.equal(
    pending.deliver({ ...ENVELOPE, type: "pong", req_id: "r2" }),
    false,
  );
  assert.equal(pending.size, 1);
});

Deno.test("PendingAnswers.cancelAll() answers every waiting request with a runtime_error", async () => {
  const pending = new PendingAnswers();
  const answers = [pending.wait("a"), pending.wait("b")];
  pending.cancelAll("Cancelled: gone");
  assert.equal(pending.size, 0);
  const got = await Promise.all(answers);
  assert.deepEqual(
    got.map((m) => [m.type, m.req_id, m.code, m.message]),
    [
      ["error", "a", "runtime_error", "Cancelled: gone"],
      ["error", "b", "runtime_error", "Cancelled: gone"],
    ],
  );
});

Deno.test("PendingAnswers.cancelAll() answers with a whole A2E error, as the dispatcher sends one", async () => {
  const pending = new PendingAnswers();
  const answer = pending.wait("a");
  pending.cancelAll("Cancelled: gone");
  const { id, ts, ...rest } = await answer;
  assert.equal(typeof id, "string");
  assert.equal(typeof ts, "number");
  assert.deepEqual(rest, {
    type: "error",
    version: PROTOCOL_VERSION,
    req_id: "a",
    code: "runtime_error",
    message: "Cancelled: gone",
    detail: {},
    retryable: false,
    capability_name: "",
  });
});
