/**
 * The run store interface: what the recorder writes and the console reads.
 * SQLite (`sqlite.ts`) is the embedded implementation; PostgreSQL
 * (`postgres.ts`) is the one a fleet of hosts shares. A method answers now
 * (SQLite) or later (a server): callers `await` either. What the two share
 * (the columns of a run and their mapping, the list filters) is here.
 *
 * Whose a run is: the owner the run history keeps with each run, so the
 * console shows a token only its own sessions' work. An owner is a short
 * fingerprint of the configured token the session authenticated with,
 * never the token, and not the positional label (`token 2`) either: a
 * label moves to another token when the operator removes or reorders
 * `tokens`, and the history would move with it. A run with no owner (the
 * operator's own in-process or stdio calls, a host without tokens, or a row
 * written before owners were kept) is shown to console admins only.
 *
 * @module
 */

import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";

/** One finished run, redacted and capped, as kept. */
export interface RunRecord {
  /** The run's id. */
  id: string;
  /** The run it is part of (a skill's tool call), or null. */
  parentId: string | null;
  /** A tool call or a skill run. */
  kind: "tool" | "skill";
  /** The tool's or skill's name. */
  name: string;
  /** The tool's toolkit, or null. */
  toolkit: string | null;
  /** The session it ran for. */
  session: string;
  /** The session's transport (`websocket`, `sse`, `stdio`, `in-process`, ...). */
  transport: string;
  /** Which configured token the session used (a label, never the token), or null. */
  tokenLabel: string | null;
  /**
   * Whose run it is ({@link ownerOf} the session's token), or
   * null: the operator's, shown to console admins only. @default null
   */
  owner?: string | null;
  /**
   * Which host ran it (`host.id`, default `hostname:port`).
   * @default "" (a store written before hosts were recorded)
   */
  host?: string;
  /** Start, epoch milliseconds. */
  startedAt: number;
  /** End, epoch milliseconds. */
  endedAt: number;
  /** Wall time in milliseconds. */
  durationMs: number;
  /**
   * `"ok"`, the A2E error code, `"running"` (written while it runs, so a
   * restarted host can tell) or `"interrupted"` (its host stopped first).
   */
  outcome: string;
  /** The error message, redacted, or null. */
  error: string | null;
  /** The result's summary, redacted, or null. */
  summary: string | null;
  /** The arguments as redacted, capped JSON text. */
  args: string;
  /** The result's data as redacted, capped JSON text, or null. */
  result: string | null;
  /** Events the run emitted (kept or not). */
  eventCount: number;
  /** LLM turns (skills). */
  llmTurns: number;
  /** LLM input tokens (skills). */
  inputTokens: number;
  /** LLM output tokens (skills). */
  outputTokens: number;
}

/** One kept event of a run. */
export interface StoredEvent {
  /** The event's `seq`. */
  seq: number;
  /** Its kind (`progress`, `llm.token`, ...). */
  kind: string;
  /** Its data as redacted, capped JSON text. */
  data: string;
  /** When it happened, epoch milliseconds. */
  at: number;
}

/**
 * A file a run left behind (a skill script's workspace), kept with the
 * run's record when the store keeps files (size-capped).
 */
export interface StoredFile {
  /** Its path, `<script call>/<path in the workspace>`. */
  name: string;
  /** Its size in bytes when the run ended. */
  size: number;
  /** Its content (secrets scrubbed), or null when not kept. */
  data: Uint8Array | null;
  /** Why it is not kept (over the cap, holds a secret), or null. */
  note: string | null;
}

/**
 * A file a run left, as its run's detail lists it: what it is, not its
 * content ({@link RunStore.file} reads that, one file at a time).
 */
export interface RunFileEntry {
  /** Its path, `<script call>/<path in the workspace>`. */
  name: string;
  /** Its size in bytes when the run ended. */
  size: number;
  /** Whether its content was kept. */
  kept: boolean;
  /** Bytes of content kept (0 when not kept). */
  keptBytes: number;
  /** Whether the content kept is not UTF-8 text (see {@link isBinary}). */
  binary: boolean;
  /** Why it is not kept (over the cap, holds a secret), or null. */
  note: string | null;
}

