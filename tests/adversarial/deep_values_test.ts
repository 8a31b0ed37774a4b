import assert from "node:assert/strict";
import { createSandbox } from "../../runtime/sandbox/sandbox.ts";
import { assertNormalCallWorks, callFixture, fixture } from "./_helpers.ts";

// A worker can post a value nested deeper than its reader can copy back:
// the reader gets a `messageerror`, not a message. Unheard, the describe or
// call waited for its whole timeout and then said "Timed out". These bounds
// are far above how long a refusal takes; they only tell the two apart.

Deno.test("a definition nested too deep to read back is refused at once, not timed out", async () => {
  const sandbox = createSandbox({ cacheDir: null, describeTimeoutMs: 60_000 });
  try {
    const [deep, normal] = await Promise.all([
      sandbox.describe(fixture("deep_value")),
      sandbox.describe(fixture("add")),
    ]);
    assert.deepEqual(deep.definitions, []);
    assert.match(deep.error ?? "", /cannot be read back/);
    assert.equal(normal.error, null);
  } finally {
    await sandbox.close();
  }
});

Deno.test("a result nested too deep to read back fails its call at once; the next call works", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const { outcome } = await callFixture(sandbox, "deep_value", {
      timeoutMs: 60_000,
    });
    assert.equal(outcome.ok, false);
    assert.notEqual(!outcome.ok && outcome.code, "timeout");
    assert.match(!outcome.ok ? outcome.message : "", /cannot be read back/);
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
});
