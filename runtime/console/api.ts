/**
 * The console's read-only JSON API: `/api/runs`, `/api/runs/<id>` (with
 * its kept files listed and the first page of its children),
 * `/api/runs/<id>/children` (the next pages), `/api/runs/<id>/files/<n>` (one kept file's
 * content), `/api/stats`, `/api/catalog`, `/api/overview` (sessions and
 * sandbox processes) and `/api/live` (SSE). Everything it returns was
 * redacted when recorded, or is redacted here (live data). No CORS headers:
 * browsers on other origins cannot read it.
 *
 * `/api/live` streams runs starting, their events, and finishing. Each
 * viewer has a bounded queue; a viewer that cannot keep up loses events
 * (counted), never slows a call.
 *
 * A run's kept files (a skill script's workspace) are listed with the run
 * (name, size, kept or not, binary or text), and one file's content is
 * served on its own, addressed by its place in the run's list, never by its
 * name (a name is whatever an untrusted script chose: `../../x`, `..`,
 * `<script>`; it is only ever shown as text). The content is served so that
 * it can never run in the console's origin: `text/plain` (or
 * `application/octet-stream`) with `nosniff`, as an attachment, under a CSP
 * of `default-src 'none'; sandbox` (a browser that opened it anyway would
 * give it an opaque origin and no script).
 *
 * @module
 */

import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import {
  BEAT_LOST_MS,
  type LiveChange,
  liveOf,
  type LiveRun,
  type RunRecorder,
} from "../store/recorder.ts";
import type {
  RunFileEntry,
  RunRecord,
  RunStore,
  RunSummary,
  RunTiming,
  StoredEvent,
  StoredFile,
} from "../store/store.ts";
import { isBinary, mayView, type RunScope } from "../store/store.ts";
import { Semaphore, WaitQueue } from "../slots.ts";
import { compareCodeUnits } from "../tools/filter.ts";

/** One entry of the catalog the console shows. */
export interface CatalogView {
  /**
   * Tools: name, description, toolkit, tags, and (with the registry's
   * statuses) status `available` or `blocked` with why: a tool the policy
   * denies is listed, not left out.
   */
  tools: {
    name: string;
    description: string;
    toolkit: string | null;
    tags: string[];
    status: "available" | "blocked";
    blocked_reason: string | null;
    origin?: string;
    path?: string;
  }[];
  /**
   * What the registry read but refused (an impostor of a taken name, a
   * tool declaring another folder's toolkit, a refused claim), with why.
   */
  refused: { kind: string; name: string; path: string; reason: string }[];
  /** Toolkits and their tools. */
  toolkits: { name: string; description: string; tools: string[] }[];
  /** Skills with status and, for a blocked one, why. */
  skills: {
    name: string;
    description: string;
    status: string;
    blocked_reason: string | null;
    /** Its loading warnings (e.g. why MCP's `skills/list` leaves it out). */
    warnings?: string[];
  }[];
  /** With a query: tool names by BM25 rank (the host's tool index). */
  matches?: string[];
}

/** A live session, as shown. */
export interface SessionView {
  id: string;
  transport: string;
  token_label: string | null;
  in_flight: number;
}

/** A sandbox process, as shown. */
export interface ProcessView {
  pid: number;
  /** Whose code it runs: the module (and grant) or the session. */
  principal: string;
  busy: number;
  rss_bytes: number;
}

/** What the API reads. */
export interface ConsoleSources {
  /** The recorder (live runs, store). */
  recorder: RunRecorder;
  /**
   * Tools, toolkits and skills; searched when `query` is not empty. In
   * `scope`, the tools its token's sessions may list; for console admins,
   * every tool's status and the registry's refusals.
   */
  catalog(query: string, scope: RunScope): Promise<CatalogView>;
  /** Live sessions (in `scope`: a token sees its own only). */
  sessions(scope?: RunScope): SessionView[];
  /** Live sandbox processes (shown to console admins only). */
  processes(): ProcessView[];
  /**
   * Whose runs, live events and sessions a request may see.
   * @default every one (an in-process console with no tokens)
   */
  scope?(c: Context): RunScope;
  /** Counts events a slow live viewer missed. */
  eventsDropped?(count: number): void;
}

