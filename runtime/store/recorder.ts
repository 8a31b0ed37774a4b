/**
 * Recording runs: the {@link RunObserver} interface through which the tool
 * caller and the skill runner report every tool call and skill run (over
 * any transport or the embedding API), {@link observeToolCaller} that wraps
 * a tool caller so each call is reported, and the {@link RunRecorder} that
 * keeps what is running in memory (for the console's live view), counts it
 * (metrics), and writes finished runs to a {@link RunStore} in batches, off
 * the call's hot path. Observer calls are synchronous and cheap: they only
 * queue work. A store that cannot be opened or written is reported once and
 * the host keeps serving.
 *
 * @module
 */

import { resolve } from "node:path";
import type { SessionScope } from "../capability.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import { newId } from "../../protocol/envelope.ts";
import { toWireError } from "../../protocol/errors.ts";
import { jsonLength } from "../../protocol/json.ts";
import type { Registry } from "../registry/registry.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { SessionToolCall, ToolCaller } from "../tools/call.ts";
import type { StoreConfig } from "./config.ts";
import { lazyPostgresStore } from "./postgres.ts";
import { Redactor } from "./redact.ts";
import { keepRunFiles, type KeptFiles } from "./run_files.ts";
import { openSqliteStore } from "./sqlite.ts";
import type {
  Retention,
  RunRecord,
  RunStore,
  RunWrite,
  StoredEvent,
  StoredFile,
} from "./store.ts";

/** What is known when a run starts. */
export interface RunStart {
  /** A tool call or a skill run. */
  kind: "tool" | "skill";
  /** The tool's or skill's name, as asked for. */
  name: string;
  /** The session it runs for. */
  session: SessionScope;
  /** The arguments as given (the observer redacts and caps them). */
  args: unknown;
  /** The run this one is part of (a skill's tool call), or null. */
  parentId?: string | null;
  /**
   * Values to scrub from everything kept about this run until its end
   * names its own (a toolkit's secrets). @default []
   */
  secrets?: readonly string[];
}

/** How a run ended. */
export interface RunEnd {
  /** `"ok"` or the A2E error code. */
  outcome: string;
  /** The error message, or null. */
  error?: string | null;
  /** The result's data (the observer redacts and caps it). */
  result?: unknown;
  /** The result's summary, or null. */
  summary?: unknown;
  /** The tool's toolkit, when known. */
  toolkit?: string | null;
  /** Values to scrub from everything kept about this run (toolkit secrets). */
  secrets?: readonly string[];
}

/**
 * Receives runs as they start, emit events and finish. Implementations must
 * not throw and must not block: the call path does not await them.
 */
export interface RunObserver {
  /**
   * A run started.
   *
   * @returns the run's id, passed back to {@link event} and {@link finished}
   */
  started(start: RunStart): string;
  /** The run emitted an event (already numbered). */
  event(runId: string, event: CallEvent): void;
  /** The run ended; called exactly once per {@link started}. */
  finished(runId: string, end: RunEnd): void;
  /**
   * Where a run's files go (a skill script's workspace), when runs are
   * kept with their files; absent or null: files are not kept.
   */
  readonly files?: RunFiles | null;
}

/** What of a script's files was kept. */
export interface FilesKept {
  /** Files kept with their content. */
  files: number;
  /** Bytes of content kept. */
  bytes: number;
  /** True when some file was not kept (over a cap, a secret) or not listed. */
  truncated: boolean;
}

/** Keeps files with a run's record, within caps per run. */
export interface RunFiles {
  /**
   * Attaches files to a run still in progress (past the caps they are
   * listed without content, or counted); `unlisted` more were left out.
   *
   * @returns what was kept
   */
  attach(
    runId: string,
    files: readonly StoredFile[],
    unlisted?: number,
  ): FilesKept;
}

/** What {@link observeToolCaller} needs to find a call's toolkit secrets. */
export interface ObserveToolsOptions {
  /** The registry the caller reads. */
  registry: Pick<Registry, "snapshot">;
  /** The toolkit configurations the caller resolves. */
  configs: Pick<ToolkitConfigs, "resolve">;
}

/**
 * Wraps a tool caller so that each call is reported as a run: started,
 * each event, finished with its result or the error it threw. The one place
 * tool calls are observed, whether a client, the embedding API or a skill
 * (as a child run) made them.
 *
 * @param caller the caller to wrap
 * @param observer receives the runs
 * @param options registry and configurations, for the toolkit's secrets
 * @returns a caller with the same behaviour
 * @example Observe one call
 * ```ts
 * import { observeToolCaller } from "./recorder.ts";
 * import { SkillboxError } from "../../protocol/errors.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * const caller = observeToolCaller({
 *   call: () => Promise.reject(new SkillboxError("unknown_tool", "Unknown tool")),
 * }, {
 *   started: (s) => (seen.push(`start ${s.name}`), "r1"),
 *   event: () => {},
 *   finished: (id, end) => seen.push(`end ${id} ${end.outcome}`),
 * }, { registry: { snapshot: { tools: new Map(), toolkits: new Map() } } as never, configs: createToolkitConfigs() });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * await assert.rejects(caller.call({ name: "nope", args: {}, session }));
 * assert.deepEqual(seen, ["start nope", "end r1 unknown_tool"]);
 * ```
 */
