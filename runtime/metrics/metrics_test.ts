import assert from "node:assert/strict";
import client from "prom-client";
import {
  CallMetrics,
  type CallMetricsOptions,
  processesRss,
} from "./metrics.ts";

// `deno task test` runs with the host task's permissions, where Deno will
// not read /proc: the figure must come from ps there, not be 0.
Deno.test("a live process's RSS is known under the host's permissions, a gone one is left out", async () => {
  const own = processesRss([Deno.pid]).get(Deno.pid) ?? 0;
  assert.ok(own > 10 * 1024 * 1024, `${own} bytes`);
  const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
  try {
    const both = processesRss([Deno.pid, child.pid, 2 ** 22 + 12345]);
    assert.ok((both.get(child.pid) ?? 0) > 0, JSON.stringify([...both]));
    assert.equal(both.has(2 ** 22 + 12345), false);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  assert.deepEqual(processesRss([]), new Map());
});

const OPTIONS: CallMetricsOptions = {
  calls: { name: "t_calls_total", help: "Calls" },
  duration: {
    name: "t_call_seconds",
    help: "Wall time",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
  },
};

// What metrics.ts did before: prom-client fed every call.
function reference(registry: client.Registry) {
  const calls = new client.Counter({
    ...OPTIONS.calls,
    labelNames: ["kind", "name", "outcome"] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    ...OPTIONS.duration,
    buckets: [...OPTIONS.duration.buckets],
    labelNames: ["kind", "name"] as const,
    registers: [registry],
  });
  return (kind: string, name: string, outcome: string, seconds: number) => {
    calls.inc({ kind, name, outcome });
    duration.observe({ kind, name }, seconds);
  };
}

Deno.test("CallMetrics exposes the text prom-client gives when fed every call", async () => {
  const ours = new client.Registry();
  const theirs = new client.Registry();
  const metrics = new CallMetrics(ours, OPTIONS);
  const feed = reference(theirs);
  assert.equal(await ours.metrics(), await theirs.metrics());
  // Interleaved label sets (first-seen order matters), values on a bound,
  // past the last bound, zero, fractions whose sum is not exact, and label
  // values that need escaping.
  const names = ["echo", "add", 'say "hi"\\\n', "(other)"];
  const outcomes = ["ok", "timeout", "tool_error"];
  const seconds = [0, 0.001, 0.0042, 0.1, 0.30000000000000004, 700, 1e-7];
  for (let i = 0; i < 500; i++) {
    const call: [string, string, string, number] = [
      i % 7 === 3 ? "skill" : "tool",
      names[(i * 5) % names.length]!,
      outcomes[(i * 3 + (i >> 2)) % outcomes.length]!,
      seconds[i % seconds.length]!,
    ];
    metrics.record(...call);
    feed(...call);
    if (i === 0 || i === 17 || i === 499) {
      assert.equal(await ours.metrics(), await theirs.metrics(), `after ${i}`);
    }
  }
  const text = await ours.metrics();
  assert.match(
    text,
    /t_calls_total\{kind="skill",name="add",outcome="ok"\} \d+/,
  );
  assert.match(
    text,
    /t_call_seconds_bucket\{le="\+Inf",kind="tool",name="echo"\} \d+/,
  );
  assert.deepEqual(
    await ours.getMetricsAsJSON(),
    await theirs.getMetricsAsJSON(),
  );
});

Deno.test("CallMetrics counts a call whose duration is not finite without observing it", async () => {
  const registry = new client.Registry();
  const metrics = new CallMetrics(registry, OPTIONS);
  metrics.record("tool", "add", "ok", Number.NaN);
  metrics.record("tool", "add", "ok", 0.002);
  const text = await registry.metrics();
  assert.match(
    text,
    /t_calls_total\{kind="tool",name="add",outcome="ok"\} 2\n/,
  );
  assert.match(text, /t_call_seconds_count\{kind="tool",name="add"\} 1\n/);
  assert.match(text, /t_call_seconds_sum\{kind="tool",name="add"\} 0.002\n/);
});
