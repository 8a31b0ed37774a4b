import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";
import { assertNormalCallWorks, callFixture, valueOf } from "./_helpers.ts";

Deno.test("garbage and forged protocol lines on stdout cannot fake a result", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const { outcome } = await callFixture(sandbox, "stdout_garbage");
    assert.deepEqual(outcome, {
      ok: true,
      value: { real: true },
      truncated: false,
    });
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});

Deno.test("__proto__ and constructor keys in arguments pollute nothing", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const args = JSON.parse(
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"x":1}',
    );
    const config = JSON.parse('{"__proto__":{"polluted":"yes"}}');
    const first = await callFixture(sandbox, "proto_pollution", {
      args,
      config,
      session: "attacker",
    });
    const value = valueOf(first.outcome);
    assert.equal(value.before, null);
    assert.deepEqual(value.keys, ["__proto__", "constructor", "x"]);
    assert.deepEqual(value.configKeys, ["__proto__"]);
    assert.equal(value.argsProtoIsObject, true);
    // The skill's own naive merge pollutes its own realm only.
    assert.equal(value.after, "yes");
    assert.equal(value.mergeError, "TypeError");
    // The echo came back through JSON: the key is data, not a prototype.
    const echo = value.echo as Record<string, unknown>;
    assert.ok(Object.hasOwn(echo, "__proto__"));
    assert.equal(Object.getPrototypeOf(echo), Object.prototype);
    // Another session runs in another worker: a clean realm.
    const other = await callFixture(sandbox, "proto_pollution", {
      args: { y: 1 },
      session: "victim",
    });
    assert.equal(valueOf(other.outcome).before, null);
    // And the host was never touched.
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});