export function observeToolCaller(
  caller: ToolCaller,
  observer: RunObserver,
  options: ObserveToolsOptions,
): ToolCaller {
  // A toolkit's secrets for a session. Known before the call too: the row
  // written while it runs, and the one of a call that throws, keep its
  // arguments scrubbed as a finished call's are.
  const secretsOf = (session: SessionScope, toolkit: string | null) => {
    const kit = toolkit === null
      ? undefined
      : options.registry.snapshot.toolkits.get(toolkit);
    return kit ? options.configs.resolve(session, kit).secrets : [];
  };
  return {
    call(request) {
      const tool = options.registry.snapshot.tools.get(request.name);
      const id = observer.started({
        kind: "tool",
        name: request.name,
        session: request.session,
        args: request.args,
        parentId: request.parentRunId ?? null,
        secrets: secretsOf(request.session, tool?.toolkit ?? null),
      });
      const onEvent = request.onEvent;
      const observed: SessionToolCall = {
        ...request,
        runId: id,
        onEvent: (event: CallEvent) => {
          observer.event(id, event);
          onEvent?.(event);
        },
      };
      return caller.call(observed).then((outcome) => {
        const { result, entry } = outcome;
        observer.finished(id, {
          outcome: result.success ? "ok" : result.errorCode ?? "tool_error",
          error: result.error ?? null,
          result: result.data,
          summary: typeof result.summary === "string" ? result.summary : null,
          toolkit: entry.toolkit,
          secrets: secretsOf(request.session, entry.toolkit),
        });
        return outcome;
      }, (error) => {
        // As its client is told it: a skillbox error's A2E code, else
        // `runtime_error` (a system error's `ENOENT` is no A2E code).
        const { code, message } = toWireError(error);
        observer.finished(id, { outcome: code, error: message });
        throw error;
      });
    },
  };
}

/**
 * Returns a fresh run id, time-ordered so that the run store's id index and
 * its events' (run_id, seq) key grow at their right edge instead of landing
 * on a random B-tree page per run (random uuid4 keys made a run's insert
 * twice as dear as the table grew to 40,000 runs): 12 hex digits of the
 * millisecond timestamp, then the last 20 hex digits of a fresh A2E id
 * ({@link newId}: 74 bits from the CSPRNG, the rest uuid4's fixed version
 * and variant bits), so an id cannot be guessed from another. 32 lowercase
 * hex characters, like the A2E ids.
 *
 * @param now the run's start in Unix milliseconds (the caller already read
 *   the clock)
 * @returns 32 lowercase hex characters, ordered by `now`
 * @example Two runs a millisecond apart sort in start order
 * ```ts
 * import { newRunId } from "./recorder.ts";
 * import assert from "node:assert/strict";
 * const a = newRunId(1_700_000_000_000);
 * const b = newRunId(1_700_000_000_001);
 * assert.match(a, /^[0-9a-f]{32}$/);
 * assert.ok(a < b);
 * ```
 */
export function newRunId(now: number): string {
  // Formatted once per millisecond: 12 hex digits hold milliseconds until
  // the year 10889.
  if (now !== lastNow) {
    lastNow = now;
    lastTime = Math.floor(now).toString(16).padStart(12, "0");
  }
  return lastTime + newId().slice(12);
}

let lastNow = -1;
let lastTime = "";

// Events kept per run in the store; later ones are counted, not kept.
const MAX_KEPT_EVENTS = 500;
// And bytes of them held while the run goes on: a module's events may be
// 1 MiB each (the sandbox's cap), 500 MiB a run; the store keeps 4 KiB of
// each anyway. As much as a call's result keeps (RESULT_EVENT_BYTES).
const MAX_KEPT_EVENT_BYTES = 8 << 20;
const FLUSH_MS = 100;
const RETRY_MS = 1000;
const PRUNE_MS = 10 * 60_000;
// Runs held for a store that cannot be written; beyond, the oldest of
// whoever holds the most are lost (counted).
const MAX_PENDING = 10_000;
// Bytes of redacted runs held for such a store: a run may carry 4 MiB of
// files and 500 events of 4 KiB, so 10,000 runs alone bound nothing.
const MAX_PENDING_BYTES = 64 << 20;
const MAX_BATCH = 500;
const TOKENS_TAIL = 4000;
// How often a host stamps itself alive in a store hosts share.
const BEAT_MS = 2000;
/**
 * A host whose stamp is older than this is shown as gone (three beats
 * missed: a busy host is late, not dead).
 */
export const BEAT_LOST_MS = 3 * BEAT_MS;

/** What the metrics want to hear about runs. */
export interface RunCounters {
  /** A run finished. */
  finished(kind: string, name: string, outcome: string, seconds: number): void;
  /** A skill started an LLM turn. */
  llmTurn(provider: string): void;
  /** A turn used tokens. */
  llmTokens(
    provider: string,
    direction: "input" | "output",
    count: number,
  ): void;
  /** Events were not kept or not delivered. */
  eventsDropped(count: number): void;
  /** The store failed once more. */
  storeError(): void;
}

/** A running run, as the console shows it. */
export interface LiveRun {
  id: string;
  parentId: string | null;
  kind: "tool" | "skill";
  name: string;
  session: string;
  transport: string;
  startedAt: number;
  /** The last `progress` percentage, or null. */
  progress: number | null;
  /** Which host runs it (`host.id`). @default "" */
  host?: string;
  /** The last `progress` or `status` message. */
  status: string;
  /** The tail of the LLM tokens streamed so far. */
  tokens: string;
  eventCount: number;
  /** Whose run it is (see `ownerOf` in `store.ts`), or null: the operator's. */
  owner: string | null;
}

