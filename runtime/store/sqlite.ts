/**
 * The embedded run store: one SQLite file through `node:sqlite` (built into
 * Deno, no server). Writes are batched by the caller into one transaction.
 *
 * @module
 */

import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  type ChildPage,
  type ChildQuery,
  childrenQuery,
  fromRow,
  INTERRUPTED,
  isBinary,
  listQuery,
  mayView,
  oldestKept,
  overShares,
  type Retention,
  RUN_COLUMNS,
  type RunDetail,
  type RunPage,
  type RunQuery,
  type RunScope,
  type RunStore,
  type RunTiming,
  type RunWrite,
  type StoredFile,
  SUMMARY_COLUMNS,
  toRow,
  withoutNul,
  withoutNuls,
} from "./store.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  cursor INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  parent_id TEXT,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  toolkit TEXT,
  session TEXT NOT NULL,
  transport TEXT NOT NULL,
  token_label TEXT,
  started_at REAL NOT NULL,
  ended_at REAL NOT NULL,
  duration_ms REAL NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT,
  summary TEXT,
  args TEXT NOT NULL,
  result TEXT,
  event_count INTEGER NOT NULL,
  llm_turns INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  owner TEXT,
  host TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_name ON runs (name, cursor);
CREATE INDEX IF NOT EXISTS runs_session ON runs (session, cursor);
CREATE INDEX IF NOT EXISTS runs_outcome ON runs (outcome, cursor);
CREATE INDEX IF NOT EXISTS runs_ended ON runs (ended_at);
CREATE TABLE IF NOT EXISTS events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  at REAL NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  data BLOB,
  note TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_list (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  kept INTEGER NOT NULL,
  kept_bytes INTEGER NOT NULL,
  is_binary INTEGER NOT NULL,
  note TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS runs_deleted AFTER DELETE ON runs BEGIN
  DELETE FROM events WHERE run_id = old.id;
  DELETE FROM files WHERE run_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS runs_deleted_file_list AFTER DELETE ON runs BEGIN
  DELETE FROM file_list WHERE run_id = old.id;
END;
`;

const COLUMNS = `cursor, ${RUN_COLUMNS.join(", ")}`;

// Indexes on what few runs have hold only those runs: a warm tool call of
// the operator's (no parent, no owner, written once it finished) enters
// none of them, where each index a row entered was one more B-tree insert
// (these three, about 1.5 of the 10 µs a row cost). `owner = ?`,
// `parent_id = ?` and `host = ? AND outcome = 'running'` (the only queries
// on these columns) still use them.
const PARTIAL_INDEXES = {
  runs_parent: "runs (parent_id) WHERE parent_id IS NOT NULL",
  runs_owner: "runs (owner, cursor) WHERE owner IS NOT NULL",
  runs_host: "runs (host) WHERE outcome = 'running'",
};

// A store written before runs had owners gains the column; its old rows
// keep no owner, so only console admins see them.
function migrate(db: DatabaseSync): void {
  const columns = db.prepare("PRAGMA table_info(runs)").all() as {
    name: string;
  }[];
  if (!columns.some((c) => c.name === "owner")) {
    db.exec("ALTER TABLE runs ADD COLUMN owner TEXT");
  }
  // ... and hosts: its old rows name none.
  if (!columns.some((c) => c.name === "host")) {
    db.exec("ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT ''");
  }
  // An index written whole by an earlier version is built again partial,
  // once; in one transaction, so two hosts opening the file at once agree.
  const stale = (name: string, on: string) => {
    const row = db.prepare(
      "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?",
    ).get(name) as { sql: string } | undefined;
    return row?.sql !== `CREATE INDEX ${name} ON ${on}`;
  };
  const indexes = Object.entries(PARTIAL_INDEXES);
  if (!indexes.some(([name, on]) => stale(name, on))) return;
  transaction(db, "BEGIN IMMEDIATE", () => {
    for (const [name, on] of indexes) {
      if (!stale(name, on)) continue;
      db.exec(`DROP INDEX IF EXISTS ${name}`);
      db.exec(`CREATE INDEX ${name} ON ${on}`);
    }
  });
}

// The condition a scope adds to a query of runs, and its value.
function scoped(scope: RunScope): [string, string[]] {
  return scope === "all" ? ["", []] : [" AND owner = ?", [scope.owner]];
}

// Runs `work` in one transaction, begun with `begin`: committed, or
// rolled back and its error thrown again.
function transaction<T>(db: DatabaseSync, begin: string, work: () => T): T {
  db.exec(begin);
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // the transaction is already gone
    }
    throw error;
  }
}

// Rows per INSERT statement of a batch (runs, events). One statement per
// run spent about 2.5 µs of a row's 7 on node:sqlite's per-call work (the
// call, its result object, the statement's reset), now shared by 32 rows.
// A multi-row INSERT OR REPLACE takes its rows in order, as the statements
// did (a run written `running`, then finished, ends as the later row).
const ROWS_PER_INSERT = 32;

type Value = string | number | null | Uint8Array;

// INSERT OR REPLACE of rows into one table, ROWS_PER_INSERT rows to a
// statement, in the order they were added. Values are bound by position:
// node:sqlite binds named parameters at twice the cost.
class RowsInsert {
  #one: StatementSync;
  #many: StatementSync;
  #width: number;
  #values: Value[] = [];

  constructor(db: DatabaseSync, table: string, columns: readonly string[]) {
    const row = `(${columns.map(() => "?").join(", ")})`;
    const insert = `INSERT OR REPLACE INTO ${table} (${columns.join(", ")})`;
    this.#one = db.prepare(`${insert} VALUES ${row}`);
    this.#many = db.prepare(
      `${insert} VALUES ${Array(ROWS_PER_INSERT).fill(row).join(", ")}`,
    );
    this.#width = columns.length;
  }

  add(row: readonly Value[]): void {
    this.#values.push(...row);
    if (this.#values.length === this.#width * ROWS_PER_INSERT) {
      const values = this.#values;
      this.#values = [];
      this.#many.run(...values);
    }
  }

  // Writes the rows left over, one statement each.
  end(): void {
    const values = this.#values;
    this.#values = [];
    for (let at = 0; at < values.length; at += this.#width) {
      this.#one.run(...values.slice(at, at + this.#width));
    }
  }

  clear(): void {
    this.#values.length = 0;
  }
}

/**
 * Opens (creating when missing) a SQLite run store.
 *
 * @param path the database file, or `":memory:"`
 * @returns the store
 * @throws {Error} when the file cannot be opened, is not a database, or is
 *   read-only (the schema cannot be written)
 * @example Write and read back a run
 * ```ts
 * import { openSqliteStore } from "./sqlite.ts";
 * import assert from "node:assert/strict";
 * const store = openSqliteStore(":memory:");
 * store.write([{ run: {
 *   id: "r1", parentId: null, kind: "tool", name: "add", toolkit: null, session: "s",
 *   transport: "in-process", tokenLabel: null, startedAt: 1, endedAt: 2, durationMs: 1,
 *   outcome: "ok", error: null, summary: null, args: "{}", result: "3", eventCount: 0,
 *   llmTurns: 0, inputTokens: 0, outputTokens: 0,
 * }, events: [] }]);
 * assert.equal(store.list({ name: "add" }).runs[0]?.id, "r1");
 * store.close();
 * ```
 */
export function openSqliteStore(path: string): SqliteRunStore {
  if (path !== ":memory:") {
    // The history holds every token's arguments, outputs and kept files:
    // a folder made here is 0700 and a new file 0600, and SQLite gives the
    // -wal and -shm files the database's mode. An existing file keeps the
    // mode its operator gave it (a store shared on purpose).
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "a", 0o600));
  }
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA busy_timeout = 2000");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec(SCHEMA);
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteRunStore(db);
}

/**
 * The SQLite store: every method answers at once (see {@link openSqliteStore}).
 *
 * @example Count at once, no await
 * ```ts
 * import { openSqliteStore } from "./sqlite.ts";
 * import assert from "node:assert/strict";
 * const store = openSqliteStore(":memory:");
 * assert.equal(store.count(), 0);
 * store.close();
 * ```
 */
export class SqliteRunStore implements RunStore {
  #db: DatabaseSync;
  #insertRuns: RowsInsert;
  #insertEvents: RowsInsert;
  #insertFile: StatementSync;
  #insertListed: StatementSync;
  #listCache = new Map<string, StatementSync>();

  /** @param db the open database, its schema in place */
  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#insertRuns = new RowsInsert(db, "runs", RUN_COLUMNS);
    this.#insertEvents = new RowsInsert(db, "events", [
      "run_id",
      "seq",
      "kind",
      "data",
      "at",
    ]);
    this.#insertFile = db.prepare(
      "INSERT OR REPLACE INTO files (run_id, seq, name, size, data, note) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.#insertListed = db.prepare(
      "INSERT OR REPLACE INTO file_list (run_id, seq, name, size, kept, kept_bytes, is_binary, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
  }

  write(batch: readonly RunWrite[]): void {
    if (batch.length === 0) return;
    const runs = this.#insertRuns;
    const events = this.#insertEvents;
    // What a failed write left unwritten is not this one's.
    runs.clear();
    events.clear();
    transaction(this.#db, "BEGIN", () => {
      for (const { run, events: kept, files } of batch) {
        // node:sqlite reads a text back only up to its first NUL: each
        // is written U+FFFD, as PostgreSQL's writes do.
        runs.add(Object.values(withoutNuls(toRow(run))));
        for (const e of kept) {
          events.add([run.id, e.seq, withoutNul(e.kind), e.data, e.at]);
        }
        (files ?? []).forEach((f, i) => {
          const [name, note] = [withoutNul(f.name), withoutNul(f.note)];
          this.#insertFile.run(run.id, i, name, f.size, f.data, note);
          this.#insertListed.run(
            run.id,
            i,
            name,
            f.size,
            f.data === null ? 0 : 1,
            f.data?.length ?? 0,
            f.data !== null && isBinary(f.data) ? 1 : 0,
            note,
          );
        });
      }
      runs.end();
      events.end();
    });
  }

  list(query: RunQuery): RunPage {
    const { where, limit } = listQuery(query);
    const params = where.flatMap(([, v]) => v === undefined ? [] : [v]);
    const sql = `SELECT ${COLUMNS} FROM runs ${
      where.length
        ? `WHERE ${
          where.map(([c, v]) => v === undefined ? c : `${c} ?`).join(" AND ")
        }`
        : ""
    } ORDER BY cursor DESC LIMIT ?`;
    const statement = this.#listCache.getOrInsertComputed(
      sql,
      () => this.#db.prepare(sql),
    );
    return fromRow.page(statement.all(...params, limit + 1), limit);
  }

  get(id: string, scope: RunScope = "all"): RunDetail | null {
    const row = this.#db.prepare(`SELECT ${COLUMNS} FROM runs WHERE id = ?`)
      .get(id);
    if (!row || !mayView(scope, row.owner as string | null)) return null;
    const [mine, owner] = scoped(scope);
    const count = this.#db.prepare(
      `SELECT count(*) AS n FROM runs WHERE parent_id = ?${mine}`,
    ).get(id, ...owner) as { n: number };
    return fromRow.detail(row, {
      events: this.#db.prepare(
        "SELECT seq, kind, data, at FROM events WHERE run_id = ? ORDER BY seq",
      ).all(id),
      children: this.children(id, {}, scope),
      childCount: Number(count.n),
      files: this.#fileList(id),
    });
  }

  // A run's files as listed, from file_list: reading any column of a
  // files row reads its whole content (a WITHOUT ROWID row is one key:
  // 200 files of 1 MiB were 80 ms to read their seq alone). A run written
  // before file_list was kept has none there: its files are read whole.
  #fileList(id: string) {
    const listed = this.#db.prepare(
      "SELECT name, size, kept, kept_bytes, is_binary, note FROM file_list WHERE run_id = ? ORDER BY seq",
    ).all(id);
    if (listed.length > 0) return listed;
    return this.#db.prepare(
      "SELECT name, size, data IS NOT NULL AS kept, length(data) AS kept_bytes, NULL AS is_binary, data, note FROM files WHERE run_id = ? ORDER BY seq",
    ).all(id);
  }

  file(
    runId: string,
    index: number,
    scope: RunScope = "all",
  ): StoredFile | null {
    const row = this.#db.prepare(
      `SELECT r.owner, f.name, f.size, f.data, f.note FROM files f
        JOIN runs r ON r.id = f.run_id WHERE f.run_id = ? AND f.seq = ?`,
    ).get(runId, index);
    if (!row || !mayView(scope, row.owner as string | null)) return null;
    return fromRow.file(row);
  }

  children(
    parentId: string,
    query: ChildQuery,
    scope: RunScope = "all",
  ): ChildPage {
    const { after, limit } = childrenQuery(query);
    const [mine, owner] = scoped(scope);
    const from = after ? " AND (started_at, cursor) > (?, ?)" : "";
    return fromRow.children(
      this.#db.prepare(
        `SELECT ${SUMMARY_COLUMNS.join(", ")} FROM runs
          WHERE parent_id = ?${from}${mine}
          ORDER BY started_at, cursor LIMIT ?`,
      ).all(parentId, ...after ?? [], ...owner, limit + 1),
      limit,
    );
  }

  timings(since: number, scope: RunScope = "all"): RunTiming[] {
    const [mine, owner] = scoped(scope);
    return this.#db.prepare(
      `SELECT kind, name, outcome, duration_ms, ended_at FROM runs WHERE ended_at >= ? AND outcome != 'running'${mine} ORDER BY cursor`,
    ).all(since, ...owner).map(fromRow.timing);
  }

  prune(limits: Retention): number {
    const db = this.#db;
    return transaction(db, "BEGIN", () => {
      // Each DELETE takes its runs' events and files by the runs_deleted
      // trigger, a key lookup each, where more statements would read the
      // doomed runs again (a quarter of the cost).
      let deleted = Number(
        db.prepare("DELETE FROM runs WHERE ended_at < ?")
          .run(oldestKept(limits)).changes,
      );
      const total = this.count();
      if (total > limits.maxRuns) {
        // Both counts from indexes: a run's owner is stored after its
        // texts, read from the table it may cost an overflow page a run.
        const owned = db.prepare(
          "SELECT owner, count(*) AS n FROM runs WHERE owner IS NOT NULL GROUP BY owner",
        ).all() as { owner: string; n: number }[];
        const counts = new Map<string | null, number>(
          owned.map((r) => [r.owner, Number(r.n)]),
        );
        const unowned = total - Math.sumPrecise(counts.values());
        if (unowned > 0) counts.set(null, unowned);
        for (const [owner, keep] of overShares(counts, limits.maxRuns)) {
          deleted += this.#pruneOwner(owner, keep);
        }
      }
      return deleted;
    });
  }

  // Deletes an owner's runs older than its `keep` newest, but not a child
  // whose parent is kept; then the deleted runs' children (and theirs).
  // A loop, not PostgreSQL's recursive query: here the WITH RECURSIVE form
  // cost about 9% more CPU per pruned run (store_bench, 12 runs each).
  #pruneOwner(owner: string | null, keep: number): number {
    const db = this.#db;
    // `owner = ?` reads the partial index on owners; the operator's runs
    // are found by the cursor alone.
    const whose = owner === null ? "owner IS NULL" : "owner = ?";
    const who = owner === null ? [] : [owner];
    const floor = keep === 0 ? undefined : db.prepare(
      `SELECT cursor FROM runs WHERE ${whose} ORDER BY cursor DESC LIMIT 1 OFFSET ?`,
    ).get(...who, keep - 1) as { cursor: number } | undefined;
    const below = floor ? Number(floor.cursor) : Number.MAX_SAFE_INTEGER;
    let gone = db.prepare(
      `DELETE FROM runs WHERE ${whose} AND cursor < ? AND (parent_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = runs.parent_id))
        RETURNING id`,
    ).all(...who, below) as { id: string }[];
    let deleted = gone.length;
    const children = db.prepare(
      "DELETE FROM runs WHERE parent_id IN (SELECT value FROM json_each(?)) RETURNING id",
    );
    while (gone.length > 0) {
      gone = children.all(JSON.stringify(gone.map((r) => r.id))) as {
        id: string;
      }[];
      deleted += gone.length;
    }
    return deleted;
  }

  interrupt(host: string): number {
    const changed = this.#db.prepare(
      `UPDATE runs SET outcome = 'interrupted', error = ? WHERE host = ? AND outcome = 'running'`,
    ).run(INTERRUPTED, host);
    return Number(changed.changes);
  }

  count(): number {
    const row = this.#db.prepare("SELECT count(*) AS n FROM runs").get() as {
      n: number;
    };
    return Number(row.n);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
