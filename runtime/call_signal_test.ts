import assert from "node:assert/strict";
import { CallSignal } from "./call_signal.ts";

Deno.test("CallSignal aborts with whichever signal aborts first, once", async (t) => {
  for (const first of ["session", "caller"] as const) {
    await t.step(first, () => {
      const session = new AbortController();
      const caller = new AbortController();
      const call = new CallSignal(session.signal, caller.signal);
      const fired: unknown[] = [];
      call.signal.addEventListener(
        "abort",
        () => fired.push(call.signal.reason),
      );
      const [a, b] = first === "session"
        ? [session, caller]
        : [caller, session];
      a.abort(first);
      b.abort("second");
      assert.deepEqual(fired, [first]);
    });
  }
});

Deno.test("CallSignal starts aborted when a signal already is, the session's reason first", () => {
  const both = new CallSignal(
    AbortSignal.abort("session"),
    AbortSignal.abort("caller"),
  );
  assert.equal(both.signal.reason, "session");
  const caller = new CallSignal(
    new AbortController().signal,
    AbortSignal.abort("caller"),
  );
  assert.equal(caller.signal.reason, "caller");
  caller.release();
});

Deno.test("CallSignal released follows neither signal", () => {
  const session = new AbortController();
  const caller = new AbortController();
  const call = new CallSignal(session.signal, caller.signal);
  call.release();
  call.release();
  caller.abort();
  session.abort();
  assert.equal(call.signal.aborted, false);
});