/** A change the live view hears about. */
export type LiveChange =
  | { type: "started"; run: LiveRun }
  | {
    type: "event";
    runId: string;
    owner: string | null;
    event: CallEvent;
    /** About the bytes of its data (its top level's strings counted). */
    size: number;
  }
  | {
    type: "finished";
    run: RunRecord;
    /** About its bytes (its texts counted). */
    size: number;
  };

/**
 * A stored run (another host's, still `running`) as the live view shows it.
 *
 * @param r the run as stored
 * @returns its live shape (no progress or tokens: those stay on its host)
 * @example Another host's running run, for the live view
 * ```ts
 * import { liveOf } from "./recorder.ts";
 * import assert from "node:assert/strict";
 * const live = liveOf({
 *   id: "r1", parentId: null, kind: "tool", name: "nap", toolkit: null, session: "s",
 *   transport: "sse", tokenLabel: null, host: "h2", startedAt: 1, endedAt: 1, durationMs: 0,
 *   outcome: "running", error: null, summary: null, args: "{}", result: null, eventCount: 0,
 *   llmTurns: 0, inputTokens: 0, outputTokens: 0,
 * });
 * assert.equal(live.host, "h2");
 * assert.equal(live.progress, null);
 * ```
 */
export function liveOf(r: RunRecord): LiveRun {
  return {
    id: r.id,
    parentId: r.parentId,
    kind: r.kind,
    name: r.name,
    session: r.session,
    transport: r.transport,
    host: r.host ?? "",
    startedAt: r.startedAt,
    progress: null,
    status: "",
    tokens: "",
    eventCount: r.eventCount,
    owner: r.owner ?? null,
  };
}

/** Options of {@link RunRecorder}. */
export interface RunRecorderOptions {
  /** Where finished runs go, or null to keep none. */
  store: RunStore | null;
  /** Retention, applied in the background. @default no pruning */
  retention?: Retention;
  /** Redacts arguments, results, errors and events. @default no operator secrets */
  redactor?: Redactor;
  /**
   * Transport, token label and owner (`ownerOf` in `store.ts`; absent:
   * none) of a session. Asked once per session: the recorder keeps the
   * answer for the session's later runs.
   * @default in-process, no token, no owner
   */
  describeSession?: (session: SessionScope) => SessionDescription;
  /** Counts runs for the metrics. @default none */
  counters?: RunCounters;
  /** Receives the one-time report of a failing store. @default ignore */
  log?: (line: string) => void;
  /** Caps of the files kept per run (0: none). @default 4 MiB, 100 files */
  files?: { maxBytes: number; maxFiles: number };
  /**
   * Runs held while the store cannot take them; beyond, the oldest runs of
   * the owner holding the most are lost, counted in `storeError`: each
   * owner keeps its fair share, as the store's retention does (see
   * `overShares` in `store.ts`). @default 10000
   */
  maxPending?: number;
  /**
   * Bytes of redacted runs (text, events, files) held while the store
   * cannot take them; beyond, the oldest runs of the owner holding the
   * most bytes are lost, counted as with `maxPending`. @default 64 MiB
   */
  maxPendingBytes?: number;
  /**
   * This host's name in the store (`host.id`): its runs carry it, and its
   * runs left `running` by an earlier life are marked `interrupted`.
   * @default ""
   */
  host?: string;
}

/** Who a session is, as its runs record it (see `describeSession`). */
export interface SessionDescription {
  /** The session's transport (`websocket`, `sse`, `stdio`, ...). */
  transport: string;
  /** Which configured token it used (a label), or null. */
  tokenLabel: string | null;
  /** Whose its runs are (`ownerOf` in `store.ts`), or null. @default null */
  owner?: string | null;
}

const IN_PROCESS: SessionDescription = Object.freeze({
  transport: "in-process",
  tokenLabel: null,
});

interface Open {
  live: LiveRun;
  tokenLabel: string | null;
  args: unknown;
  // Its toolkit's secrets as known at its start (see #secrets).
  secrets: readonly string[];
  t0: number;
  events: { event: CallEvent; at: number }[];
  /** About the bytes of `events`; -1 once past the bound (none more kept). */
  eventBytes: number;
  turns: number;
  provider: string;
  input: number;
  output: number;
  /** Written as `running` already. */
  stored: boolean;
  /** How it ended, once it did; until then null. */
  end: RunEnd | null;
  /** When it ended (its start until then). */
  endedAt: number;
  /** How long it ran (0 until it ended). */
  durationMs: number;
  /** The files it left, once it left any (see RunRecorder.files). */
  files?: KeptFiles;
}

// A redacted run held until the store takes it: the write itself, with
// the hold's bookkeeping (the store reads only the write's fields).
interface Held extends RunWrite {
  // About its bytes (see sizeOf).
  size: number;
  // Carried by the write in flight.
  sent: boolean;
  // Taken out of the hold by a bound while sent: that write decides
  // whether it was lost.
  dropped: boolean;
}