/**
 * Whether a file's content is not UTF-8 text, or holds a NUL byte (served
 * as bytes, not shown as text). The stores note it when a file is written.
 *
 * @param data the content
 * @returns true when it is binary
 * @example Text, and not
 * ```ts
 * import { isBinary } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isBinary(new TextEncoder().encode("héllo")), false);
 * assert.equal(isBinary(new Uint8Array([0x61, 0])), true);
 * assert.equal(isBinary(new Uint8Array([0xff])), true);
 * assert.equal(isBinary(new Uint8Array([0xed, 0xa0, 0x80])), true); // U+D800
 * ```
 */
export function isBinary(data: Uint8Array): boolean {
  return data.includes(0) || !isUtf8(data);
}

/**
 * A value as the stores keep text: each NUL in a string as U+FFFD.
 * PostgreSQL's text refuses NUL (and with it a whole batch), and
 * node:sqlite reads a text back only up to its first one.
 *
 * @param value any value; only a string is changed
 * @returns the value, a string without NUL
 * @example
 * ```ts
 * import { withoutNul } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(withoutNul("a\u0000b"), "a\uFFFDb");
 * assert.equal(withoutNul(7), 7);
 * ```
 */
export function withoutNul<T>(value: T): T {
  return typeof value === "string" && value.includes("\0")
    ? value.replaceAll("\0", "\uFFFD") as T
    : value;
}

/**
 * A row as the stores write it: {@link withoutNul} on each of its values,
 * in place (pass a fresh object). A client's tool name, a module's error
 * message or event kind may hold a NUL; JSON text already escapes one.
 *
 * @param row a row about to be written
 * @returns the same row, its strings without NUL
 * @example
 * ```ts
 * import { withoutNuls } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(withoutNuls({ name: "a\u0000b", seq: 1 }), { name: "a\uFFFDb", seq: 1 });
 * ```
 */
export function withoutNuls<T extends Record<string, unknown>>(row: T): T {
  for (const key in row) row[key] = withoutNul(row[key]);
  return row;
}

/** A finished run and its kept events, written together. */
export interface RunWrite {
  /** The run. */
  run: RunRecord;
  /** Its kept events, in order. */
  events: StoredEvent[];
  /** The files it left, in order. @default [] */
  files?: StoredFile[];
}

/** Filters of {@link RunStore.list}; all optional. */
export interface RunQuery {
  /** Most runs returned. @default 50 (at most 500) */
  limit?: number;
  /** Exact tool or skill name. */
  name?: string;
  /** `tool` or `skill`. */
  kind?: string;
  /** `ok`, `error` (any failure) or an exact error code. */
  outcome?: string;
  /** Exact session id. */
  session?: string;
  /** Only runs older than this cursor (the previous page's `next`). */
  before?: number;
  /** Only runs of this owner (see {@link ownerOf}). @default every run */
  owner?: string;
}

/** A page of runs, newest first. */
export interface RunPage {
  /** The runs, each with its cursor. */
  runs: (RunRecord & { cursor: number })[];
  /** The cursor of the next page, or null at the end. */
  next: number | null;
}

/**
 * A child run as a run's detail lists it: no arguments, result, summary or
 * error (each up to 16 KiB or 4,000 characters; open the child for them).
 */
export type RunSummary = Omit<RunRecord, (typeof DETAIL_ONLY)[number]>;

// The texts a run's summary leaves out (the columns of its own detail).
const DETAIL_ONLY = ["args", "result", "summary", "error"] as const;

/** The most children one answer carries (a run's detail, one page). */
export const CHILD_PAGE = 100;

/** Which children {@link RunStore.children} reads. */
export interface ChildQuery {
  /** Only children after this cursor (the previous page's `next`). */
  after?: string;
  /** Most children returned. @default 100 (at most {@link CHILD_PAGE}) */
  limit?: number;
}

