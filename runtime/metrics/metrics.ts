/**
 * The host's Prometheus metrics through `prom-client`: calls, durations,
 * sessions, sandbox processes and memory, LLM turns and tokens, dropped
 * events and store errors, plus the process defaults. Label values are
 * bounded: names come from what is loaded (an unknown name is counted as
 * `(unknown)`, and past 1000 distinct names as `(other)`).
 *
 * The two metrics every call moves (calls by kind, name and outcome; wall
 * time by kind and name) are kept in plain numbers per label set by
 * {@link CallMetrics} and handed to prom-client only when scraped.
 * prom-client hashes a labels object on every `inc` and `observe`, labelled
 * children included (a child only binds the labels), which cost about
 * 1.5 µs and seven allocations a call; a known label set here is three Map
 * lookups and a few additions.
 *
 * A scrape's text is built at most once a second and shared: at the label
 * cap a build costs a quarter to half a second of the host's event loop and
 * 2.6 MB, and any token may scrape, so scrapes must not each pay for one
 * (Prometheus scrapes every 15 s or so; a text up to a second old answers it
 * as well).
 *
 * @module
 */

import client from "prom-client";
import type { RunCounters } from "../store/recorder.ts";

// How long a built scrape answers every scrape, from the end of its build.
const SCRAPE_REUSE_MS = 1000;
// Distinct tool/skill names given their own label value.
const MAX_NAMES = 1000;
const MAX_PROVIDERS = 32;
const OUTCOMES_UNKNOWN = new Set(["unknown_tool", "unknown_skill"]);

/** Live figures the metrics read when scraped. */
export interface MetricsSources {
  /** Live sessions by transport. */
  sessions?: () => Record<string, number>;
  /** Live sandbox processes and their summed resident memory. */
  sandbox?: () => { processes: number; rssBytes: number };
}

/** The registry and the counters the recorder feeds. */
export interface HostMetrics extends RunCounters {
  /**
   * The Prometheus text exposition: built at most once a second, and shared
   * by every scrape until then (scrapes made while it is being built wait
   * for that build).
   */
  text(): Promise<string>;
  /** The content type of {@link text}. */
  readonly contentType: string;
}

/**
 * Creates the host's metrics on a fresh registry.
 *
 * @param sources live figures read when a scrape is built
 * @returns the metrics
 * @example Count a call
 * ```ts
 * import { createMetrics } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * const metrics = createMetrics({ defaults: false });
 * metrics.finished("tool", "add", "ok", 0.01);
 * assert.match(await metrics.text(), /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} 1/);
 * ```
 * @example A scrape within a second of the last build gets that build
 * ```ts
 * import { createMetrics } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * let ms = 0;
 * const metrics = createMetrics({ defaults: false, now: () => ms });
 * const first = await metrics.text();
 * metrics.finished("tool", "add", "ok", 0.01);
 * ms = 999;
 * assert.equal(await metrics.text(), first);
 * ms = 1000;
 * assert.match(await metrics.text(), /name="add",outcome="ok"\} 1/);
 * ```
 */
// Long (about 130 lines): the metric declarations, one after another, and
// the few methods that move them; splitting would only scatter the list.
export function createMetrics(
  sources: MetricsSources & {
    /** Expose prom-client's process metrics too. @default true */
    defaults?: boolean;
    /**
     * The clock, in ms, that ages a built scrape (tests move it).
     * @default performance.now
     */
    now?: () => number;
  } = {},
): HostMetrics {
  const now = sources.now ?? (() => performance.now());
  const registry = new client.Registry();
  if (sources.defaults !== false) {
    client.collectDefaultMetrics({ register: registry });
  }
  // Created first, as the two metrics were: the exposition keeps its order.
  // Read once per scrape, for both sandbox gauges: each read runs `ps`,
  // about 10 ms that block the event loop.
  let sandbox: { processes: number; rssBytes: number } | undefined;
  const calls = new CallMetrics(registry);
  new client.Gauge({
    name: "skillbox_sessions",
    help: "Live sessions by transport",
    labelNames: ["transport"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [transport, n] of Object.entries(sources.sessions?.() ?? {})) {
        this.set({ transport }, n);
      }
    },
  });
  new client.Gauge({
    name: "skillbox_sandbox_processes",
    help: "Live sandbox processes",
    registers: [registry],
    collect() {
      this.set(sandbox?.processes ?? 0);
    },
  });
  new client.Gauge({
    name: "skillbox_sandbox_rss_bytes",
    help: "Resident memory of all sandbox processes",
    registers: [registry],
    collect() {
      this.set(sandbox?.rssBytes ?? 0);
    },
  });
  const tokens = new client.Counter({
    name: "skillbox_llm_tokens_total",
    help: "LLM tokens used by skills, by provider and direction",
    labelNames: ["provider", "direction"] as const,
    registers: [registry],
  });
  const turns = new client.Counter({
    name: "skillbox_llm_turns_total",
    help: "LLM turns taken by skills",
    registers: [registry],
  });
  const dropped = new client.Counter({
    name: "skillbox_events_dropped_total",
    help: "Run events not kept in the history or not delivered to a live view",
    registers: [registry],
  });
  const storeErrors = new client.Counter({
    name: "skillbox_store_errors_total",
    help: "Failures to open or write the run store",
    registers: [registry],
  });
  const nameLabel = boundedLabel(MAX_NAMES);
  const providerLabel = boundedLabel(MAX_PROVIDERS);

  // The last build and when it ended, and the build under way if any.
  let built: { text: string; at: number } | undefined;
  let building: Promise<string> | undefined;
  const build = async () => {
    sandbox = sources.sandbox?.();
    const text = await registry.metrics();
    // Aged from its end, so that builds are at least a second apart
    // however long one takes.
    built = { text, at: now() };
    return text;
  };

  return {
    contentType: registry.contentType,
    text: () => {
      if (building) return building;
      if (built && now() - built.at < SCRAPE_REUSE_MS) {
        return Promise.resolve(built.text);
      }
      // Cleared in a later turn, never before it is set (a source that
      // throws ends build() at once); a failed build is not kept.
      building = build().finally(() => building = undefined);
      return building;
    },
    finished(kind, name, outcome, seconds) {
      calls.record(
        kind,
        OUTCOMES_UNKNOWN.has(outcome) ? "(unknown)" : nameLabel(name),
        outcomeLabel(outcome),
        seconds,
      );
    },
    llmTurn() {
      turns.inc();
    },
    llmTokens(provider, direction, count) {
      if (count > 0) {
        tokens.inc({ provider: providerLabel(provider), direction }, count);
      }
    },
    eventsDropped(count) {
      dropped.inc(count);
    },
    storeError() {
      storeErrors.inc();
    },
  };
}