// One owner's held runs, oldest first from `head` (the slots before it
// are emptied, and cut off once they are most of the array).
interface HeldQueue {
  owner: string | null;
  runs: (Held | undefined)[];
  head: number;
  // The sum of their sizes.
  bytes: number;
}

/**
 * Records runs. Call {@link flush} to write pending runs at once (the console
 * does before it reads) and {@link close} when the host stops.
 *
 * @example Record a run in memory
 * ```ts
 * import { RunRecorder } from "./recorder.ts";
 * import { openSqliteStore } from "./sqlite.ts";
 * import assert from "node:assert/strict";
 * const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const id = recorder.started({ kind: "tool", name: "add", session, args: { a: 1 } });
 * recorder.finished(id, { outcome: "ok", result: 2 });
 * await recorder.flush();
 * assert.equal((await recorder.store?.get(id))?.run.result, "2");
 * await recorder.close();
 * ```
 */
export class RunRecorder implements RunObserver {
  /** The store, or null when runs are not kept (off or failed to open). */
  readonly store: RunStore | null;
  /** Where runs' files go, or null when the store keeps none. */
  readonly files: RunFiles | null;
  /** The redactor used for everything kept or shown. */
  readonly redactor: Redactor;
  /** This host's name on its runs (`host.id`). */
  readonly host: string;
  #open = new Map<string, Open>();
  // What describeSession said of each session, asked at its first run: a
  // warm call reads it here instead of calling out.
  #sessions = new WeakMap<SessionScope, SessionDescription>();
  #pending: Open[] = [];
  // Redacted runs the store has not taken yet (it failed or is busy), a
  // queue per owner: past a bound the one holding the most loses its
  // oldest, so one token's flood of calls during an outage costs only its
  // own runs (a run is added or dropped at a queue's ends, never searched
  // for). And how many runs and bytes they hold in all.
  #held = new Map<string | null, HeldQueue>();
  #heldRuns = 0;
  #heldBytes = 0;
  #writing: Promise<void> = Promise.resolve();
  // The write queued behind #writing and not yet begun, or null.
  #next: Promise<void> | null = null;
  #interrupted = false;
  #lost = 0;
  // Set by a failed write: the next writes are one run at a time (see
  // #probe), and how many such passes began.
  #probing = false;
  #probes = 0;
  #refused = 0;
  // Runs written since the retention last ran.
  #sincePrune = 0;
  #unfollow: (() => void) | null = null;
  #listeners = new Set<(change: LiveChange) => void>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #pruneTimer: ReturnType<typeof setInterval> | undefined;
  #beatTimer: ReturnType<typeof setInterval> | undefined;
  #beating: Promise<void> | null = null;
  // This host process, on its heartbeats; how many beats in a row found
  // another one's fresh stamp under the same host id.
  readonly #instance = crypto.randomUUID();
  #shared = 0;
  #options: RunRecorderOptions;
  #failed = false;
  #closed = false;