/** A page of a run's children, in start order. */
export interface ChildPage {
  /** The children. */
  children: RunSummary[];
  /** The cursor of the next page, or null at the end. */
  next: string | null;
}

/** One run with its events and the first page of its child runs. */
export interface RunDetail {
  /** The run. */
  run: RunRecord;
  /** Its kept events. */
  events: StoredEvent[];
  /**
   * The first {@link CHILD_PAGE} runs it made (a skill's or `run_code`'s
   * tool calls), oldest first; {@link RunStore.children} reads the rest.
   */
  children: RunSummary[];
  /** How many children it has (that the scope may see). */
  childCount: number;
  /** The cursor of the children's next page, or null when all are here. */
  childrenNext: string | null;
  /**
   * The files it left (skill scripts' workspaces), without their content.
   * @default []
   */
  files?: RunFileEntry[];
}

/** One finished run's timing, for statistics. */
export interface RunTiming {
  kind: string;
  name: string;
  outcome: string;
  durationMs: number;
  endedAt: number;
}

/** The error of a run its host left unfinished (marked when it restarted). */
export const INTERRUPTED =
  "The host stopped before the run finished (marked when it restarted)";

/** A value now or later: SQLite answers at once, a server later. */
export type Awaitable<T> = T | Promise<T>;

/** What another host sharing the store did (heard through the store). */
export interface FleetChange {
  /** `started` (written while running) or `finished`. */
  type: "started" | "finished";
  /** The run as stored (still `running` when started). */
  run: RunRecord;
}

/** A host's last heartbeat in a shared store. */
export interface HostBeat {
  /** The host's id (`host.id`). */
  host: string;
  /** Milliseconds since it last beat, by the store's clock. */
  ageMs: number;
}

/**
 * Where runs are kept. Every method may throw (or reject) when the storage
 * fails.
 */
export interface RunStore {
  /**
   * Writes runs, all or none. A run written again (finished after it was
   * written `running`) replaces its earlier row.
   */
  write(batch: readonly RunWrite[]): Awaitable<void>;
  /** Lists runs, newest first. */
  list(query: RunQuery): Awaitable<RunPage>;
  /**
   * One run with its events and children, or null (also when `scope` may
   * not see it: the caller cannot tell it apart from a missing run).
   */
  get(id: string, scope?: RunScope): Awaitable<RunDetail | null>;
  /**
   * One file a run left, with its content: the `index`th of its detail's
   * `files`; null when there is none there, or `scope` may not see the run.
   */
  file(
    runId: string,
    index: number,
    scope?: RunScope,
  ): Awaitable<StoredFile | null>;
  /**
   * A page of a run's children (those `scope` may see), in start order:
   * the pages after the one {@link RunStore.get} carried.
   *
   * @throws {RangeError} when `query.after` is not a cursor this store gave
   */
  children(
    parentId: string,
    query: ChildQuery,
    scope?: RunScope,
  ): Awaitable<ChildPage>;
  /**
   * Timings of the finished runs (in `scope`) that ended at or after
   * `since` (epoch ms).
   */
  timings(since: number, scope?: RunScope): Awaitable<RunTiming[]>;
  /**
   * Deletes runs older than `maxAgeDays`, then, when more than `maxRuns`
   * are left, the oldest runs of each owner over its share (see
   * {@link overShares}). A run's children go with it, and stay while it
   * is kept.
   *
   * @returns how many runs were deleted
   */
  prune(limits: Retention): Awaitable<number>;
  /**
   * Marks the runs `host` left `running` as `interrupted` (the host
   * restarted before they finished).
   *
   * @returns how many runs were marked
   */
  interrupt(host: string): Awaitable<number>;
  /** How many runs are kept. */
  count(): Awaitable<number>;
  /**
   * Hears the runs other hosts sharing the store start and finish, until
   * unsubscribed; absent when nothing else can write the store.
   */
  follow?(
    host: string,
    listener: (change: FleetChange) => void,
  ): () => void;
  /**
   * Stamps `host` alive now, as `instance` (one host process), or
   * (`leaving`) removes its stamp; absent when nothing else can write the
   * store.
   *
   * @returns when the stamp replaced was another instance's, its age in
   *   milliseconds (two live hosts share the id when it keeps being
   *   fresh); else null
   */
  beat?(
    host: string,
    leaving?: boolean,
    instance?: string,
  ): Awaitable<number | null | void>;
  /** Every host's last heartbeat (see {@link RunStore.beat}). */
  hosts?(): Awaitable<HostBeat[]>;
  /**
   * The store's clock, epoch milliseconds: a shared store's, so every host
   * of a fleet reads one window of runs whatever its own clock says.
   * Absent when the store is this host's alone (its clock is `Date.now()`).
   */
  now?(): Awaitable<number>;
  /** Closes the storage. */
  close(): Awaitable<void>;
}