// A label value as given while fewer than `max` distinct ones were seen,
// else "(other)": a series is kept per value.
function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return "(other)";
    seen.add(value);
    return value;
  };
}

// Error codes are a closed set; anything else a sandbox made up is "other".
function outcomeLabel(outcome: string): string {
  return /^[a-z_]{1,40}$/.test(outcome) ? outcome : "other";
}

/**
 * Resident memory of processes in bytes, from one `ps` run for all of them
 * (`--allow-run`). Not from `/proc`: Deno reads it only under
 * `--allow-all`, which the host task does not give. A process not found is
 * left out; without `ps`, all are.
 *
 * @param pids the process ids
 * @returns RSS in bytes by pid
 * @example
 * ```ts
 * import { processesRss } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * assert.ok((processesRss([Deno.pid]).get(Deno.pid) ?? 0) > 0);
 * ```
 */
export function processesRss(pids: readonly number[]): Map<number, number> {
  const found = new Map<number, number>();
  if (pids.length === 0) return found;
  try {
    // Exits 1 when a pid is gone; the others are still listed.
    const { stdout } = new Deno.Command("ps", {
      args: ["-o", "pid=,rss=", "-p", pids.join(",")],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    for (const line of new TextDecoder().decode(stdout).split("\n")) {
      const [pid, kb] = line.trim().split(/\s+/).map(Number);
      if (Number.isInteger(pid) && Number.isFinite(kb)) {
        found.set(pid!, kb! * 1024);
      }
    }
  } catch {
    // No ps, or no --allow-run: unknown.
  }
  return found;
}

/**
 * {@link processesRss} read at most once per `ms`, the last reading
 * answering in between (a process started since reads 0 until the next).
 * A reading is a synchronous `ps` of about 10 ms on the host's thread,
 * and any token may scrape `/metrics`: a flood of scrapes must not turn
 * into a flood of those.
 *
 * @param ms how long a reading serves
 * @param read how to read (tests count the readings) @default processesRss
 * @returns the reader
 * @example Two asks within the interval read once
 * ```ts
 * import { rssReader } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * let reads = 0;
 * const rss = rssReader(60_000, (pids) => {
 *   reads++;
 *   return new Map(pids.map((p) => [p, 1]));
 * });
 * assert.equal(rss([1]).get(1), 1);
 * assert.equal(rss([1]).get(1), 1);
 * assert.equal(reads, 1);
 * ```
 */
export function rssReader(
  ms: number,
  read: (pids: readonly number[]) => Map<number, number> = processesRss,
): (pids: readonly number[]) => Map<number, number> {
  let at = -Infinity;
  let last = new Map<number, number>();
  return (pids) => {
    if (performance.now() - at >= ms) {
      last = read(pids);
      at = performance.now();
    }
    return last;
  };
}

// Upper bounds of the wall-time buckets, in seconds.
const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600];

interface CallSeries {
  readonly labels: { kind: string; name: string; outcome: string };
  count: number;
}

interface DurationSeries {
  readonly labels: { kind: string; name: string };
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative (as prom-client keeps them). */
  readonly buckets: number[];
  readonly outcomes: Map<string, CallSeries>;
}

/**
 * Counts calls and their durations by label set, as `skillbox_calls_total`
 * (by kind, name and outcome) and `skillbox_call_duration_seconds` (by
 * kind and name); label values must already be bounded (the caller
 * normalises them: a series is kept per distinct set).
 *
 * @example Two calls, as scraped
 * ```ts
 * import client from "prom-client";
 * import { CallMetrics } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * const registry = new client.Registry();
 * const metrics = new CallMetrics(registry);
 * metrics.record("tool", "add", "ok", 0.05);
 * metrics.record("tool", "add", "timeout", 2);
 * const text = await registry.metrics();
 * assert.match(text, /calls_total\{kind="tool",name="add",outcome="ok"\} 1/);
 * assert.match(text, /duration_seconds_bucket\{le="1",kind="tool",name="add"\} 1/);
 * assert.match(text, /duration_seconds_count\{kind="tool",name="add"\} 2/);
 * ```
 */
export class CallMetrics {
  #byKind = new Map<string, Map<string, DurationSeries>>();
  // Both in first-seen order, the order prom-client exposes its series in.
  #calls: CallSeries[] = [];
  #durations: DurationSeries[] = [];

  /** @param registry where the two metrics are exposed */
  constructor(registry: client.Registry) {
    const calls = this.#calls;
    new client.Counter({
      name: "skillbox_calls_total",
      help: "Tool calls and skill runs, by kind, name and outcome",
      labelNames: ["kind", "name", "outcome"] as const,
      registers: [registry],
      // Scrapes are rare next to calls: rebuild the counter from the
      // numbers then, through prom-client's own API.
      collect() {
        this.reset();
        for (const series of calls) this.inc(series.labels, series.count);
      },
    });
    new DurationHistogram({
      name: "skillbox_call_duration_seconds",
      help: "Wall time of tool calls and skill runs",
      buckets: [...BUCKETS],
      labelNames: ["kind", "name"] as const,
      registers: [registry],
    }, this.#durations);
  }

  /**
   * Counts one call.
   *
   * @param kind `"tool"` or `"skill"`
   * @param name the name's label value (already bounded)
   * @param outcome the outcome's label value (already bounded)
   * @param seconds the call's wall time; not observed unless finite
   */
  record(kind: string, name: string, outcome: string, seconds: number): void {
    let byName = this.#byKind.get(kind);
    if (byName === undefined) {
      byName = new Map();
      this.#byKind.set(kind, byName);
    }
    let duration = byName.get(name);
    if (duration === undefined) {
      duration = {
        labels: { kind, name },
        count: 0,
        sum: 0,
        buckets: BUCKETS.map(() => 0),
        outcomes: new Map(),
      };
      byName.set(name, duration);
      this.#durations.push(duration);
    }
    let calls = duration.outcomes.get(outcome);
    if (calls === undefined) {
      calls = { labels: { kind, name, outcome }, count: 0 };
      duration.outcomes.set(outcome, calls);
      this.#calls.push(calls);
    }
    calls.count++;
    if (!Number.isFinite(seconds)) return;
    duration.count++;
    duration.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]!) {
        duration.buckets[i]!++;
        break;
      }
    }
  }
}