  /** @param options the store, retention, redaction and reporting */
  constructor(options: RunRecorderOptions) {
    this.store = options.store;
    this.#options = options;
    this.redactor = options.redactor ?? new Redactor();
    this.host = options.host ?? "";
    // A run's files are kept with it while it runs and until it is
    // written, as its events are: they go when it goes.
    const keep = this.store && keepRunFiles(options.files, this.redactor);
    this.files = keep && {
      attach: (runId, files, unlisted) => {
        const open = this.#open.get(runId);
        // Only a run in progress gets files.
        if (!open) return { files: 0, bytes: 0, truncated: true };
        open.files ??= keep(open.live.owner);
        return open.files.add(files, unlisted);
      },
    };
    // At once, not at the first run: the runs an earlier life of this host
    // left `running` are marked `interrupted`.
    if (this.store) {
      queueMicrotask(() => this.#closed ? undefined : void this.flush());
    }
    // In a fleet, a heartbeat off the call path tells the other hosts'
    // overviews this one is alive.
    if (this.store?.beat) {
      this.#beatTimer = setInterval(() => void this.#beat(), BEAT_MS);
      Deno.unrefTimer(this.#beatTimer);
    }
    if (this.store && options.retention) {
      const prune = () => void this.prune();
      this.#pruneTimer = setInterval(prune, PRUNE_MS);
      Deno.unrefTimer(this.#pruneTimer);
      queueMicrotask(prune);
    }
  }

  /** The runs in progress, oldest first. */
  get running(): LiveRun[] {
    return [...this.#open.values()].map((o) => ({ ...o.live }));
  }

  started(start: RunStart): string {
    const startedAt = Date.now();
    const id = newRunId(startedAt);
    const who = this.describe(start.session);
    const live: LiveRun = {
      id,
      parentId: start.parentId ?? null,
      kind: start.kind,
      name: this.redactor.name(start.name, { secrets: start.secrets }),
      session: start.session.id,
      transport: who.transport,
      host: this.host,
      startedAt,
      progress: null,
      status: "",
      tokens: "",
      eventCount: 0,
      owner: who.owner ?? null,
    };
    this.#open.set(id, {
      live,
      tokenLabel: who.tokenLabel,
      args: start.args,
      secrets: start.secrets ?? [],
      t0: performance.now(),
      events: [],
      eventBytes: 0,
      turns: 0,
      provider: "",
      input: 0,
      output: 0,
      stored: false,
      end: null,
      endedAt: startedAt,
      durationMs: 0,
    });
    // A copy: a change held for a viewer must not grow with the run.
    if (this.#listeners.size > 0) {
      this.#notify({ type: "started", run: { ...live } });
    }
    // A run still going at the next flush is written `running`: a host
    // that dies leaves a trace its next life marks `interrupted`.
    if (this.store) this.#schedule();
    return id;
  }

  /**
   * Who a session is, as its runs record it: `describeSession`'s answer,
   * asked at the session's first run (or here) and kept for the session's
   * life.
   *
   * @param session the session
   * @returns its transport, token label and owner
   */
  describe(session: SessionScope): SessionDescription {
    return this.#sessions.getOrInsertComputed(
      session,
      (s) => this.#options.describeSession?.(s) ?? IN_PROCESS,
    );
  }

  event(runId: string, event: CallEvent): void {
    const open = this.#open.get(runId);
    if (!open) return;
    open.live.eventCount++;
    if (open.events.length < MAX_KEPT_EVENTS && open.eventBytes >= 0) {
      open.eventBytes += roughSize(event.data);
      // Past the byte bound nothing more is kept, so the order stays whole.
      if (open.eventBytes <= MAX_KEPT_EVENT_BYTES) {
        open.events.push({ event, at: Date.now() });
      } else open.eventBytes = -1;
    }
    const data = event.data;
    // Only a skill's LLM relay makes `llm.*` events: a tool's module names
    // its events as it likes (its worker's globals are its own), and its
    // turns would count tokens no provider was paid for.
    const llm = event.kind.startsWith("llm.");
    switch (llm && open.live.kind !== "skill" ? "" : event.kind) {
      case "progress":
        if (typeof data.pct === "number") open.live.progress = data.pct;
        if (typeof data.message === "string") open.live.status = data.message;
        break;
      case "status":
        if (typeof data.message === "string") open.live.status = data.message;
        break;
      case "llm.token":
        if (typeof data.text === "string") {
          open.live.tokens = (open.live.tokens + data.text).slice(-TOKENS_TAIL);
        }
        break;
      case "llm.started":
        open.turns++;
        open.provider = String(data.provider ?? "");
        this.#options.counters?.llmTurn(open.provider);
        break;
      case "llm.completed": {
        const usage = (data.usage ?? {}) as Record<string, unknown>;
        const input = tokenCount(usage.input_tokens);
        const output = tokenCount(usage.output_tokens);
        open.input += input;
        open.output += output;
        this.#options.counters?.llmTokens(open.provider, "input", input);
        this.#options.counters?.llmTokens(open.provider, "output", output);
        break;
      }
    }
    if (this.#listeners.size > 0) {
      const { owner } = open.live;
      const size = roughSize(data);
      this.#notify({ type: "event", runId, owner, event, size });
    }
  }

  finished(runId: string, end: RunEnd): void {
    const open = this.#open.get(runId);
    if (!open) return;
    this.#open.delete(runId);
    open.end = end;
    open.endedAt = Date.now();
    open.durationMs = performance.now() - open.t0;
    this.#options.counters?.finished(
      open.live.kind,
      open.live.name,
      end.outcome,
      open.durationMs / 1000,
    );
    const dropped = open.live.eventCount - open.events.length;
    if (dropped > 0) this.#options.counters?.eventsDropped(dropped);
    if (this.#listeners.size > 0) {
      const run = this.#record(open);
      this.#notify({ type: "finished", run, size: sizeOf(run) });
    }
    if (!this.store || this.#closed) return;
    this.#pending.push(open);
    const bound = this.#options.maxPending ?? MAX_PENDING;
    // Past the bound (a store down for a while), what finished is redacted
    // now, so that the bound drops fairly by owner.
    if (this.#pending.length + this.#heldRuns > bound) this.#takeFinished();
    this.#schedule();
  }

  #schedule(delay = FLUSH_MS): void {
    if (this.#flushTimer !== undefined || this.#closed) return;
    this.#flushTimer = setTimeout(() => void this.flush(), delay);
    Deno.unrefTimer(this.#flushTimer);
  }

  // Counts runs lost: never silently.
  #lose(count: number): void {
    this.#lost += count;
    for (let i = 0; i < count; i++) this.#options.counters?.storeError();
  }

  // Holds a redacted write. Past a bound, the owner holding the most runs
  // (or bytes) loses its oldest, one at a time: an owner holding no more
  // than its max-min fair share is never the one holding the most while
  // the hold is over its bound, so it loses nothing (the share
  // `overShares` in store.ts gives the store's retention).
  #hold(run: RunRecord, events: StoredEvent[], files?: StoredFile[]): void {
    const held: Held = {
      run,
      events,
      files,
      size: sizeOf(run, events, files),
      sent: false,
      dropped: false,
    };
    const owner = run.owner ?? null;
    const queue = this.#held.getOrInsertComputed(
      owner,
      () => ({ owner, runs: [], head: 0, bytes: 0 }),
    );
    queue.runs.push(held);
    queue.bytes += held.size;
    this.#heldRuns++;
    this.#heldBytes += held.size;
    const maxRuns = this.#options.maxPending ?? MAX_PENDING;
    while (this.#heldRuns > maxRuns) this.#dropOldest(false);
    const maxBytes = this.#options.maxPendingBytes ?? MAX_PENDING_BYTES;
    while (this.#heldBytes > maxBytes) this.#dropOldest(true);
  }

  // Takes the oldest run of the owner holding the most runs (or bytes) out
  // of the hold: lost, or, when the write in flight carries it, lost only
  // if that write fails (it may be written already).
  #dropOldest(bytes: boolean): void {
    let most: HeldQueue | undefined;
    let max = -1;
    for (const queue of this.#held.values()) {
      const held = bytes ? queue.bytes : queue.runs.length - queue.head;
      if (held > max) most = queue, max = held;
    }
    const held = this.#shift(most!);
    if (held.sent) held.dropped = true;
    else this.#lose(1);
  }

  // Takes a queue's oldest run out of the hold.
  #shift(queue: HeldQueue): Held {
    const held = queue.runs[queue.head]!;
    // The slot is emptied: a lost run's text and files are not kept.
    queue.runs[queue.head++] = undefined;
    queue.bytes -= held.size;
    this.#heldRuns--;
    this.#heldBytes -= held.size;
    if (queue.head === queue.runs.length) this.#held.delete(queue.owner);
    else if (queue.head >= 1024 && 2 * queue.head >= queue.runs.length) {
      queue.runs.splice(0, queue.head);
      queue.head = 0;
    }
    return held;
  }

