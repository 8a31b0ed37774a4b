import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "./sqlite.ts";
import { testRun as run } from "../../tests/support/runs.ts";

// prune(), list() and owners are checked on SQLite by store_suite_test.ts.

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

Deno.test("indexes an earlier version wrote whole are built again partial, and queries still use them", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "runs.db");
  openSqliteStore(path).close();
  const old = new DatabaseSync(path);
  for (const [name, on] of Object.entries(OLD_INDEXES)) {
    old.exec(`DROP INDEX ${name}`);
    old.exec(`CREATE INDEX ${name} ON ${on}`);
  }
  old.close();
  for (let open = 0; open < 2; open++) {
    const store = openSqliteStore(path);
    store.write([
      { run: run(1, { owner: "sha256:00000001" }), events: [] },
      { run: run(2, { parentId: "r1", outcome: "running" }), events: [] },
    ]);
    assert.deepEqual(store.list({ owner: "sha256:00000001" }).runs.length, 1);
    assert.deepEqual(store.get("r1")?.children.map((c) => c.id), ["r2"]);
    store.close();
  }
  const db = new DatabaseSync(path);
  const plan = (sql: string) =>
    db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => r.detail)
      .join(" | ");
  for (const name of Object.keys(OLD_INDEXES)) {
    const { sql } = db.prepare(
      "SELECT sql FROM sqlite_master WHERE name = ?",
    ).get(name) as { sql: string };
    assert.match(sql, / WHERE /, name);
  }
  assert.match(
    plan("SELECT * FROM runs WHERE parent_id = ? ORDER BY started_at, cursor"),
    /USING INDEX runs_parent/,
  );
  assert.match(
    plan("SELECT * FROM runs WHERE owner = ? ORDER BY cursor DESC LIMIT 5"),
    /USING INDEX runs_owner/,
  );
  assert.match(
    plan(
      "UPDATE runs SET outcome = 'interrupted' WHERE host = ? AND outcome = 'running'",
    ),
    /USING INDEX runs_host/,
  );
  // A run with no owner or parent, written finished, enters neither.
  const count = (index: string) =>
    (db.prepare(
      `SELECT count(*) AS n FROM runs INDEXED BY ${index} WHERE ${
        index === "runs_host"
          ? "outcome = 'running'"
          : `${index === "runs_owner" ? "owner" : "parent_id"} IS NOT NULL`
      }`,
    ).get() as { n: number }).n;
  assert.equal(count("runs_owner"), 1);
  assert.equal(count("runs_parent"), 1);
  assert.equal(count("runs_host"), 1);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

// The three indexes as versions before partial indexes wrote them.
const OLD_INDEXES = {
  runs_parent: "runs (parent_id)",
  runs_owner: "runs (owner, cursor)",
  runs_host: "runs (host, outcome)",
};

Deno.test("prune() deletes a pruned run's events and files with it, no other run's", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "runs.db");
  const store = openSqliteStore(path);
  store.write(Array.from({ length: 6 }, (_, i) => ({
    run: run(i),
    events: [
      { seq: 0, kind: "status", data: "{}", at: i },
      { seq: 1, kind: "status", data: "{}", at: i },
    ],
    files: [{ name: `f${i}`, size: 1, data: new Uint8Array([i]), note: null }],
  })));
  // A run written again (running, then finished) keeps its events.
  store.write([{ run: run(5, { outcome: "ok" }), events: [] }]);
  assert.equal(store.prune({ maxRuns: 2, maxAgeDays: 30, now: 10 }), 4);
  store.close();
  const db = new DatabaseSync(path);
  const left = (table: string) =>
    db.prepare(`SELECT DISTINCT run_id FROM ${table} ORDER BY run_id`).all()
      .map((r) => r.run_id);
  assert.deepEqual(left("events"), ["r4", "r5"]);
  assert.deepEqual(left("files"), ["r4", "r5"]);
  assert.deepEqual(left("file_list"), ["r4", "r5"]);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("files written before file_list are listed as binary or text all the same", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "runs.db");
  const store = openSqliteStore(path);
  store.write([{ run: run(1), events: [] }]);
  store.close();
  const old = new DatabaseSync(path);
  old.exec("DROP TABLE files");
  old.exec(`CREATE TABLE files (run_id TEXT NOT NULL, seq INTEGER NOT NULL,
    name TEXT NOT NULL, size INTEGER NOT NULL, data BLOB, note TEXT,
    PRIMARY KEY (run_id, seq)) WITHOUT ROWID`);
  const insert = old.prepare("INSERT INTO files VALUES ('r1', ?, ?, ?, ?, ?)");
  insert.run(0, "a.txt", 2, new TextEncoder().encode("hi"), null);
  insert.run(1, "b.bin", 2, new Uint8Array([0xff, 0]), null);
  insert.run(2, "big", 9e6, null, "over the cap");
  old.close();
  const again = openSqliteStore(path);
  assert.deepEqual(
    again.get("r1")?.files?.map((f) => [f.name, f.kept, f.keptBytes, f.binary]),
    [["a.txt", true, 2, false], ["b.bin", true, 2, true], [
      "big",
      false,
      0,
      false,
    ]],
  );
  assert.deepEqual([...again.file("r1", 1)!.data!], [0xff, 0]);
  again.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a run's detail lists its files without reading their rows (file_list)", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "runs.db");
  const store = openSqliteStore(path);
  store.write([{
    run: run(1),
    events: [],
    files: [{
      name: "1/a.txt",
      size: 2,
      data: new TextEncoder().encode("hi"),
      note: null,
    }],
  }]);
  // Reading any column of a files row reads all of its content (the table
  // is WITHOUT ROWID): with those rows gone, the listing is unchanged.
  const other = new DatabaseSync(path);
  other.exec("DELETE FROM files");
  other.close();
  assert.deepEqual(
    store.get("r1")?.files?.map((f) => [f.name, f.kept, f.keptBytes]),
    [["1/a.txt", true, 2]],
  );
  assert.equal(store.file("r1", 0), null);
  store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a new store is readable by the host's user only; an existing file keeps its mode", async () => {
  const dir = await Deno.makeTempDir();
  const folder = join(dir, "sub");
  const path = join(folder, "runs.db");
  const store = openSqliteStore(path);
  store.write([{ run: run(1), events: [] }]);
  const mode = (p: string) => (Deno.statSync(p).mode ?? 0) & 0o777;
  // Every token's arguments, outputs and kept files are in it.
  assert.equal(mode(folder).toString(8), "700");
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    assert.equal(mode(file).toString(8), "600", file);
  }
  store.close();

  // An operator who shares the file on purpose keeps the mode they gave it.
  const shared = join(dir, "shared.db");
  Deno.writeFileSync(shared, new Uint8Array());
  Deno.chmodSync(shared, 0o640);
  const reopened = openSqliteStore(shared);
  reopened.write([{ run: run(2), events: [] }]);
  assert.equal(mode(shared).toString(8), "640");
  reopened.close();
  await Deno.remove(dir, { recursive: true });
});
