import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "./sqlite.ts";
import type { RunRecord } from "./store.ts";

// prune(), list() and owners are checked on SQLite by store_suite_test.ts.
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