const STATS_WINDOW_S = 3600;
// Store reads one viewer (a token, or the admins together) has running at
// once, and waiting their turn. The PostgreSQL store's 4 connections are
// shared, first come first served, by every viewer and by the recorder's
// writes: one token's flood of slow reads took all four and held every
// other token's reads behind them. Its reads now wait in its own line.
const READS_PER_VIEWER = 1;
const MAX_WAITING_READS = 16;

/**
 * Creates the API routes (mount under `/api`).
 *
 * @param sources what the API reads
 * @returns the routes
 * @example List runs of an empty history
 * ```ts
 * import { createApi } from "./api.ts";
 * import { openRecorder } from "../store/recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = openRecorder({ path: ":memory:", maxRuns: 10, maxAgeDays: 1 });
 * const api = createApi({ recorder, catalog: () => Promise.reject(), sessions: () => [], processes: () => [] });
 * const body = await (await api.request("/runs")).json();
 * assert.deepEqual(body.runs, []);
 * recorder.close();
 * ```
 */
export function createApi(sources: ConsoleSources): Hono {
  const { recorder } = sources;
  const scopeOf = (c: Context): RunScope => sources.scope?.(c) ?? "all";
  const lines = new ReadLines();
  // A store that cannot be read (a database down) answers 503, not 500:
  // the host is fine, its history is out of reach for now. The read waits
  // its viewer's turn; a viewer with too many waiting is told to retry.
  // Runs still pending in the recorder are written first, so a read sees
  // every run that has finished.
  const fromStore = async (
    c: Context,
    read: (scope: RunScope) => Promise<Response>,
  ): Promise<Response> => {
    const scope = scopeOf(c);
    try {
      return await lines.run(viewerOf(scope), async () => {
        await recorder.flush();
        return read(scope);
      }) ?? tooManyReads(c);
    } catch (error) {
      return c.json({ error: storeFailure(scope, error) }, 503);
    }
  };
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
  });

  app.get("/runs", (c) =>
    fromStore(c, async (scope) => {
      const store = recorder.store;
      if (!store) return c.json({ runs: [], next: null, stored: false });
      const page = await runsPage(store, c.req.query(), scope);
      return page === null
        ? c.json({ error: "limit and before must be numbers" }, 400)
        : c.json(page);
    }));

  app.get("/runs/:id", (c) =>
    fromStore(c, async (scope) => {
      const id = c.req.param("id");
      // Another token's run answers as a missing one: ids do not leak.
      const live = recorder.running.find((r) =>
        r.id === id && mayView(scope, r.owner)
      );
      if (live) {
        return c.json({ running: true, run: liveView(recorder, live) });
      }
      const detail = (await recorder.store?.get(id, scope)) ?? null;
      if (!detail) return c.json({ error: `Unknown run "${id}"` }, 404);
      return c.json({
        running: false,
        run: runView(detail.run),
        events: detail.events.map(eventView),
        // One page of summaries: a run_code run's 1,000 calls, whole, were
        // about 35 MB in one answer.
        children: detail.children.map(childView),
        children_total: detail.childCount,
        children_next: detail.childrenNext,
        files: runFileViews(detail.files ?? []),
      });
    }));

  // The pages of a run's children after the one its detail carried.
  app.get("/runs/:id/children", (c) =>
    fromStore(c, async (scope) => {
      const store = recorder.store;
      if (!store) return c.json({ children: [], next: null });
      const limit = c.req.query("limit");
      let page;
      try {
        page = await store.children(c.req.param("id"), {
          after: c.req.query("after"),
          limit: limit === undefined ? undefined : Number(limit),
        }, scope);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        return c.json({ error: error.message }, 400);
      }
      return c.json({
        children: page.children.map(childView),
        next: page.next,
      });
    }));

  // One kept file's content, by its place in this run's list (never by a
  // name a script chose): plain text or bytes that cannot run as a page.
  app.get(
    "/runs/:id/files/:index",
    (c) =>
      fromStore(c, async (scope) => {
        const id = c.req.param("id");
        const index = c.req.param("index");
        // That file alone: a run keeps up to 4 MiB of files
        // (store.script_files_max_bytes), all read for one of them before.
        const file = /^(0|[1-9][0-9]{0,8})$/.test(index)
          ? await recorder.store?.file(id, Number(index), scope)
          : null;
        const res = fileResponse(file ?? null);
        return res ??
          c.json({ error: `No kept file there in run "${id}"` }, 404);
      }),
  );

  app.get("/stats", (c) =>
    fromStore(c, async (scope) => {
      const window = Number(c.req.query("window") ?? STATS_WINDOW_S);
      const seconds = Number.isFinite(window) && window > 0
        ? window
        : STATS_WINDOW_S;
      const store = recorder.store;
      // The window by a shared store's clock, not this host's: a host whose
      // clock ran 2 hours ahead showed none of the fleet's last hour.
      const now = (await store?.now?.()) ?? Date.now();
      const timings = (await store?.timings(
        now - seconds * 1000,
        scope,
      )) ?? [];
      return c.json({ window_seconds: seconds, stats: statsView(timings) });
    }));

  app.get("/catalog", async (c) => {
    const query = (c.req.query("q") ?? "").slice(0, 200);
    return c.json(await sources.catalog(query, scopeOf(c)));
  });

  app.get("/overview", async (c) => {
    const scope = scopeOf(c);
    const here = recorder.running.filter((r) => mayView(scope, r.owner));
    const fleet = await lines.run(
      viewerOf(scope),
      () => fleetView(recorder, scope, here.length),
    );
    if (fleet === null) return tooManyReads(c);
    return c.json({
      running: [...here, ...fleet.running].map((r) => liveView(recorder, r)),
      hosts: fleet.hosts,
      ...(fleet.error ? { fleet_error: fleet.error } : {}),
      sessions: sources.sessions(scope),
      // A process's principal names the session or module it runs for.
      processes: scope === "all" ? sources.processes() : [],
      stored: recorder.store !== null,
      scope: scope === "all" ? "all" : "own",
    });
  });

  const feeds: LiveFeeds = new Map();
  app.get("/live", (c) => liveStream(c, sources, scopeOf(c), { feeds, lines }));
  return app;
}