  // The oldest held runs, owner after owner (a run's `running` and
  // finished writes, and a skill's tool calls, are one owner's, in
  // order), marked sent.
  #batch(): Held[] {
    const batch: Held[] = [];
    for (const queue of this.#held.values()) {
      const end = Math.min(
        queue.runs.length,
        queue.head + MAX_BATCH - batch.length,
      );
      for (let i = queue.head; i < end; i++) {
        const held = queue.runs[i]!;
        held.sent = true;
        batch.push(held);
      }
      if (batch.length === MAX_BATCH) break;
    }
    return batch;
  }

  // Ends a write. Written: its runs leave the hold, and those a bound
  // dropped meanwhile were written after all, not lost. Failed: those are
  // lost, and the rest stay held for the next try. Either way no run is
  // written twice: the dropped ones are no longer held, the others are
  // still at their queues' fronts (a drop takes the oldest, sent first).
  #settle(batch: Held[], written: boolean): void {
    let lost = 0;
    for (const held of batch) {
      held.sent = false;
      if (held.dropped) lost += written ? 0 : 1;
      else if (written) this.#shift(this.#held.get(held.run.owner ?? null)!);
    }
    this.#lose(lost);
  }

  /**
   * Hears every change (started, event, finished) until unsubscribed.
   *
   * @param listener called synchronously; must only queue work
   * @returns unsubscribes
   */
  subscribe(listener: (change: LiveChange) => void): () => void {
    this.#listeners.add(listener);
    // Other hosts' runs are heard only while someone watches.
    if (this.#listeners.size === 1 && this.store?.follow && !this.#closed) {
      this.#unfollow = this.store.follow(this.host, (change) =>
        this.#notify(
          change.type === "finished"
            ? { type: "finished", run: change.run, size: sizeOf(change.run) }
            : { type: "started", run: liveOf(change.run) },
        ));
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#unfollow?.();
        this.#unfollow = null;
      }
    };
  }

  /** Runs lost (not written) because the store stayed unwritable. */
  get lost(): number {
    return this.#lost;
  }

  /**
   * Writes pending runs now (redacting them first), and the runs still
   * going as `running`. Resolves when the store took them or failed (then
   * they are held and retried; see `maxPending`).
   */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (!this.store) return Promise.resolve();
    this.#take();
    // A write not yet begun writes everything held when it begins: a
    // flush asked meanwhile (each console request asks one) waits for it
    // rather than queueing one more try of a store that hangs.
    if (this.#next) return this.#next;
    const next = this.#writing.then(() => {
      this.#next = null;
      return this.#write();
    });
    this.#next = next;
    this.#writing = next;
    return next;
  }

  // Redacts what finished (and what still runs) into writes, in order.
  #take(): void {
    this.#takeFinished();
    for (const open of this.#open.values()) {
      if (open.stored) continue;
      open.stored = true;
      this.#hold(this.#record(open), []);
    }
  }

  #takeFinished(): void {
    const batch = this.#pending;
    this.#pending = [];
    for (const open of batch) {
      try {
        // First: a run that fails to be taken gives its files' bytes back.
        const files = open.files?.take() ?? [];
        this.#hold(this.#record(open), this.#events(open), files);
      } catch (error) {
        this.#lost++; // counted by #storeFailed
        this.#storeFailed("write", error);
      }
    }
  }

  // Called by flush only, which has a store.
  async #write(): Promise<void> {
    const store = this.store!;
    try {
      if (!this.#interrupted) {
        await store.interrupt(this.host);
        this.#interrupted = true;
        // The first beat as soon as the store answers, not 2 s later.
        queueMicrotask(() => void this.#beat());
      }
      while (this.#heldRuns > 0) {
        if (this.#probing) {
          await this.#probe(store);
          continue;
        }
        const batch = this.#batch();
        try {
          await store.write(batch);
        } catch (error) {
          this.#settle(batch, false);
          this.#probing = true;
          throw error;
        }
        this.#settle(batch, true);
        this.#sincePrune += batch.length;
      }
      if (this.#failed) {
        this.#failed = false;
        this.#options.log?.(
          `The run store is written again${
            this.#lost > 0 ? `; ${this.#lost} runs were lost meanwhile` : ""
          }`,
        );
      }
      // Once max_runs runs were written since the retention last ran, it
      // runs now, not at its next 10-minute tick: a busy host's table
      // stays within twice max_runs (a deeper B-tree makes every write
      // dearer), and each prune is at most max_runs deletes instead of
      // ten minutes of runs in one statement on the event loop (seconds,
      // at thousands of calls a second).
      const retention = this.#options.retention;
      if (retention && this.#sincePrune >= retention.maxRuns) {
        await this.prune();
      }
    } catch (error) {
      this.#storeFailed("write", error);
      if (!this.#closed) this.#schedule(RETRY_MS);
    }
  }

  // After a failed write: each owner's oldest run alone, starting with
  // another owner each pass. A store may refuse one run for good (a value
  // it cannot take; a NUL in PostgreSQL's text once did) and with it every
  // batch: held for ever, its owner within its share, every other owner's
  // runs would be dropped instead. A run refused right after the store
  // took another is that run: lost, counted and said. A first refusal
  // ends the pass, as a store that is down refuses everything; the next
  // pass starts elsewhere. A pass that tried every owner ends the probing.
  async #probe(store: RunStore): Promise<void> {
    const owners = [...this.#held.keys()];
    const start = this.#probes++ % owners.length;
    let took = false;
    for (let i = 0; i < owners.length; i++) {
      const queue = this.#held.get(owners[(start + i) % owners.length]!);
      if (queue === undefined) continue; // its runs were written or lost
      const held = queue.runs[queue.head]!;
      held.sent = true;
      try {
        await store.write([held]);
      } catch (error) {
        const dropped = held.dropped;
        this.#settle([held], false);
        if (!took) throw error;
        if (!dropped) this.#refuse(queue, error);
        continue;
      }
      this.#settle([held], true);
      this.#sincePrune++;
      took = true;
    }
    this.#probing = false;
  }

  // Loses a queue's oldest run, which the store refused while it took
  // others.
  #refuse(queue: HeldQueue, error: unknown): void {
    this.#shift(queue);
    this.#lose(1);
    if (this.#refused++ > 0) return;
    this.#options.log?.(
      `The run store refused a run it cannot take, which was dropped: ${
        (error as Error)?.message ?? String(error)
      } (reported once)`,
    );
  }

  // Another host process stamped this host id within a beat of ours, twice
  // in a row: two live hosts were given one host.id (a predecessor that
  // died is seen at most once). Said once: each marks the runs the other
  // has running `interrupted` when it starts, and the fleet's list of
  // hosts shows them as one.
  #sameId(otherAgeMs: number | null | void): void {
    const fresh = typeof otherAgeMs === "number" &&
      otherAgeMs < BEAT_MS * 1.5;
    this.#shared = fresh ? this.#shared + 1 : 0;
    if (this.#shared !== 2) return;
    this.#options.log?.(
      `Another live host uses host.id "${this.host}" in the same run store: give each host of a fleet its own host.id (runs either one has running are marked interrupted when the other starts)`,
    );
  }

  // A beat goes in line with the writes (one store operation at a time
  // from the recorder, as ever); one still waiting is not doubled. While
  // writes are held for a failing store (or before the store first
  // answered) there is no beat: a host that cannot write is not shown
  // alive, and the database is not tried more often than the writes'
  // retries do. A failed beat is silent (the write path reports a
  // database that is down).
  #beat(): Promise<void> {
    if (
      this.#beating || this.#closed || !this.store?.beat ||
      !this.#interrupted || this.#heldRuns > 0
    ) {
      return this.#beating ?? Promise.resolve();
    }
    const store = this.store;
    const beat = this.#writing.then(async () => {
      try {
        this.#sameId(await store.beat!(this.host, false, this.#instance));
      } catch {
        // the next beat tries again
      } finally {
        this.#beating = null;
      }
    });
    this.#beating = beat;
    this.#writing = beat;
    return beat;
  }

  /** Applies the retention now. */
  async prune(): Promise<void> {
    const retention = this.#options.retention;
    if (!this.store || !retention || this.#closed) return;
    this.#sincePrune = 0;
    try {
      await this.store.prune(retention);
    } catch (error) {
      this.#storeFailed("prune", error);
    }
  }

  /**
   * Writes what is pending (one attempt), stops the timers and closes the
   * store. What the store could not take is counted lost.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    const flushed = this.flush();
    this.#closed = true;
    clearTimeout(this.#flushTimer);
    clearInterval(this.#pruneTimer);
    clearInterval(this.#beatTimer);
    this.#listeners.clear();
    this.#unfollow?.();
    // The flush took what was pending, and nothing finishes once closed.
    await flushed;
    this.#lose(this.#heldRuns);
    this.#held.clear();
    this.#heldRuns = this.#heldBytes = 0;
    try {
      // A host that stops cleanly leaves the fleet's list of hosts.
      await this.#beating;
      if (this.store?.beat) await this.store.beat(this.host, true);
    } catch {
      // its stamp ages instead
    }
    try {
      await this.store?.close();
    } catch {
      // nothing more to report: the host is closing
    }
  }

  #notify(change: LiveChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // a failing viewer must not fail the call
      }
    }
  }

  #storeFailed(what: string, error: unknown): void {
    this.#options.counters?.storeError();
    if (this.#failed) return;
    this.#failed = true;
    this.#options.log?.(
      `Cannot ${what} the run store: ${
        (error as Error)?.message ?? String(error)
      }; runs are not being recorded, calls keep working (reported once)`,
    );
  }

  // A finished run as kept, or (no `end` yet) one still going, written
  // `running`.
  #record(open: Open): RunRecord {
    const end = open.end;
    const secrets = this.#secrets(open);
    const r = this.redactor;
    const live = open.live;
    return {
      id: live.id,
      parentId: live.parentId,
      kind: live.kind,
      name: live.name,
      toolkit: end?.toolkit ?? null,
      session: live.session,
      transport: live.transport,
      tokenLabel: open.tokenLabel,
      host: this.host,
      startedAt: live.startedAt,
      endedAt: open.endedAt,
      durationMs: Math.round(open.durationMs * 1000) / 1000,
      outcome: end ? end.outcome.slice(0, 100) : "running",
      error: end?.error ? r.text(end.error, { secrets }) : null,
      summary: end?.summary === null || end?.summary === undefined
        ? null
        : r.text(
          typeof end.summary === "string"
            ? end.summary
            : JSON.stringify(end.summary),
          { secrets },
        ),
      args: r.json(open.args, { secrets }),
      result: end?.result === undefined
        ? null
        : r.json(end.result, { secrets }),
      eventCount: live.eventCount,
      llmTurns: open.turns,
      inputTokens: Math.min(open.input, Number.MAX_SAFE_INTEGER),
      outputTokens: Math.min(open.output, Number.MAX_SAFE_INTEGER),
      owner: live.owner,
    };
  }

  // The secrets scrubbed from a run: its end's, else (still running, or
  // ended by an error that names none) those known at its start.
  #secrets(open: Open): readonly string[] {
    const named = open.end?.secrets;
    return named !== undefined && named.length > 0 ? named : open.secrets;
  }

  #events(open: Open): StoredEvent[] {
    const secrets = this.#secrets(open);
    return open.events.map(({ event, at }) => ({
      seq: event.seq,
      kind: this.redactor.name(event.kind, { secrets, maxChars: 100 }),
      data: this.redactor.json(event.data, { secrets, maxChars: 4096 }),
      at,
    }));
  }
}

// A token count as the LLM endpoint answered it, made a whole number the
// stores' integer columns take (PostgreSQL's BIGINT refused `1.5` and
// `1e30`, and with them the whole batch): not a number or below 0 is 0.
function tokenCount(value: unknown): number {
  const n = Math.trunc(Number(value ?? 0));
  return n > 0 ? Math.min(n, Number.MAX_SAFE_INTEGER) : 0;
}

// About the bytes of an event's data, its top level's strings counted
// without serializing them (a log or token event is one string). An
// observer must not throw: a value JSON cannot hold counts as nothing (the
// redactor writes it as a string at the end).
function roughSize(data: Record<string, unknown>): number {
  let size = 64;
  for (const key in data) {
    const value = data[key];
    size += key.length +
      (typeof value === "string"
        ? value.length
        : typeof value === "object" && value !== null
        ? jsonLength(value)
        : 8);
  }
  return size;
}

// About the bytes a held write takes: its texts (UTF-16), events and files.
function sizeOf(
  run: RunRecord,
  events: readonly StoredEvent[] = [],
  files: readonly StoredFile[] = [],
): number {
  let size = 512 + 2 * (run.args.length + (run.result?.length ?? 0) +
        (run.error?.length ?? 0) + (run.summary?.length ?? 0));
  for (const event of events) size += 64 + 2 * event.data.length;
  for (const file of files) {
    size += 64 + 2 * file.name.length + (file.data?.length ?? 0);
  }
  return size;
}

/** Options of {@link openRecorder}: those of the recorder but its store's. */
export type OpenRecorderOptions = Pick<
  RunRecorderOptions,
  "redactor" | "describeSession" | "counters" | "log" | "host"
>;

/**
 * Opens the recorder for a `store` configuration: the PostgreSQL store at
 * `store.url` (a fleet's; connected on first use, so a host starts while
 * its database is down), else the SQLite store at `store.path` (relative to
 * the working folder), or none with `store: null` or when the file cannot
 * be opened (reported once; the host keeps serving).
 *
 * @param config the `store` section, or null to keep nothing
 * @param options redaction, session description, counters, log
 * @returns the recorder (its `store` is null when runs are not kept)
 * @example Keep nothing
 * ```ts
 * import { openRecorder } from "./recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = openRecorder(null);
 * assert.equal(recorder.store, null);
 * recorder.close();
 * ```
 */
export function openRecorder(
  config: StoreConfig | null,
  options: OpenRecorderOptions = {},
): RunRecorder {
  let store: RunStore | null = null;
  if (config?.url) {
    store = lazyPostgresStore(config.url);
  } else if (config !== null) {
    const path = config.path === ":memory:" ? ":memory:" : resolve(config.path);
    try {
      store = openSqliteStore(path);
    } catch (error) {
      options.counters?.storeError();
      options.log?.(
        `Cannot open the run store "${path}": ${
          (error as Error).message
        }; runs are not recorded, calls keep working (reported once)`,
      );
    }
  }
  return new RunRecorder({
    ...options,
    store,
    retention: config ?? undefined,
    files: config?.files,
  });
}
