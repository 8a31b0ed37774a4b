import assert from "node:assert/strict";
import { join } from "node:path";
import { openSqliteStore } from "./sqlite.ts";
import type { RunRecord } from "./store.ts";

function run(i: number, over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: `r${i}`,
    parentId: null,
    kind: "tool",
    name: i % 2 ? "odd" : "even",
    toolkit: null,
    session: "s",
    transport: "websocket",
    tokenLabel: null,
    startedAt: i,
    endedAt: i,
    durationMs: i,
    outcome: i % 3 ? "ok" : "timeout",
    error: null,
    summary: null,
    args: "{}",
    result: null,
    eventCount: 1,
    llmTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
    ...over,
  };
}

Deno.test("prune() keeps the newest max_runs and drops runs older than max_age_days", () => {
  const store = openSqliteStore(":memory:");
  const now = 100 * 86_400_000;
  store.write(Array.from({ length: 20 }, (_, i) => ({
    run: run(i, { endedAt: now - (20 - i) * 3_600_000 }),
    events: [{ seq: 0, kind: "status", data: "{}", at: 0 }],
  })));
  assert.equal(store.prune({ maxRuns: 15, maxAgeDays: 30, now }), 5);
  assert.equal(store.count(), 15);
  assert.equal(store.get("r4"), null);
  assert.equal(store.get("r5")?.events.length, 1);
  // Runs older than 10 hours go with max_age_days = 10/24.
  assert.equal(store.prune({ maxRuns: 100, maxAgeDays: 10 / 24, now }), 5);
  assert.deepEqual(store.list({}).runs.map((r) => r.id).at(-1), "r10");
  store.close();
});

Deno.test("list() filters by name, outcome and kind, newest first, with a cursor", () => {
  const store = openSqliteStore(":memory:");
  store.write(
    Array.from({ length: 10 }, (_, i) => ({ run: run(i), events: [] })),
  );
  const odd = store.list({ name: "odd", limit: 3 });
  assert.deepEqual(odd.runs.map((r) => r.id), ["r9", "r7", "r5"]);
  assert.deepEqual(
    store.list({ name: "odd", before: odd.next! }).runs.map((r) => r.id),
    ["r3", "r1"],
  );
  assert.deepEqual(store.list({ outcome: "error" }).runs.map((r) => r.id), [
    "r9",
    "r6",
    "r3",
    "r0",
  ]);
  assert.deepEqual(
    store.list({ outcome: "timeout", name: "even" }).runs.map((r) => r.id),
    ["r6", "r0"],
  );
  assert.equal(store.list({ kind: "skill" }).runs.length, 0);
  store.close();
});

Deno.test("a write that fails leaves nothing half-written", async () => {
  const dir = await Deno.makeTempDir();
  const store = openSqliteStore(join(dir, "a", "runs.db"));
  store.write([{ run: run(1), events: [] }]);
  const broken = { ...run(2), args: null as unknown as string };
  assert.throws(() =>
    store.write([{ run: run(3), events: [] }, { run: broken, events: [] }])
  );
  assert.deepEqual(store.list({}).runs.map((r) => r.id), ["r1"]);
  store.close();
  await Deno.remove(dir, { recursive: true });
});
