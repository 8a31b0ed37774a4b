import assert from "node:assert/strict";
import { CallRate, parseTokenQuotas } from "./quotas.ts";
import { SkillboxError } from "../protocol/errors.ts";

Deno.test("parseTokenQuotas() reads quotas and leaves other policy keys alone", () => {
  const quotas = parseTokenQuotas({
    tools: { deny: ["x"] },
    tokens: { t1: { max_sessions: 2, max_parallel: 3, calls_per_minute: 60 } },
  }, ["t1", "t2"]);
  assert.deepEqual(quotas.get("t1"), {
    maxSessions: 2,
    maxParallel: 3,
    callsPerMinute: 60,
  });
  assert.equal(quotas.get("t2"), undefined);
});

Deno.test("parseTokenQuotas() names the field but never the token", () => {
  for (
    const bad of [
      { tokens: { "secret-1": { max_sessions: 0 } } },
      { tokens: { "secret-1": { max_session: 1 } } },
      { tokens: { "secret-2": {} } },
    ]
  ) {
    assert.throws(() => parseTokenQuotas(bad, ["secret-1"]), (error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /^policy\.tokens/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
  }
});

Deno.test("CallRate.enforce() refuses past the quota with a retryable error", () => {
  let now = 1000;
  const rate = new CallRate(() => now);
  const quota = { callsPerMinute: 2 };
  rate.enforce("tool/call/req", "t", quota);
  rate.enforce("tool/call/req", "t", quota);
  assert.throws(() => rate.enforce("tool/call/req", "t", quota), (error) => {
    assert.ok(error instanceof SkillboxError);
    assert.equal(error.retryable, true);
    assert.match(error.message, /quota of 2 calls per minute/);
    return true;
  });
  // Other tokens and tokens without a quota are not counted.
  rate.enforce("tool/call/req", "u", quota);
  rate.enforce("tool/call/req", "t", undefined);
  now += 60_000;
  rate.enforce("tool/call/req", "t", quota);
});

Deno.test("parseTokenQuotas() checks each quota's token once, not against the whole list", () => {
  // Counts the token list's element reads: `includes` per quota read the
  // list n times over (hours for a config file of per-token quotas).
  const reads = (n: number) => {
    const list = Array.from({ length: n }, (_, i) => `token-${i}`);
    let count = 0;
    const tokens = new Proxy(list, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) count++;
        return Reflect.get(target, key, receiver);
      },
    });
    const policy = {
      tokens: Object.fromEntries(list.map((t) => [t, { max_sessions: 1 }])),
    };
    assert.equal(parseTokenQuotas(policy, tokens).size, n);
    return count;
  };
  for (const n of [500, 2000]) {
    const count = reads(n);
    assert.ok(count <= 2 * n, `${count} reads for ${n} tokens`);
  }
});
