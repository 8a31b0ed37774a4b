import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
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

Deno.test("with an owner, list(), get() and timings() see that owner's runs only", () => {
  const store = openSqliteStore(":memory:");
  store.write(Array.from({ length: 6 }, (_, i) => ({
    run: run(i, {
      owner: i < 2 ? null : i % 2 ? "sha256:0000000b" : "sha256:0000000a",
      parentId: i === 5 ? "r3" : null,
    }),
    events: [],
  })));
  const a = { owner: "sha256:0000000a" } as const;
  assert.deepEqual(
    store.list({ owner: a.owner }).runs.map((r) => r.id),
    ["r4", "r2"],
  );
  const page = store.list({ owner: a.owner, limit: 1 });
  assert.deepEqual(
    store.list({ owner: a.owner, before: page.next! }).runs.map((r) => r.id),
    ["r2"],
  );
  // Filters narrow within the owner's runs, never beyond them.
  assert.deepEqual(
    store.list({ owner: a.owner, name: "odd" }).runs.map((r) => r.id),
    [],
  );
  assert.equal(store.list({}).runs.length, 6);
  assert.equal(store.get("r3", a), null);
  assert.equal(store.get("r0", a), null, "no owner: admins only");
  assert.equal(store.get("r4", a)?.run.owner, "sha256:0000000a");
  assert.equal(store.get("r0", "all")?.run.owner, null);
  assert.deepEqual(
    store.get("r3", { owner: "sha256:0000000b" })?.children.map((c) => c.id),
    ["r5"],
  );
  assert.deepEqual(store.timings(0, a).map((t) => t.durationMs), [2, 4]);
  assert.equal(store.timings(0).length, 6);
  store.close();
});

Deno.test("a store written before owners gains the column; its old runs have none", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "runs.db");
  const old = new DatabaseSync(path);
  old.exec(`CREATE TABLE runs (
    cursor INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    parent_id TEXT, kind TEXT NOT NULL, name TEXT NOT NULL, toolkit TEXT,
    session TEXT NOT NULL, transport TEXT NOT NULL, token_label TEXT,
    started_at REAL NOT NULL, ended_at REAL NOT NULL, duration_ms REAL NOT NULL,
    outcome TEXT NOT NULL, error TEXT, summary TEXT, args TEXT NOT NULL,
    result TEXT, event_count INTEGER NOT NULL, llm_turns INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL)`);
  old.exec(`INSERT INTO runs (id, kind, name, session, transport, token_label,
    started_at, ended_at, duration_ms, outcome, args, event_count, llm_turns,
    input_tokens, output_tokens) VALUES ('old', 'tool', 'add', 's',
    'websocket', 'token 1', 1, 2, 1, 'ok', '{}', 0, 0, 0, 0)`);
  old.close();
  for (let open = 0; open < 2; open++) {
    const store = openSqliteStore(path);
    assert.equal(store.get("old")?.run.owner, null);
    assert.equal(store.get("old", { owner: "sha256:00000001" }), null);
    // Reopened, the migrated file keeps the owners written since.
    assert.equal(store.list({ owner: "sha256:00000001" }).runs.length, open);
    store.write([{
      run: run(open + 1, { owner: "sha256:00000001" }),
      events: [],
    }]);
    assert.equal(
      store.list({ owner: "sha256:00000001" }).runs.length,
      open + 1,
    );
    store.close();
  }
  await Deno.remove(dir, { recursive: true });
});