/** A host of the fleet, as the overview shows it. */
interface HostView {
  /** Its `host.id`. */
  id: string;
  /** Whether it is the host answering. */
  self: boolean;
  /** Whether its heartbeat is recent (see `BEAT_LOST_MS`). */
  alive: boolean;
  /** Milliseconds since its last heartbeat, or null when it never beat. */
  last_seen_ms: number | null;
  /** Its runs in progress (in the viewer's scope). */
  running: number;
}

// The overview's fleet: the other hosts' running runs and every host's
// heartbeat. A host left with running runs is listed even when its
// heartbeat is gone, so its runs name a host the viewer can see is dead.
// A token that is no admin sees only the hosts its own runs are on.
async function fleetView(
  recorder: RunRecorder,
  scope: RunScope,
  runningHere: number,
): Promise<{ running: LiveRun[]; hosts: HostView[]; error?: string }> {
  const self: HostView = {
    id: recorder.host,
    self: true,
    alive: true,
    last_seen_ms: 0,
    running: runningHere,
  };
  const store = recorder.store;
  if (!store?.hosts) return { running: [], hosts: [self] };
  try {
    const [beats, running] = await Promise.all([
      store.hosts(),
      fleetRunning(recorder, scope),
    ]);
    const ages = new Map(beats.map((b) => [b.host, b.ageMs]));
    const runs = Map.groupBy(running, (r) => r.host ?? "");
    const others = new Set([...ages.keys(), ...runs.keys()]);
    others.delete(self.id);
    const shown = [...others].filter((id) => scope === "all" || runs.has(id));
    return {
      running,
      hosts: [
        self,
        ...shown.sort(compareCodeUnits).map((id): HostView => {
          const age = ages.get(id);
          return {
            id,
            self: false,
            alive: age !== undefined && age < BEAT_LOST_MS,
            last_seen_ms: age ?? null,
            running: runs.get(id)?.length ?? 0,
          };
        }),
      ],
    };
  } catch (error) {
    return {
      running: [],
      hosts: [self],
      error: storeFailure(scope, error),
    };
  }
}

