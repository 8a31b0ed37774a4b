import assert from "node:assert/strict";
import {
  decodeHostMessage,
  decodeSandboxMessage,
  decodeWorkerMessage,
} from "./messages.ts";

Deno.test("decodeSandboxMessage() turns an unknown error code into sandbox_crash", () => {
  const msg = decodeSandboxMessage({
    t: "result",
    id: "1",
    ok: false,
    code: "made_up",
    message: "x",
    retryable: "yes",
  });
  assert.deepEqual(msg, {
    t: "result",
    id: "1",
    ok: false,
    code: "sandbox_crash",
    message: "x",
    retryable: false,
  });
});

Deno.test("decodeSandboxMessage() drops frames without a string id or a known type", () => {
  assert.equal(decodeSandboxMessage(null), null);
  assert.equal(decodeSandboxMessage([1]), null);
  assert.equal(decodeSandboxMessage({ t: "event", id: 3 }), null);
  assert.equal(decodeSandboxMessage({ t: "op", id: "3" }), null);
  assert.deepEqual(decodeSandboxMessage({ t: "event", id: "3", kind: 1 }), {
    t: "event",
    id: "3",
    kind: "1",
    data: {},
  });
});

Deno.test("decodeWorkerMessage() checks what a hostile worker posts", () => {
  assert.equal(decodeWorkerMessage({ t: "rpc", rid: 1 }), null);
  assert.equal(decodeWorkerMessage({ t: "init", nonce: "x" }), null);
  assert.deepEqual(
    decodeWorkerMessage({ t: "rpc", id: "2", rid: "4", method: "exec" }),
    { t: "rpc", id: "2", rid: 4, method: "tool", payload: undefined },
  );
  assert.deepEqual(
    decodeWorkerMessage({
      t: "events",
      batch: [null, { id: 1 }, { id: "a", kind: "log", data: [1] }],
    }),
    { t: "events", batch: [{ id: "a", kind: "log", data: {} }] },
  );
  assert.deepEqual(decodeWorkerMessage({ t: "events", batch: "x" }), {
    t: "events",
    batch: [],
  });
});

Deno.test("decodeHostMessage() keeps an operation whole for the worker", () => {
  const op = {
    t: "op",
    id: "1",
    op: "call",
    path: "/s/a.ts",
    export: "default",
    workerKey: "k",
    args: { a: 1 },
    config: {},
    metadata: {},
    session: "s",
    call: "c",
  };
  assert.equal(decodeHostMessage(op), op);
  assert.equal(decodeHostMessage({ ...op, path: 1 }), null);
});

Deno.test("decodeHostMessage() reads prime, end_session and stats, and drops them malformed", () => {
  assert.deepEqual(
    decodeHostMessage({ t: "prime", primeKey: "/m.ts\u0000v1", path: "/m.ts" }),
    { t: "prime", primeKey: "/m.ts\u0000v1", path: "/m.ts" },
  );
  assert.equal(
    decodeHostMessage({ t: "prime", primeKey: 1, path: "/m" }),
    null,
  );
  assert.deepEqual(decodeHostMessage({ t: "end_session", session: "s1" }), {
    t: "end_session",
    session: "s1",
  });
  assert.equal(decodeHostMessage({ t: "end_session" }), null);
  assert.deepEqual(decodeHostMessage({ t: "stats", id: "9", session: "s" }), {
    t: "stats",
    id: "9",
    session: "s",
  });
  assert.deepEqual(decodeHostMessage({ t: "stats", id: "9", session: 3 }), {
    t: "stats",
    id: "9",
  });
  assert.equal(decodeHostMessage({ t: "stats" }), null);
});

Deno.test("decodeSandboxMessage() reads stats with counts a hostile process cannot make odd", () => {
  assert.deepEqual(
    decodeSandboxMessage({
      t: "stats",
      id: "1",
      workers: 3,
      sessionWorkers: 1,
    }),
    { t: "stats", id: "1", workers: 3, sessionWorkers: 1 },
  );
  assert.deepEqual(
    decodeSandboxMessage({
      t: "stats",
      id: "1",
      workers: -1,
      sessionWorkers: "x",
    }),
    { t: "stats", id: "1", workers: 0, sessionWorkers: 0 },
  );
  assert.equal(decodeSandboxMessage({ t: "stats", workers: 1 }), null);
});
