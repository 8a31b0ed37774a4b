import assert from "node:assert/strict";
import { configKey, workerKey } from "./worker_key.ts";

Deno.test("configKey() tells configurations apart, short or long", async () => {
  assert.notEqual(configKey({ a: 1 }), configKey({ a: 2 }));
  const a = await configKey({ text: "a".repeat(500) });
  const b = await configKey({ text: "b".repeat(500) });
  assert.notEqual(a, b);
  assert.equal(await configKey({ text: "a".repeat(500) }), a);
});

Deno.test("configKey() follows a mutable configuration, caches a frozen one", () => {
  const open: Record<string, unknown> = { a: 1 };
  assert.equal(configKey(open), '{"a":1}');
  open.a = 2;
  assert.equal(configKey(open), '{"a":2}');
  const frozen = Object.freeze({ b: 1 });
  assert.equal(configKey(frozen), configKey(frozen));
});

Deno.test("workerKey() cannot be confused by a separator inside a part", () => {
  assert.notEqual(
    workerKey("/a.ts", "v", "s\u0000x", "{}"),
    workerKey("/a.ts", "v", "s", "x\u0000{}"),
  );
});

Deno.test("workerKey() names the session third in its JSON (sandbox processes read it when a session ends)", () => {
  const key = workerKey("/a.ts", "v1", 's"1', '{"x":1}');
  assert.equal(JSON.parse(key)[2], 's"1');
});