/** What {@link RunStore.prune} keeps. */
export interface Retention {
  /** The newest runs kept. */
  maxRuns: number;
  /** Days a run is kept after it ended. */
  maxAgeDays: number;
  /**
   * The clock, epoch milliseconds. @default the store's: this host's
   * (SQLite), the database's (PostgreSQL: hosts' clocks differ)
   */
  now?: number;
}

/**
 * The end before which {@link RunStore.prune} deletes a run.
 *
 * @param limits the retention
 * @returns epoch milliseconds: `now` less `maxAgeDays`
 * @example A day kept
 * ```ts
 * import { oldestKept } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(oldestKept({ maxRuns: 10, maxAgeDays: 1, now: 86_400_001 }), 1);
 * ```
 */
export function oldestKept(limits: Retention): number {
  return (limits.now ?? Date.now()) - limits.maxAgeDays * 86_400_000;
}

/**
 * How many runs each owner over its fair share of `maxRuns` keeps, when
 * the store holds more than `maxRuns`: max-min fairness, so no owner (a
 * token, or null: the operator's) loses a run while it holds no more than
 * an equal share of what the others leave, and one token's flood of calls
 * prunes only its own history. Owners within their share are not listed.
 *
 * @param counts the runs each owner holds
 * @param maxRuns the runs kept in all
 * @returns each owner over its share, and how many of its newest runs it
 *   keeps (0 when there are more owners than `maxRuns`)
 * @example A flood of A's is pruned down to what B and the operator leave
 * ```ts
 * import { overShares } from "./store.ts";
 * import assert from "node:assert/strict";
 * const counts = new Map([["sha256:aaaaaaaa", 40], ["sha256:bbbbbbbb", 3], [null, 2]]);
 * assert.deepEqual(overShares(counts, 10), new Map([["sha256:aaaaaaaa", 5]]));
 * // Two owners over a third each share what the third leaves.
 * assert.deepEqual(overShares(new Map([["a", 9], ["b", 8], [null, 1]]), 10),
 *   new Map([["b", 4], ["a", 5]]));
 * assert.deepEqual(overShares(counts, 100), new Map());
 * ```
 */
export function overShares(
  counts: ReadonlyMap<string | null, number>,
  maxRuns: number,
): Map<string | null, number> {
  const owners = [...counts].sort((a, b) => a[1] - b[1]);
  const over = new Map<string | null, number>();
  let left = maxRuns;
  for (let i = 0; i < owners.length; i++) {
    const held = owners[i]![1];
    const others = owners.length - i;
    const share = Math.floor(left / others);
    if (held <= share) {
      left -= held;
      continue;
    }
    // Every owner from here holds more than the share: each keeps it,
    // and the largest ones the runs a whole share leaves over.
    const spare = left - share * others;
    for (let j = i; j < owners.length; j++) {
      over.set(owners[j]![0], share + (j >= owners.length - spare ? 1 : 0));
    }
    break;
  }
  return over;
}

/** Whose runs a console request may see: every run, or one owner's. */
export type RunScope = "all" | { readonly owner: string };