function tooManyReads(c: Context): Response {
  c.header("Retry-After", "1");
  return c.json({
    error:
      `Too many reads at once for this token: ${MAX_WAITING_READS} are waiting; retry after 1 s`,
  }, 429);
}

// Whose line a request's reads wait in (and whose feeds it counts with).
function viewerOf(scope: RunScope): string {
  return scope === "all" ? "all" : scope.owner;
}

/** Each viewer's store reads: at most {@link READS_PER_VIEWER} at once. */
class ReadLines {
  #lines = new Map<string, Semaphore>();

  /**
   * Runs `read` in `viewer`'s turn.
   *
   * @returns what it returned, or null when the viewer's line is full
   */
  async run<T>(viewer: string, read: () => Promise<T>): Promise<T | null> {
    let line = this.#lines.get(viewer);
    if (!line) this.#lines.set(viewer, line = new Semaphore(READS_PER_VIEWER));
    if (line.waiting >= MAX_WAITING_READS) return null;
    try {
      return await line.run(read);
    } finally {
      if (line.active === 0) this.#lines.delete(viewer);
    }
  }
}

// Why the store cannot be read. The driver's words name the database's
// address and user (`connect ECONNREFUSED 10.0.0.5:5432`, `password
// authentication failed for user ...`): the operator's to see, not every
// client's.
function storeFailure(scope: RunScope, error: unknown): string {
  return scope === "all"
    ? `Cannot read the run store: ${(error as Error).message}`
    : "Cannot read the run store: it is unavailable (the operator's console says why)";
}

// A page of runs as asked by the query, or null when it is not numbers.
async function runsPage(
  store: RunStore,
  q: Record<string, string>,
  scope: RunScope,
): Promise<Record<string, unknown> | null> {
  const limit = q.limit ? Number(q.limit) : 50;
  const before = q.before ? Number(q.before) : undefined;
  if (
    !Number.isFinite(limit) ||
    (before !== undefined && !Number.isFinite(before))
  ) return null;
  const page = await store.list({
    limit,
    before,
    name: q.name || undefined,
    kind: q.kind || undefined,
    outcome: q.outcome || undefined,
    session: q.session || undefined,
    owner: scope === "all" ? undefined : scope.owner,
  });
  return {
    runs: page.runs.map((r) => ({ ...runView(r), cursor: r.cursor })),
    next: page.next,
    stored: true,
  };
}

// Per tool and skill: calls, errors, p50/p95 and the recent durations,
// busiest first.
function statsView(timings: readonly RunTiming[]): Record<string, unknown>[] {
  const groups = Map.groupBy(timings, (t) => `${t.kind}\u0000${t.name}`);
  return [...groups.values()].map((group) => {
    const durations = group.map((t) => t.durationMs);
    const errors = group.filter((t) => t.outcome !== "ok").length;
    const sorted = durations.toSorted((a, b) => a - b);
    return {
      kind: group[0]!.kind,
      name: group[0]!.name,
      calls: durations.length,
      errors,
      error_rate: errors / durations.length,
      p50_ms: percentile(sorted, 0.5),
      p95_ms: percentile(sorted, 0.95),
      recent_ms: durations.slice(-40),
    };
  }).sort((a, b) => b.calls - a.calls || compareCodeUnits(a.name, b.name));
}

/**
 * A run as the API shows it (snake_case, arguments and result parsed back).
 *
 * @param run the stored run
 * @returns the JSON view
 */
function runView(run: RunRecord): Record<string, unknown> {
  return {
    ...childView(run),
    error: run.error,
    summary: run.summary,
    arguments: parse(run.args),
    result: run.result === null ? null : parse(run.result),
  };
}