/** One exposed line of the histogram, in prom-client's own shape. */
interface HistogramLine {
  labels: { le?: number | string };
  sharedLabels: { kind: string; name: string };
  value: number;
  metricName: string;
  /** null on bucket lines, undefined on the sum and count, as prom-client. */
  exemplar: null | undefined;
}

// prom-client's Histogram has no call that adds counts in bulk, so the
// exposed values are made here, in the shape its registry formats (it asks
// `getForPromString`, and `get` splays that for JSON): the text is the one a
// Histogram fed each observation would give, which metrics_test.ts
// checks against a real one.
class DurationHistogram extends client.Histogram<"kind" | "name"> {
  #series: readonly DurationSeries[];
  #name: string;
  #help: string;
  #bounds: readonly number[];

  constructor(
    config: client.HistogramConfiguration<"kind" | "name"> & {
      buckets: number[];
    },
    series: readonly DurationSeries[],
  ) {
    super(config);
    this.#series = series;
    this.#name = config.name;
    this.#help = config.help;
    this.#bounds = config.buckets;
  }

  getForPromString(): Promise<{
    name: string;
    help: string;
    type: "histogram";
    aggregator: "sum";
    values: HistogramLine[];
  }> {
    const values: HistogramLine[] = [];
    const bucket = `${this.#name}_bucket`;
    for (const series of this.#series) {
      const line = (
        labels: HistogramLine["labels"],
        value: number,
        metricName: string,
        exemplar: null | undefined,
      ): HistogramLine => ({
        labels,
        sharedLabels: series.labels,
        value,
        metricName,
        exemplar,
      });
      let below = 0;
      this.#bounds.forEach((le, i) => {
        below += series.buckets[i]!;
        values.push(line({ le }, below, bucket, null));
      });
      values.push(
        line({ le: "+Inf" }, series.count, bucket, null),
        line({}, series.sum, `${this.#name}_sum`, undefined),
        line({}, series.count, `${this.#name}_count`, undefined),
      );
    }
    return Promise.resolve({
      name: this.#name,
      help: this.#help,
      type: "histogram",
      aggregator: "sum",
      values,
    });
  }
}