/**
 * The owner recorded for runs of sessions that authenticated with a token.
 * 32 bits of SHA-256 over the token: enough to keep the configured tokens
 * apart, too few to confirm a guess of a long random token offline.
 *
 * @param token a configured token
 * @returns its owner, `sha256:` and 8 hex digits
 * @example Stable and not the token
 * ```ts
 * import { ownerOf } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ownerOf("alpha-token"), ownerOf("alpha-token"));
 * assert.notEqual(ownerOf("alpha-token"), ownerOf("beta-token"));
 * assert.match(ownerOf("alpha-token"), /^sha256:[0-9a-f]{8}$/);
 * ```
 */
export function ownerOf(token: string): string {
  const digest = createHash("sha256").update("skillbox run owner\0")
    .update(token).digest("hex");
  return `sha256:${digest.slice(0, 8)}`;
}

/**
 * Whether a scope may see a run of this owner.
 *
 * @param scope the viewer's scope
 * @param owner the run's owner (null: the operator's, or unknown)
 * @returns true when the viewer may see it
 * @example Admins see everything, a token its own runs only
 * ```ts
 * import { mayView } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(mayView("all", null), true);
 * assert.equal(mayView({ owner: "sha256:0a0b0c0d" }, "sha256:0a0b0c0d"), true);
 * assert.equal(mayView({ owner: "sha256:0a0b0c0d" }, null), false);
 * ```
 */
export function mayView(
  scope: RunScope,
  owner: string | null | undefined,
): boolean {
  return scope === "all" || (owner != null && owner === scope.owner);
}

/**
 * The columns of a run, in the order both stores read and write them: the
 * keys {@link toRow} writes, in its order (SQLite binds a row's values by
 * position), so the two cannot drift apart.
 */
export const RUN_COLUMNS: readonly string[] = Object.keys(
  toRow({} as RunRecord),
);

/**
 * The columns of a child run's summary ({@link RunSummary}), and `cursor`
 * (its page's cursor is its start and cursor).
 */
export const SUMMARY_COLUMNS: readonly string[] = [
  "cursor",
  ...RUN_COLUMNS.filter((c) => !DETAIL_ONLY.some((text) => text === c)),
];

/** A row of a store's runs table, as written. */
export type RunRow = Record<string, string | number | null>;

/** A row as a store's driver reads it back. */
// deno-lint-ignore no-explicit-any
export type StoredRow = Record<string, any>;

/**
 * A run as a row of its store's runs table ({@link RUN_COLUMNS}).
 *
 * @param run the run
 * @returns its row, snake_case, its keys in {@link RUN_COLUMNS} order (SQLite
 *   binds its values by position)
 * @example A run round-trips through its row
 * ```ts
 * import { fromRow, toRow } from "./store.ts";
 * import assert from "node:assert/strict";
 * const run = {
 *   id: "r1", parentId: null, kind: "tool" as const, name: "add", toolkit: null, session: "s",
 *   transport: "in-process", tokenLabel: null, owner: null, host: "", startedAt: 1, endedAt: 2,
 *   durationMs: 1, outcome: "ok", error: null, summary: null, args: "{}", result: "3",
 *   eventCount: 0, llmTurns: 0, inputTokens: 0, outputTokens: 0,
 * };
 * assert.equal(toRow(run).parent_id, null);
 * assert.deepEqual(fromRow.run(toRow(run)), run);
 * ```
 */
export function toRow(run: RunRecord): RunRow {
  return {
    id: run.id,
    parent_id: run.parentId,
    kind: run.kind,
    name: run.name,
    toolkit: run.toolkit,
    session: run.session,
    transport: run.transport,
    token_label: run.tokenLabel,
    owner: run.owner ?? null,
    host: run.host ?? "",
    started_at: run.startedAt,
    ended_at: run.endedAt,
    duration_ms: run.durationMs,
    outcome: run.outcome,
    error: run.error,
    summary: run.summary,
    args: run.args,
    result: run.result,
    event_count: run.eventCount,
    llm_turns: run.llmTurns,
    input_tokens: run.inputTokens,
    output_tokens: run.outputTokens,
  };
}