// A child run as a run's detail lists it: what the console's list shows,
// not its arguments, result or texts (open the child for those). Field by
// field, not the store's row less some: what the API shows is a contract,
// and a column added to the store must not appear here unasked.
function childView(run: RunSummary): Record<string, unknown> {
  return {
    id: run.id,
    parent_id: run.parentId,
    kind: run.kind,
    name: run.name,
    toolkit: run.toolkit,
    session: run.session,
    transport: run.transport,
    token_label: run.tokenLabel,
    host: run.host ?? "",
    started_at: run.startedAt,
    ended_at: run.outcome === "running" ? null : run.endedAt,
    duration_ms: run.outcome === "running" ? null : run.durationMs,
    outcome: run.outcome,
    event_count: run.eventCount,
    llm_turns: run.llmTurns,
    input_tokens: run.inputTokens,
    output_tokens: run.outputTokens,
  };
}

/**
 * A running run as the API shows it, its texts redacted.
 *
 * @param recorder the recorder (for its redactor)
 * @param run the live run
 * @returns the JSON view
 */
function liveView(
  recorder: RunRecorder,
  run: LiveRun,
): Record<string, unknown> {
  return {
    id: run.id,
    parent_id: run.parentId,
    kind: run.kind,
    name: run.name,
    session: run.session,
    transport: run.transport,
    host: run.host ?? "",
    started_at: run.startedAt,
    progress: run.progress,
    status: recorder.redactor.text(run.status),
    tokens: recorder.redactor.text(run.tokens),
    event_count: run.eventCount,
  };
}

function eventView(event: StoredEvent): Record<string, unknown> {
  return {
    seq: event.seq,
    kind: event.kind,
    at: event.at,
    data: parse(event.data),
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)]! * 100) / 100;
}

// The live stream (`/api/live`).

const MAX_QUEUE = 2000;
// And bytes of events and finished runs held for a viewer that does not
// read: a module's events may be 1 MiB each (the sandbox's cap), and
// 2,000 of them were 2 GiB; 2,000 finished runs, 16 KiB of arguments
// and of result each, were 150 MB.
const MAX_QUEUE_BYTES = 8 << 20;
const HEARTBEAT_MS = 15_000;
// Feeds one viewer (a token, or every admin together) holds open. Each is
// a listener every call of every client runs through; beyond this its
// oldest is ended, so a reloaded page is never locked out and one token
// cannot end another's.
const MAX_FEEDS_PER_VIEWER = 8;

/** The open feeds, by viewer (`all` or the token's owner), oldest first. */
type LiveFeeds = Map<string, Set<{ abort(): void }>>;

/**
 * Streams the recorder's changes to one viewer. (Its `Cache-Control:
 * no-store` is the API middleware's, set over streamSSE's `no-cache`.)
 *
 * @param c the request context
 * @param sources the recorder and the drop counter
 * @param scope whose runs the viewer may see; others' are never queued
 * @param open the open feeds (this one's viewer's oldest ended past the
 *   cap) and the viewers' store reads (the hello's runs wait their turn)
 * @returns the SSE response
 */
