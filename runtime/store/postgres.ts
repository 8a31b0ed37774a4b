/**
 * The fleet's run store: PostgreSQL through `npm:postgres`, shared by every
 * host pointed at the same database. The schema is created or migrated at
 * open (versioned, under an advisory lock so hosts starting together do not
 * race); every write announces its runs on a `NOTIFY` channel so each host's
 * live view hears the others'.
 *
 * @module
 */

import net from "node:net";
import postgres from "postgres";
import { settlesWithin } from "../deadline.ts";
import { withoutPassword } from "./config.ts";
import {
  type ChildPage,
  type ChildQuery,
  childrenQuery,
  type FleetChange,
  fromRow,
  type HostBeat,
  INTERRUPTED,
  isBinary,
  listQuery,
  mayView,
  oldestKept,
  overShares,
  type Retention,
  RUN_COLUMNS as COLUMNS,
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

// The channel runs are announced on.
const CHANNEL = "skillbox_runs";

// Each entry moves the schema one version on; never edit a shipped one.
const MIGRATIONS: string[] = [
  `CREATE TABLE skillbox_runs (
    cursor BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    parent_id TEXT,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    toolkit TEXT,
    session TEXT NOT NULL,
    transport TEXT NOT NULL,
    token_label TEXT,
    owner TEXT,
    host TEXT NOT NULL DEFAULT '',
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
    outcome TEXT NOT NULL,
    error TEXT,
    summary TEXT,
    args TEXT NOT NULL,
    result TEXT,
    event_count INTEGER NOT NULL,
    llm_turns INTEGER NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL
  );
  CREATE INDEX skillbox_runs_name ON skillbox_runs (name, cursor);
  CREATE INDEX skillbox_runs_session ON skillbox_runs (session, cursor);
  CREATE INDEX skillbox_runs_outcome ON skillbox_runs (outcome, cursor);
  CREATE INDEX skillbox_runs_owner ON skillbox_runs (owner, cursor);
  CREATE INDEX skillbox_runs_host ON skillbox_runs (host, outcome);
  CREATE INDEX skillbox_runs_parent ON skillbox_runs (parent_id);
  CREATE INDEX skillbox_runs_ended ON skillbox_runs (ended_at);
  CREATE TABLE skillbox_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE skillbox_files (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    size BIGINT NOT NULL,
    data BYTEA,
    note TEXT,
    PRIMARY KEY (run_id, seq)
  );`,
  // Each host's heartbeat (see `PostgresRunStore.beat`), stamped with the
  // database's clock so hosts' clocks never enter into who looks alive.
  `CREATE TABLE skillbox_hosts (
    host TEXT PRIMARY KEY,
    seen_at TIMESTAMPTZ NOT NULL
  );`,
  // Whether a file is binary, noted when written, so listing a run's
  // files reads none of them (null: written before, told by reading it).
  `ALTER TABLE skillbox_files ADD COLUMN is_binary BOOLEAN;`,
  // Which host process made the stamp: two live hosts given one host.id
  // each find the other's (see `PostgresRunStore.beat`).
  `ALTER TABLE skillbox_hosts ADD COLUMN instance TEXT;`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

// What a run's detail reads of its files: sizes and flags, and the content
// only of a file written before is_binary was noted (to tell it). A large
// bytea is stored out of line (TOAST): the row and its length() read none
// of it.
const FILE_ENTRY_COLUMNS =
  "name, size, data IS NOT NULL AS kept, length(data) AS kept_bytes, is_binary, CASE WHEN is_binary IS NULL THEN data END AS data, note";

// Rows per INSERT: PostgreSQL takes at most 65535 parameters a statement.
const CHUNK = 1000;
// A run written again (running, then finished) takes every new column.
const UPDATE_ALL = COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = EXCLUDED.${c}`).join(", ");
// A NOTIFY payload must stay under 8000 bytes: ids per announcement.
const IDS_PER_NOTICE = 100;

/**
 * Opens a PostgreSQL run store, creating or migrating its schema.
 *
 * @param url `postgres://user:password@host:port/db` (a Unix socket folder
 *   as `?host=/path`)
 * @returns the store
 * @throws {Error} when the database cannot be reached or migrated, or was
 *   written by a newer skillbox
 * @example Open a store (needs a server)
 * ```ts ignore
 * import { openPostgresStore } from "./postgres.ts";
 * const store = await openPostgresStore("postgres://skillbox@db/skillbox");
 * console.log(await store.count());
 * await store.close();
 * ```
 */
export async function openPostgresStore(
  url: string,
): Promise<PostgresRunStore> {
  const store = lazyPostgresStore(url);
  try {
    await store.ready();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}

/**
 * A PostgreSQL store whose schema may not be in place yet: the host starts
 * with the database down, and the schema is made on the first write that
 * reaches it (see {@link PostgresRunStore.ready}).
 *
 * @param url the database's URL
 * @returns the store, not connected yet
 * @example Open lazily (needs a server to be of use)
 * ```ts
 * import { lazyPostgresStore } from "./postgres.ts";
 * const store = lazyPostgresStore("postgres://skillbox@127.0.0.1:1/none");
 * await store.close();
 * ```
 */
export function lazyPostgresStore(url: string): PostgresRunStore {
  return new PostgresRunStore(connect(url));
}

type Sql = postgres.Sql;

/**
 * Whether an error was raised by the PostgreSQL client itself: its own
 * `PostgresError`, or anything thrown from its source files.
 *
 * @param error what was thrown or rejected
 * @returns true for the client's errors
 * @example
 * ```ts
 * import { isDriverError } from "./postgres.ts";
 * import assert from "node:assert/strict";
 * const inDriver = new TypeError("Cannot read properties of undefined");
 * inDriver.stack = "TypeError: x\n    at queryError (file:///c/npm/registry.npmjs.org/postgres/3.4.7/src/connection.js:389:48)";
 * assert.equal(isDriverError(inDriver), true);
 * assert.equal(isDriverError(new TypeError("elsewhere")), false);
 * ```
 */
export function isDriverError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === "PostgresError" || error instanceof NoAnswer ||
    /\/registry\.npmjs\.org\/postgres\/\d[^/]*\//.test(error.stack ?? "");
}

let guarded = false;

// The client has paths that throw in a socket listener or drop a rejected
// promise, where no caller can catch (porsager/postgres issues 896, 1192,
// 1205, 1223): a database going away must not end the host, whose calls
// do not need it. Only the client's own errors are held; the outage itself
// is reported by the writes that fail (the recorder's log line and
// skillbox_store_errors_total).
function holdDriverErrors(): void {
  if (guarded) return;
  guarded = true;
  globalThis.addEventListener("unhandledrejection", (event) => {
    if (isDriverError(event.reason)) event.preventDefault();
  });
  globalThis.addEventListener("error", (event) => {
    if (isDriverError(event.error)) event.preventDefault();
  });
}

// A store call's bound when the URL's `?query_timeout=` (milliseconds,
// `0`: none) does not set one. A server that stops answering (its
// processes stopped, a network path dropping packets) held a query for
// ever, or for TCP's retransmissions (about 15 minutes), and with it every
// console read and this host's writes. Well above legitimate work: a write
// of 1,000 runs of 32 KiB took 6 s, and a prune deletes at most about
// max_runs runs at a time (see the recorder).
const QUERY_TIMEOUT_MS = 30_000;
const QUERY_TIMEOUT = /([?&])query_timeout=([^&#]*)&?/;

// The store's error when the server gave no answer in time: the client's
// own (see isDriverError), as the sockets it was on fail with it.
class NoAnswer extends Error {}

// What the store needs of its pool: the pool, the bound on each call, and
// a way to drop every connection the pool and its LISTEN hold.
interface Pool {
  sql: Sql;
  answerMs: number;
  cut: (error?: Error) => void;
}

// Four connections; a call fails after 3 s without one, a statement after
// 5 s waiting on a lock (see `lock_timeout` below), and a store call after
// `query_timeout` without an answer (see PostgresRunStore's #answered).
function connect(given: string): Pool {
  holdDriverErrors();
  const [, , ms] = given.match(QUERY_TIMEOUT) ?? [];
  // At most nine digits: a timer of more than 2^31 ms fires at once.
  if (ms !== undefined && !/^\d{1,9}$/.test(ms)) {
    throw new Error(
      `Cannot use the run store: query_timeout must be milliseconds, not "${ms}"`,
    );
  }
  const answerMs = ms === undefined ? QUERY_TIMEOUT_MS : Number(ms);
  // Not a server setting: the client's own, kept from the server, which
  // refuses a parameter it does not know.
  const url = given.replace(QUERY_TIMEOUT, "$1").replace(/[?&]$/, "");
  // The client has no bound of its own on a query and cannot drop one
  // connection from outside (its cancel() opens another connection, which
  // a frozen server does not answer either): it is given the sockets, so
  // that a call past its bound destroys them, failing what waits on them
  // with the store's error; the pool and its LISTEN connect again as after
  // any failure. Connecting itself is bounded by connect_timeout.
  const sockets = new Set<net.Socket>();
  let next = 0;
  const socket = (
    o: { host: string[]; port: number[]; path: string | false },
  ) => {
    const i = next++ % o.host.length;
    const s = o.path
      ? net.connect(o.path)
      : net.connect(o.port[i]!, o.host[i]!);
    // Named as the client names its own, for its errors' messages.
    Object.assign(s, { host: o.host[i], port: o.port[i] });
    // Not by their close events: the client removes every listener of a
    // socket it upgrades to TLS.
    for (const old of sockets) if (old.destroyed) sockets.delete(old);
    sockets.add(s);
    return s;
  };
  let sql: Sql;
  try {
    sql = postgres(url, {
      ...{ socket } as object,
      max: 4,
      connect_timeout: 3,
      // A statement waiting on a lock (an operator's LOCK TABLE, a migration
      // queued behind a long transaction, a host frozen mid-write) waited
      // for ever, and with it every console read and this host's writes.
      // Now it fails: the console answers 503, the writes are held and
      // retried. The URL's `?lock_timeout=` (milliseconds) overrides it.
      connection: { lock_timeout: 5000 },
      idle_timeout: 60,
      // Half a second between reconnects, not the client's growing wait
      // (up to 20 s): a database back is written again at the next flush.
      backoff: () => 0.5,
      onnotice: () => {},
      // Not the array types' lookup each new connection makes first: its
      // promise is dropped by the client, so a database stopping at that
      // moment rejected it unhandled and could end the host (porsager/postgres
      // issues 1192, 1223). Arrays go as text literals instead (textArray).
      fetch_types: false,
      // Cursors and token counts are BIGINT: numbers here, not strings.
      types: {
        bigint: {
          to: 20,
          from: [20],
          serialize: (x: number) => String(x),
          parse: (x: string) => Number(x),
        },
      },
    });
  } catch (error) {
    // The client's own error quotes the URL whole, password and all; and,
    // thrown from its files, it would be held as one of its stray errors.
    throw new Error(
      `Cannot use the run store: ${withoutPassword(String(error))}`,
    );
  }
  const cut = (error?: Error) => {
    for (const s of sockets) s.destroy(error);
    sockets.clear();
  };
  return { sql, answerMs, cut };
}

async function migrate(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('skillbox_schema'))`;
    await tx`CREATE TABLE IF NOT EXISTS skillbox_schema (version INTEGER NOT NULL)`;
    const [row] = await tx`SELECT version FROM skillbox_schema`;
    const version = row ? Number(row.version) : 0;
    if (version > SCHEMA_VERSION) {
      throw new Error(
        `Cannot use the run store: its schema is version ${version}, this skillbox knows up to ${SCHEMA_VERSION}`,
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) {
      await tx.unsafe(MIGRATIONS[v]!);
    }
    if (!row) {
      await tx`INSERT INTO skillbox_schema (version) VALUES (${SCHEMA_VERSION})`;
    } else if (version < SCHEMA_VERSION) {
      await tx`UPDATE skillbox_schema SET version = ${SCHEMA_VERSION}`;
    }
  });
}

/**
 * The PostgreSQL store (see {@link openPostgresStore}): every method
 * answers later, and {@link PostgresRunStore.follow} hears other hosts.
 *
 * @example Hear the other hosts' runs (needs a server)
 * ```ts ignore
 * import { openPostgresStore } from "./postgres.ts";
 * const store = await openPostgresStore("postgres://skillbox@db/skillbox");
 * const stop = store.follow("h1", (change) => console.log(change.type, change.run.host));
 * stop();
 * await store.close();
 * ```
 */
export class PostgresRunStore implements RunStore {
  #sql: Sql;
  #answerMs: number;
  #cut: (error?: Error) => void;
  // The schema's making, kept once it succeeded; a failed one is tried
  // again by the next call.
  #schema: Promise<void> | null = null;

  /**
   * @param pool the connection pool (the schema is made by {@link ready}),
   *   how long a call waits for the server (`answerMs`, 0: for ever) and
   *   how to drop the connections when it gave no answer
   */
  constructor(pool: Pool) {
    this.#sql = pool.sql;
    this.#answerMs = pool.answerMs;
    this.#cut = pool.cut;
  }

  /** Makes sure the schema is in place (once it has been, at once). */
  async ready(): Promise<void> {
    this.#schema ??= this.#answered(() => migrate(this.#sql)).catch((error) => {
      this.#schema = null;
      throw error;
    });
    await this.#schema;
  }

  // A call (one statement or one transaction) the server gave no answer
  // within the bound fails with the store's error, and so does every
  // other on the pool's sockets, which are dropped: a server that stops
  // answering stops them all, and the pool must not hand out a connection
  // still waiting on it. Its LISTEN connection is dropped too, and listens
  // again once the server answers (see follow()).
  async #answered<T>(work: () => Promise<T>): Promise<T> {
    const ms = this.#answerMs;
    const answer = work();
    if (ms === 0 || await settlesWithin(answer, ms)) return await answer;
    const error = new NoAnswer(
      `PostgreSQL gave no answer in ${ms} ms (store.url's query_timeout)`,
    );
    this.#cut(error);
    throw error;
  }

  /** `AND owner = …` for a scope that sees one owner's runs, else nothing. */
  #owned(scope: RunScope) {
    return scope === "all"
      ? this.#sql``
      : this.#sql`AND owner = ${withoutNul(scope.owner)}`;
  }

  // A call once the schema is in place, bounded as #answered says.
  async #call<T>(work: () => Promise<T>): Promise<T> {
    return await this.#answered(async () => {
      await this.ready();
      return await work();
    });
  }

  async write(batch: readonly RunWrite[]): Promise<void> {
    if (batch.length === 0) return;
    return await this.#call(async () => {
      // A run written twice in one batch (running, then finished) keeps the last.
      const last = new Map<string, RunWrite>();
      for (const w of batch) last.set(w.run.id, w);
      const writes = [...last.values()];
      const ids = writes.map((w) => w.run.id);
      const rows = writes.map(({ run }) => withoutNuls(toRow(run)));
      // Rows by spreading: each INSERT below names the columns it reads.
      const events = writes.flatMap(({ run, events }) =>
        events.map((e) => withoutNuls({ run_id: run.id, ...e }))
      );
      const files = writes.flatMap(({ run, files }) =>
        (files ?? []).map((f, seq) =>
          withoutNuls({
            run_id: run.id,
            seq,
            ...f,
            is_binary: f.data !== null && isBinary(f.data),
          })
        )
      );
      const host = writes[0]!.run.host ?? "";
      await this.#sql.begin(async (tx) => {
        // A run inserted finished was never announced as started (it lasted
        // less than a flush): its start goes out now, just before its end,
        // so other hosts' live views see both. `xmax = 0` tells an insert
        // from an update of the row written `running` earlier.
        const fresh = new Set<string>();
        for (const part of chunks(rows, CHUNK)) {
          const done = await tx`INSERT INTO skillbox_runs ${
            tx(part, ...COLUMNS)
          }
            ON CONFLICT (id) DO UPDATE SET ${tx.unsafe(UPDATE_ALL)}
            RETURNING id, (xmax = 0) AS inserted`;
          for (const row of done) if (row.inserted) fresh.add(String(row.id));
        }
        await tx`DELETE FROM skillbox_events WHERE run_id = ANY(${
          textArray(ids)
        }::text[])`;
        for (const part of chunks(events, CHUNK)) {
          await tx`INSERT INTO skillbox_events ${
            tx(part, "run_id", "seq", "kind", "data", "at")
          }`;
        }
        if (files.length > 0) {
          await tx`DELETE FROM skillbox_files WHERE run_id = ANY(${
            textArray(ids)
          }::text[])`;
          for (const part of chunks(files, 100)) {
            await tx`INSERT INTO skillbox_files ${
              tx(
                part,
                "run_id",
                "seq",
                "name",
                "size",
                "data",
                "note",
                "is_binary",
              )
            }`;
          }
        }
        await announce(
          tx,
          host,
          writes.map(({ run }): [Change, string] => [
            run.outcome === "running"
              ? "started"
              : fresh.has(run.id)
              ? "ran"
              : "finished",
            run.id,
          ]),
        );
      });
    });
  }

  async list(query: RunQuery): Promise<RunPage> {
    return await this.#call(async () => {
      const sql = this.#sql;
      const { where, limit } = listQuery(query);
      // Values from a URL, a NUL as the rows write it (PostgreSQL refuses
      // one), here and in the other reads.
      const condition = where.map(([c, v]) =>
        v === undefined ? sql.unsafe(c) : sql`${sql.unsafe(c)} ${withoutNul(v)}`
      ).reduce((a, b) => sql`${a} AND ${b}`, sql`TRUE`);
      const rows = await sql`SELECT cursor, ${sql(COLUMNS)} FROM skillbox_runs
        WHERE ${condition} ORDER BY cursor DESC LIMIT ${limit + 1}`;
      return fromRow.page(rows, limit);
    });
  }

  async get(asked: string, scope: RunScope = "all"): Promise<RunDetail | null> {
    return await this.#call(async () => {
      const sql = this.#sql;
      const id = withoutNul(asked);
      const [row] = await sql`SELECT ${
        sql(COLUMNS)
      } FROM skillbox_runs WHERE id = ${id}`;
      if (!row || !mayView(scope, row.owner ?? null)) return null;
      const [events, [count], children, files] = await Promise.all([
        sql`SELECT seq, kind, data, at FROM skillbox_events WHERE run_id = ${id} ORDER BY seq`,
        sql`SELECT count(*) AS n FROM skillbox_runs WHERE parent_id = ${id}
          ${this.#owned(scope)}`,
        this.children(id, {}, scope),
        sql`SELECT ${
          sql.unsafe(FILE_ENTRY_COLUMNS)
        } FROM skillbox_files WHERE run_id = ${id} ORDER BY seq`,
      ]);
      return fromRow.detail(row, {
        events,
        files,
        children,
        childCount: Number(count?.n ?? 0),
      });
    });
  }

  async file(
    runId: string,
    index: number,
    scope: RunScope = "all",
  ): Promise<StoredFile | null> {
    // Past a file's place (a seq is an INTEGER): none there.
    if (!Number.isSafeInteger(index) || index < 0 || index > 2 ** 31 - 1) {
      return null;
    }
    return await this.#call(async () => {
      const [row] = await this.#sql`SELECT r.owner, f.name, f.size, f.data,
        f.note FROM skillbox_files f JOIN skillbox_runs r ON r.id = f.run_id
        WHERE f.run_id = ${withoutNul(runId)} AND f.seq = ${index}`;
      if (!row || !mayView(scope, row.owner ?? null)) return null;
      return fromRow.file(row);
    });
  }

  async children(
    parentId: string,
    query: ChildQuery,
    scope: RunScope = "all",
  ): Promise<ChildPage> {
    const { after, limit } = childrenQuery(query);
    return await this.#call(async () => {
      const sql = this.#sql;
      const rows = await sql`SELECT ${
        sql(SUMMARY_COLUMNS as string[])
      } FROM skillbox_runs WHERE parent_id = ${withoutNul(parentId)}
        ${
        after
          ? sql`AND (started_at, cursor) > (${after[0]}::float8, ${
            after[1]
          }::bigint)`
          : sql``
      }
        ${this.#owned(scope)}
        ORDER BY started_at, cursor LIMIT ${limit + 1}`;
      return fromRow.children(rows, limit);
    });
  }

  async timings(since: number, scope: RunScope = "all"): Promise<RunTiming[]> {
    return await this.#call(async () => {
      const sql = this.#sql;
      const rows = await sql`SELECT kind, name, outcome, duration_ms, ended_at
        FROM skillbox_runs WHERE ended_at >= ${since} AND outcome != 'running'
        ${this.#owned(scope)}
        ORDER BY cursor`;
      return rows.map(fromRow.timing);
    });
  }

  /**
   * Prunes as {@link RunStore.prune} does; without `limits.now`, by the
   * database's clock: every host prunes the fleet's runs, and one whose
   * clock ran 30 days ahead deleted every host's runs of the last 23 days.
   */
  async prune(limits: Retention): Promise<number> {
    return await this.#call(async () => {
      const now = limits.now ?? await this.now();
      return await this.#sql.begin(async (tx) => {
        const oldest = oldestKept({ ...limits, now });
        const old = await tx`DELETE FROM skillbox_runs
          WHERE ended_at < ${oldest} RETURNING id`;
        const ids = old.map((r) => String(r.id));
        const held = await tx`SELECT owner, count(*) AS n FROM skillbox_runs
          GROUP BY owner`;
        const counts = new Map<string | null, number>(
          held.map((r) => [r.owner ?? null, Number(r.n)]),
        );
        if (Math.sumPrecise(counts.values()) > limits.maxRuns) {
          for (const [owner, keep] of overShares(counts, limits.maxRuns)) {
            ids.push(...await pruneOwner(tx, owner, keep));
          }
        }
        if (ids.length > 0) {
          await tx`DELETE FROM skillbox_events WHERE run_id = ANY(${
            textArray(ids)
          }::text[])`;
          await tx`DELETE FROM skillbox_files WHERE run_id = ANY(${
            textArray(ids)
          }::text[])`;
        }
        return ids.length;
      });
    });
  }

  async interrupt(host: string): Promise<number> {
    return await this.#call(async () => {
      return await this.#sql.begin(async (tx) => {
        const done = await tx`UPDATE skillbox_runs
          SET outcome = 'interrupted', error = ${INTERRUPTED}
          WHERE host = ${host} AND outcome = 'running' RETURNING id`;
        // Other hosts' live views still show them running: they end now.
        await announce(
          tx,
          host,
          done.map((r): [Change, string] => ["finished", String(r.id)]),
        );
        return done.length;
      });
    });
  }

  /**
   * Stamps this host as alive now (the database's clock), or removes its
   * stamp when it stops cleanly. Hosts call it every few seconds, off the
   * call path (see the recorder).
   *
   * @param host the host's id
   * @param leaving true when the host stops
   * @param instance this host process
   * @returns the replaced stamp's age in milliseconds when another
   *   instance made it, else null
   */
  async beat(
    host: string,
    leaving = false,
    instance?: string,
  ): Promise<number | null> {
    return await this.#call(async () => {
      if (leaving) {
        await this.#sql`DELETE FROM skillbox_hosts WHERE host = ${host}`;
        return null;
      }
      // The WITH reads the stamp as it was before this statement.
      const [row] = await this.#sql`WITH old AS (
          SELECT instance,
            extract(epoch FROM now() - seen_at) * 1000 AS age_ms
          FROM skillbox_hosts WHERE host = ${host}
        )
        INSERT INTO skillbox_hosts (host, seen_at, instance)
        VALUES (${host}, now(), ${instance ?? null})
        ON CONFLICT (host) DO UPDATE
          SET seen_at = now(), instance = EXCLUDED.instance
        RETURNING (SELECT instance FROM old) AS old_instance,
          (SELECT age_ms FROM old) AS old_age_ms`;
      const old = row?.old_instance;
      return typeof old === "string" && old !== instance
        ? Math.max(0, Math.round(Number(row!.old_age_ms)))
        : null;
    });
  }

  /**
   * Every host's last heartbeat.
   *
   * @returns each host's stamp, with its age by the database's clock
   */
  async hosts(): Promise<HostBeat[]> {
    return await this.#call(async () => {
      const rows = await this.#sql`SELECT host,
        extract(epoch FROM now() - seen_at) * 1000 AS age_ms
        FROM skillbox_hosts ORDER BY host`;
      return rows.map((r) => ({
        host: String(r.host),
        ageMs: Math.max(0, Math.round(Number(r.age_ms))),
      }));
    });
  }

  /**
   * The database's clock.
   *
   * @returns epoch milliseconds
   */
  async now(): Promise<number> {
    return await this.#call(async () => {
      const [row] = await this.#sql`SELECT
        extract(epoch FROM now())::float8 * 1000 AS now`;
      return Number(row!.now);
    });
  }

  async count(): Promise<number> {
    return await this.#call(async () => {
      const [row] = await this
        .#sql`SELECT count(*)::int AS n FROM skillbox_runs`;
      return Number(row?.n ?? 0);
    });
  }

  follow(host: string, listener: (change: FleetChange) => void): () => void {
    const sql = this.#sql;
    let stopped = false;
    let unlisten: (() => Promise<void>) | null = null;
    // The other hosts' runs this host last knew running. A notice sent
    // while its LISTEN connection was down (a network blip, a database
    // restart) is never heard: the runs it ended stayed running in every
    // viewer for good. Each LISTEN after the first tells what became of
    // them, and the runs that started meanwhile.
    const running = new Set<string>();
    // Those the last catching up told finished: the notice of a write
    // that committed after the LISTEN but before that read is not told
    // again when it is heard.
    let ended = new Set<string>();
    let listens = 0;
    const heard = async (payload: string) => {
      let notice: Partial<Record<"host" | Change, unknown>> | null;
      try {
        notice = JSON.parse(payload);
      } catch {
        return;
      }
      // Any client of the database may NOTIFY: only an object can be ours
      // (JSON `null` here threw, unhandled, and ended the host).
      if (typeof notice !== "object" || notice === null) return;
      if (notice.host === host) return;
      const ids = (c: Change) => {
        const list = notice[c];
        return Array.isArray(list) ? list.map(String) : [];
      };
      const started = ids("started");
      const ran = ids("ran");
      const finished = ids("finished");
      try {
        const rows = await this.#answered(() =>
          sql`SELECT ${sql(COLUMNS)} FROM skillbox_runs
          WHERE id = ANY(${
            textArray([...started, ...ran, ...finished])
          }::text[])`
        );
        const byId = new Map(rows.map((row) => [String(row.id), row]));
        const tell = (type: "started" | "finished", list: string[]) => {
          for (const id of list) {
            const row = byId.get(id);
            if (row && !stopped) listener({ type, run: fromRow.run(row) });
          }
        };
        // Starts first, then ends: a run that ran whole between two
        // flushes is told started, then finished.
        tell("started", [...started, ...ran]);
        tell("finished", [
          ...ran,
          ...finished.filter((id) => !ended.delete(id)),
        ]);
        for (const id of started) if (byId.has(id)) running.add(id);
        for (const id of [...ran, ...finished]) running.delete(id);
      } catch {
        // the database went away: the next notice reads again
      }
    };
    const caughtUp = async () => {
      const again = listens++ > 0;
      ended = new Set();
      try {
        const rows = await this.#answered(() =>
          sql`SELECT ${sql(COLUMNS)} FROM skillbox_runs
          WHERE (outcome = 'running' AND host <> ${host})
          OR id = ANY(${textArray([...running])}::text[])`
        );
        const known = new Set(running);
        running.clear();
        for (const row of rows) {
          const run = fromRow.run(row);
          const now = run.outcome === "running";
          if (now) running.add(run.id);
          if (!again || stopped || now === known.has(run.id)) continue;
          if (!now) ended.add(run.id);
          listener({ type: now ? "started" : "finished", run });
        }
      } catch {
        // the database went away again: the next LISTEN reads again
      }
    };
    // One notice at a time: a run's start is never told after its end.
    let hearing = Promise.resolve();
    const hear = (payload: string) => {
      if (!stopped) hearing = hearing.then(() => heard(payload));
    };
    const listened = () => {
      if (!stopped) hearing = hearing.then(caughtUp);
    };
    // The client listens again by itself after any failure, the first one
    // included: a retry of ours added one more listener each time, and
    // every notice was told once per retry. A LISTEN whose first try
    // failed gives nothing to unlisten it with: once stopped, its
    // listener does nothing.
    sql.listen(CHANNEL, hear, listened).then(
      (meta) => {
        if (stopped) void meta.unlisten().catch(() => {});
        else unlisten = meta.unlisten;
      },
      () => {},
    );
    return () => {
      stopped = true;
      void unlisten?.().catch(() => {});
    };
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 2 });
    // Ending asks the server to close; one that does not answer leaves
    // the sockets open, and with them the process.
    this.#cut();
  }
}

// What a notice says of a run: it started (written `running`), it ran
// whole between two flushes (inserted finished: started and finished),
// or it finished.
type Change = "started" | "ran" | "finished";

// Tells the other hosts (inside the writing transaction: sent if it
// commits) which runs started and finished, in notices of at most
// IDS_PER_NOTICE ids, all in one statement.
async function announce(
  tx: postgres.TransactionSql,
  host: string,
  changes: readonly [Change, string][],
): Promise<void> {
  if (changes.length === 0) return;
  const notices = chunks([...changes], IDS_PER_NOTICE).map((part) => {
    const notice: Partial<Record<Change, string[]>> = {};
    for (const [change, id] of part) (notice[change] ??= []).push(id);
    return JSON.stringify({ host, ...notice });
  });
  await tx`SELECT pg_notify(${CHANNEL}, n) FROM unnest(${
    textArray(notices)
  }::text[]) AS n`;
}

// A text[] literal (`{"a","b"}`), passed as text and cast in SQL: without
// the array types' lookup the client cannot send a JS array itself.
function textArray(items: readonly string[]): string {
  return `{${
    items.map((x) => `"${x.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`)
      .join(",")
  }}`;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

// Deletes an owner's runs older than its `keep` newest, but not a child
// whose parent is kept; and, by a recursive query, the deleted runs'
// children, theirs and so on (UNION: a cycle of parents ends too).
// Joined by USING: `id IN (SELECT id FROM doomed)` made PostgreSQL hash
// the ids again and scan the table, and took twice as long.
// Returns the ids of every run deleted.
async function pruneOwner(
  tx: postgres.TransactionSql,
  owner: string | null,
  keep: number,
): Promise<string[]> {
  const whose = owner === null ? tx`owner IS NULL` : tx`owner = ${owner}`;
  const [floor] = keep === 0 ? [] : await tx`SELECT cursor FROM skillbox_runs
    WHERE ${whose} ORDER BY cursor DESC LIMIT 1 OFFSET ${keep - 1}`;
  const below = floor ? Number(floor.cursor) : Number.MAX_SAFE_INTEGER;
  const gone = await tx`WITH RECURSIVE doomed(id) AS (
      SELECT id FROM skillbox_runs r WHERE ${whose} AND cursor < ${below}
        AND (parent_id IS NULL OR NOT EXISTS
          (SELECT 1 FROM skillbox_runs p WHERE p.id = r.parent_id))
      UNION SELECT r.id FROM skillbox_runs r JOIN doomed d ON r.parent_id = d.id
    ) DELETE FROM skillbox_runs x USING doomed d WHERE x.id = d.id RETURNING x.id`;
  return gone.map((r) => String(r.id));
}