function text(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

/**
 * What a store read back, from the rows its driver gave: a run (see
 * {@link toRow}), a page of runs, an event, a file, a timing.
 *
 * @example An event row, and a page with a next one
 * ```ts
 * import { fromRow } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fromRow.event({ seq: 1, kind: "status", data: "{}", at: 5 }),
 *   { seq: 1, kind: "status", data: "{}", at: 5 });
 * assert.equal(fromRow.page([], 10).next, null);
 * ```
 */
export const fromRow = {
  /** A run: its summary and its texts. */
  run: (row: StoredRow): RunRecord => ({
    ...fromRow.summary(row),
    error: text(row.error),
    summary: text(row.summary),
    args: String(row.args),
    result: text(row.result),
  }),
  /**
   * A page of runs from the rows a list query read, newest first, each with
   * its `cursor` (one more than `limit` when there is a next page).
   */
  page(rows: readonly StoredRow[], limit: number): RunPage {
    const runs = rows.slice(0, limit).map((row) => ({
      ...fromRow.run(row),
      cursor: Number(row.cursor),
    }));
    const last = runs[runs.length - 1];
    return { runs, next: rows.length > limit && last ? last.cursor : null };
  },
  /** A kept event. */
  event: (e: StoredRow): StoredEvent => ({
    seq: Number(e.seq),
    kind: String(e.kind),
    data: String(e.data),
    at: Number(e.at),
  }),
  /** A kept file, with its content. */
  file: (f: StoredRow): StoredFile => ({
    name: String(f.name),
    size: Number(f.size),
    data: f.data === null ? null : new Uint8Array(f.data),
    note: text(f.note),
  }),
  /**
   * A file as a detail lists it, from a row of `name, size, kept,
   * kept_bytes, is_binary, note` and, when `is_binary` is null (a file
   * written before it was noted), `data`.
   */
  fileEntry: (f: StoredRow): RunFileEntry => ({
    name: String(f.name),
    size: Number(f.size),
    kept: Boolean(f.kept),
    keptBytes: Number(f.kept_bytes ?? 0),
    binary: f.is_binary === null || f.is_binary === undefined
      ? f.data != null && isBinary(new Uint8Array(f.data))
      : Boolean(f.is_binary),
    note: text(f.note),
  }),
  /** A child run's summary (a row of {@link SUMMARY_COLUMNS}). */
  summary: (row: StoredRow): RunSummary => ({
    id: String(row.id),
    parentId: text(row.parent_id),
    kind: row.kind === "skill" ? "skill" : "tool",
    name: String(row.name),
    toolkit: text(row.toolkit),
    session: String(row.session),
    transport: String(row.transport),
    tokenLabel: text(row.token_label),
    owner: text(row.owner),
    host: String(row.host ?? ""),
    startedAt: Number(row.started_at),
    endedAt: Number(row.ended_at),
    durationMs: Number(row.duration_ms),
    outcome: String(row.outcome),
    eventCount: Number(row.event_count),
    llmTurns: Number(row.llm_turns),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
  }),
  /**
   * A page of children from the rows a children query read (one more than
   * `limit` when there is a next page), in start order.
   */
  children(rows: readonly StoredRow[], limit: number): ChildPage {
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      children: page.map(fromRow.summary),
      next: rows.length > limit && last
        ? `${Number(last.started_at)}_${Number(last.cursor)}`
        : null,
    };
  },
  /** A run's detail from the rows its `get` read. */
  detail: (
    run: StoredRow,
    rows: Record<"events" | "files", readonly StoredRow[]> & {
      children: ChildPage;
      childCount: number;
    },
  ): RunDetail => ({
    run: fromRow.run(run),
    events: rows.events.map(fromRow.event),
    children: rows.children.children,
    childCount: rows.childCount,
    childrenNext: rows.children.next,
    files: rows.files.map(fromRow.fileEntry),
  }),
  /** A finished run's timing. */
  timing: (row: StoredRow): RunTiming => ({
    kind: String(row.kind),
    name: String(row.name),
    outcome: String(row.outcome),
    durationMs: Number(row.duration_ms),
    endedAt: Number(row.ended_at),
  }),
};