function liveStream(
  c: Context,
  sources: ConsoleSources,
  scope: RunScope,
  { feeds, lines }: { feeds: LiveFeeds; lines: ReadLines },
): Response {
  const { recorder, eventsDropped: dropped } = sources;
  const viewer = viewerOf(scope);
  return streamSSE(c, async (stream) => {
    const mine = feeds.getOrInsertComputed(viewer, () => new Set());
    for (const oldest of mine) {
      if (mine.size < MAX_FEEDS_PER_VIEWER) break;
      mine.delete(oldest);
      // Ends it even while a write waits on a client that does not read.
      oldest.abort();
    }
    mine.add(stream);
    const queue: LiveChange[] = [];
    // The loop's one wait: for a change, its viewer leaving, or a ping.
    const wakes = new WaitQueue();
    let lost = 0;
    let queuedBytes = 0;
    const unsubscribe = recorder.subscribe((change) => {
      const owner = change.type === "event" ? change.owner : change.run.owner;
      if (!mayView(scope, owner)) return;
      if (queue.length >= MAX_QUEUE || queuedBytes >= MAX_QUEUE_BYTES) {
        lost++;
        return;
      }
      if (change.type !== "started") queuedBytes += change.size;
      queue.push(change);
      wakes.wake();
    });
    stream.onAbort(() => wakes.wake());
    try {
      const running = [
        ...recorder.running.filter((r) => mayView(scope, r.owner)),
        // None of the other hosts' runs when the store is out of reach:
        // the viewer still gets this host's and every change from now on.
        ...(await lines.run(viewer, () => fleetRunning(recorder, scope))
          .catch(() => null) ?? []),
      ];
      await stream.writeSSE({
        event: "hello",
        data: JSON.stringify({
          running: running.map((r) => liveView(recorder, r)),
        }),
      });
      while (!stream.aborted) {
        if (queue.length === 0) {
          // Its deadline passing rejects: nothing came, time for a ping.
          await wakes.wait({ deadline: performance.now() + HEARTBEAT_MS })
            .catch(() => {});
          if (queue.length === 0 && !stream.aborted) {
            await stream.writeSSE({ event: "ping", data: "{}" });
          }
          continue;
        }
        if (lost > 0) {
          dropped?.(lost);
          await stream.writeSSE({ event: "lost", data: String(lost) });
          lost = 0;
        }
        const change = queue.shift()!;
        if (change.type !== "started") queuedBytes -= change.size;
        await stream.writeSSE({
          event: change.type,
          data: encode(recorder, change),
        });
      }
    } finally {
      unsubscribe();
      mine.delete(stream);
      if (mine.size === 0 && feeds.get(viewer) === mine) feeds.delete(viewer);
    }
  });
}

/**
 * In a fleet (a store other hosts write), the runs the other hosts have
 * written `running` and not finished (in `scope`), oldest first; a dead
 * host's stay until it restarts and marks them `interrupted`.
 *
 * @param recorder this host's recorder (its store and host id)
 * @param scope whose runs
 * @returns the runs (none without a shared store)
 * @throws {Error} when the store cannot be read
 * @example Without a shared store there is no fleet
 * ```ts
 * import { fleetRunning } from "./api.ts";
 * import { openRecorder } from "../store/recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = openRecorder({ path: ":memory:", maxRuns: 10, maxAgeDays: 1 });
 * assert.deepEqual(await fleetRunning(recorder, "all"), []);
 * await recorder.close();
 * ```
 */
export async function fleetRunning(
  recorder: RunRecorder,
  scope: RunScope,
): Promise<LiveRun[]> {
  const store = recorder.store;
  if (!store?.follow) return [];
  const page = await store.list({
    outcome: "running",
    owner: scope === "all" ? undefined : scope.owner,
    limit: 500,
  });
  return page.runs.filter((r) => r.host !== recorder.host).map(liveOf)
    .reverse();
}

function encode(recorder: RunRecorder, change: LiveChange): string {
  switch (change.type) {
    case "started":
      return JSON.stringify(liveView(recorder, change.run));
    case "finished":
      return JSON.stringify(runView(change.run));
    case "event": {
      const { seq, kind } = change.event;
      const data = recorder.redactor.json(change.event.data, {
        maxChars: 4096,
      });
      return `{"run_id":${JSON.stringify(change.runId)},"seq":${seq},"kind":${
        JSON.stringify(kind)
      },"data":${data}}`;
    }
  }
}

// A run's kept files.

/** One kept file in a run's detail. */
export interface RunFileView {
  /** Its place in the run's list: the `<n>` of its content's URL. */
  index: number;
  /** Its path, `<script call>/<path in the workspace>`, as the script named it. */
  name: string;
  /** Its size in bytes when the run ended. */
  size: number;
  /** Whether its content was kept (false: over a cap, or it held a secret). */
  kept: boolean;
  /** Bytes of content kept (0 when not kept). */
  kept_bytes: number;
  /** Whether the content is not UTF-8 text (or holds a NUL byte). */
  binary: boolean;
  /** Why it was not kept, or the count of files not listed, or null. */
  note: string | null;
  /** Where its content is served (relative to `/api/runs/<id>/`), or null. */
  content: string | null;
}

