import assert from "node:assert/strict";
import { unwatchAbort, watchAbort } from "./abort_watch.ts";

Deno.test("watchAbort cancels what is still watched, once, with the signal's reason", () => {
  const session = new AbortController();
  const seen: unknown[] = [];
  const items = Array.from({ length: 4 }, (_, i) => ({
    cancel: (reason: unknown) => seen.push([i, reason]),
  }));
  for (const item of items) watchAbort(session.signal, item);
  unwatchAbort(session.signal, items[1]!);
  unwatchAbort(session.signal, items[1]!);
  const reason = new Error("ended");
  session.abort(reason);
  session.abort(new Error("again"));
  assert.deepEqual(seen, [[0, reason], [2, reason], [3, reason]]);
});

Deno.test("watchAbort keeps the signals apart", () => {
  const a = new AbortController();
  const b = new AbortController();
  let cancelled = 0;
  watchAbort(a.signal, { cancel: () => cancelled++ });
  watchAbort(b.signal, { cancel: () => cancelled += 10 });
  b.abort();
  assert.equal(cancelled, 10);
});
