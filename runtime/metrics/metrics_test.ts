import assert from "node:assert/strict";
import client from "prom-client";
import { CallMetrics, createMetrics, processesRss } from "./metrics.ts";

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

// The names, help texts and buckets metrics.ts gives its two call metrics.
const OPTIONS = {
  calls: {
    name: "skillbox_calls_total",
    help: "Tool calls and skill runs, by kind, name and outcome",
  },
  duration: {
    name: "skillbox_call_duration_seconds",
    help: "Wall time of tool calls and skill runs",
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
  const metrics = new CallMetrics(ours);
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
    /skillbox_calls_total\{kind="skill",name="add",outcome="ok"\} \d+/,
  );
  assert.match(
    text,
    /skillbox_call_duration_seconds_bucket\{le="\+Inf",kind="tool",name="echo"\} \d+/,
  );
  assert.deepEqual(
    await ours.getMetricsAsJSON(),
    await theirs.getMetricsAsJSON(),
  );
});

Deno.test("CallMetrics counts a call whose duration is not finite without observing it", async () => {
  const registry = new client.Registry();
  const metrics = new CallMetrics(registry);
  metrics.record("tool", "add", "ok", Number.NaN);
  metrics.record("tool", "add", "ok", 0.002);
  const text = await registry.metrics();
  assert.match(
    text,
    /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} 2\n/,
  );
  assert.match(
    text,
    /skillbox_call_duration_seconds_count\{kind="tool",name="add"\} 1\n/,
  );
  assert.match(
    text,
    /skillbox_call_duration_seconds_sum\{kind="tool",name="add"\} 0.002\n/,
  );
});

// Metrics whose builds are counted (the sandbox figures are read once per
// build) on a clock the test moves.
function countedMetrics() {
  const state = { clock: 0, builds: 0 };
  const metrics = createMetrics({
    defaults: false,
    now: () => state.clock,
    sandbox: () => {
      state.builds++;
      return { processes: state.builds, rssBytes: 0 };
    },
  });
  return { state, metrics };
}

const ADD_OK =
  /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} (\d+)/;
const added = (text: string) => Number(ADD_OK.exec(text)?.[1] ?? 0);

Deno.test("concurrent scrapes share one build, even one the clock outlives", async () => {
  const { state, metrics } = countedMetrics();
  metrics.finished("tool", "add", "ok", 0.01);
  const first = Array.from({ length: 20 }, () => metrics.text());
  // Past the second while that build is still under way: a scrape now
  // waits for it instead of starting another.
  state.clock = 5000;
  const late = metrics.text();
  const texts = await Promise.all([...first, late]);
  assert.equal(state.builds, 1);
  for (const text of texts) assert.equal(text, texts[0]);
  assert.equal(added(texts[0]!), 1);
});

Deno.test("scrapes within a second of a build reuse it; the next one shows new counts", async () => {
  const { state, metrics } = countedMetrics();
  metrics.finished("tool", "add", "ok", 0.01);
  const built = await metrics.text();
  assert.equal(added(built), 1);
  metrics.finished("tool", "add", "ok", 0.01);
  for (const at of [0, 1, 500, 999]) {
    state.clock = at;
    assert.equal(await metrics.text(), built, `at ${at} ms`);
  }
  assert.equal(state.builds, 1);
  state.clock = 1000;
  const next = await metrics.text();
  assert.equal(state.builds, 2);
  assert.equal(added(next), 2);
  assert.match(next, /skillbox_sandbox_processes 2\n/);
  // The second counts from the new build, not from the first.
  state.clock = 1999;
  assert.equal(await metrics.text(), next);
  assert.equal(state.builds, 2);
});

Deno.test("a build that fails is not kept: the next scrape builds again", async () => {
  let fail = true;
  let builds = 0;
  const metrics = createMetrics({
    defaults: false,
    now: () => 0,
    sandbox: () => {
      builds++;
      if (fail) throw new Error("ps went away");
      return { processes: 3, rssBytes: 0 };
    },
  });
  const waiting = [metrics.text(), metrics.text()];
  for (const scrape of waiting) {
    await assert.rejects(scrape, /ps went away/);
  }
  assert.equal(builds, 1);
  fail = false;
  assert.match(await metrics.text(), /skillbox_sandbox_processes 3\n/);
  assert.equal(builds, 2);
});