/**
 * The view of a run's kept files.
 *
 * @param files the files as a run's detail lists them
 * @returns their views, in order
 * @example A text file kept, a binary one, one over the cap
 * ```ts
 * import { runFileViews } from "./api.ts";
 * import assert from "node:assert/strict";
 * const views = runFileViews([
 *   { name: "1/a.txt", size: 2, kept: true, keptBytes: 2, binary: false, note: null },
 *   { name: "1/b.bin", size: 2, kept: true, keptBytes: 2, binary: true, note: null },
 *   { name: "1/big", size: 9e6, kept: false, keptBytes: 0, binary: false, note: "not kept: over the cap" },
 * ]);
 * assert.deepEqual(views.map((v) => [v.kept, v.binary, v.content]), [
 *   [true, false, "files/0"], [true, true, "files/1"], [false, false, null],
 * ]);
 * ```
 */
export function runFileViews(files: readonly RunFileEntry[]): RunFileView[] {
  return files.map((file, index) => ({
    index,
    name: file.name,
    size: file.size,
    kept: file.kept,
    kept_bytes: file.keptBytes,
    binary: file.binary,
    note: file.note,
    content: file.kept ? `files/${index}` : null,
  }));
}

/**
 * The response serving one kept file's content, or null when there is no
 * such file or none of it was kept.
 *
 * @param file the file as stored ({@link RunStore.file}), or null
 * @returns the response, or null
 * @example A script's `<script>` is served as plain text, never as a page
 * ```ts
 * import { fileResponse } from "./api.ts";
 * import assert from "node:assert/strict";
 * const data = new TextEncoder().encode("<script>alert(1)</script>");
 * const res = fileResponse({ name: "1/x.html", size: data.length, data, note: null })!;
 * assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
 * assert.match(res.headers.get("content-security-policy")!, /sandbox/);
 * assert.match(res.headers.get("content-disposition")!, /^attachment;/);
 * assert.equal(await res.text(), "<script>alert(1)</script>");
 * assert.equal(fileResponse(null), null);
 * // The header's name is the last part, reduced; the exact one is encoded.
 * const named = (name: string) =>
 *   fileResponse({ name, size: 1, data: new Uint8Array([0x61]), note: null })!
 *     .headers.get("content-disposition");
 * assert.equal(named('1/../../a "b".txt'),
 *   `attachment; filename="a__b_.txt"; filename*=UTF-8''a%20%22b%22.txt`);
 * assert.equal(named("1/.."), `attachment; filename="file"; filename*=UTF-8''..`);
 * ```
 */
export function fileResponse(file: StoredFile | null): Response | null {
  if (!file || file.data === null) return null;
  const data = file.data;
  return new Response(data.slice().buffer, {
    headers: {
      "Content-Type": isBinary(data)
        ? "application/octet-stream"
        : "text/plain; charset=utf-8",
      "Content-Length": String(data.length),
      "Content-Disposition": contentDisposition(file.name),
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "X-Content-Type-Options": "nosniff",
      "Cross-Origin-Resource-Policy": "same-origin",
      "X-Frame-Options": "DENY",
      "Cache-Control": "no-store",
    },
  });
}

// `attachment` with a safe file name: the last part of `name`, reduced to
// `[A-Za-z0-9._-]` (no quote, no separator, no control character can reach
// the header), and the exact name percent-encoded in `filename*`.
function contentDisposition(name: string): string {
  const base = name.split("/").pop() ?? "";
  let ascii = base.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
  if (/^[._]*$/.test(ascii)) ascii = "file";
  // Well-formed: a cut through an emoji's surrogate pair made
  // encodeURIComponent throw, and the download answered 503.
  const exact = encodeURIComponent(base.slice(0, 200).toWellFormed()).replace(
    /['()*]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
