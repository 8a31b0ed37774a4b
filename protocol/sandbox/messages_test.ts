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