/**
 * The conditions of a list query, each an SQL fragment and the value that
 * follows it (none for a fixed condition), and its clamped page size.
 *
 * @param query the filters
 * @returns the conditions, to join with AND, and the page size
 * @example Failed runs of one tool, the page size capped
 * ```ts
 * import { listQuery } from "./store.ts";
 * import assert from "node:assert/strict";
 * const { where, limit } = listQuery({ name: "add", outcome: "error", limit: 9999 });
 * assert.deepEqual(where, [["name =", "add"], ["outcome NOT IN ('ok', 'running')"]]);
 * assert.equal(limit, 500);
 * assert.equal(listQuery({ limit: 2.5 }).limit, 2);
 * assert.deepEqual(listQuery({ before: 2.5 }).where, [["cursor <", 3]]);
 * ```
 */
export function listQuery(
  query: RunQuery,
): { where: [string, (string | number)?][]; limit: number } {
  const where: [string, (string | number)?][] = [];
  if (query.name) where.push(["name =", query.name]);
  if (query.kind) where.push(["kind =", query.kind]);
  if (query.session) where.push(["session =", query.session]);
  if (query.outcome === "error") {
    where.push(["outcome NOT IN ('ok', 'running')"]);
  } else if (query.outcome) where.push(["outcome =", query.outcome]);
  // A cursor is a whole number (PostgreSQL's BIGINT refuses `2.5`):
  // below 2.5 is below 3. Past any cursor (`1e300` refused as out of
  // BIGINT's range) reads as the safe integers' end: every cursor is in it.
  if (query.before !== undefined) {
    const before = Math.min(
      Math.max(query.before, -Number.MAX_SAFE_INTEGER),
      Number.MAX_SAFE_INTEGER,
    );
    where.push(["cursor <", Math.ceil(before)]);
  }
  if (query.owner !== undefined) where.push(["owner =", query.owner]);
  // Whole: SQLite refuses `LIMIT 2.5` and PostgreSQL a fraction of BIGINT.
  const limit = Math.trunc(Math.min(Math.max(1, query.limit ?? 50), 500));
  return { where, limit };
}

/**
 * A children query's page size and where it starts: after the child that
 * started at `after[0]` with cursor `after[1]` (start order, ties by
 * cursor), or from the first.
 *
 * @param query the page asked for
 * @returns the start (or null) and the clamped page size
 * @throws {RangeError} when `after` is not a cursor a page gave
 * @example A cursor a page gave, and one made up
 * ```ts
 * import { childrenQuery } from "./store.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(childrenQuery({ after: "12.5_7", limit: 1e6 }), { after: [12.5, 7], limit: 100 });
 * assert.deepEqual(childrenQuery({}), { after: null, limit: 100 });
 * assert.throws(() => childrenQuery({ after: "7" }), RangeError);
 * ```
 */
export function childrenQuery(
  query: ChildQuery,
): { after: [number, number] | null; limit: number } {
  // Not a number (`limit=abc` in a URL) reads as the default.
  const asked = Number.isFinite(query.limit) ? query.limit! : CHILD_PAGE;
  const limit = Math.trunc(Math.min(Math.max(1, asked), CHILD_PAGE));
  if (query.after === undefined) return { after: null, limit };
  const match = /^(-?[0-9.e+-]+)_([0-9]{1,16})$/.exec(query.after);
  const startedAt = Number(match?.[1]);
  const cursor = Number(match?.[2]);
  if (
    !match || !Number.isFinite(startedAt) || !Number.isSafeInteger(cursor)
  ) {
    throw new RangeError(
      `Cannot read the children's cursor "${
        query.after.slice(0, 100)
      }": it is not one a page gave`,
    );
  }
  return { after: [startedAt, cursor], limit };
}
