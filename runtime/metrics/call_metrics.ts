/**
 * The two metrics every call moves (calls by kind, name and outcome; wall
 * time by kind and name), kept in plain numbers per label set and handed to
 * prom-client only when scraped. prom-client hashes a labels object on every
 * `inc` and `observe`, labelled children included (a child only binds the
 * labels), which cost about 1.5 µs and seven allocations a call; a known
 * label set here is three Map lookups and a few additions.
 *
 * @module
 */

import client from "prom-client";

/** Names, help texts and buckets of {@link CallMetrics}' two metrics. */
export interface CallMetricsOptions {
  /** The counter of calls, labelled kind, name and outcome. */
  calls: { name: string; help: string };
  /** The histogram of wall times in seconds, labelled kind and name. */
  duration: { name: string; help: string; buckets: readonly number[] };
}

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
 * Counts calls and their durations by label set; label values must already
 * be bounded (the caller normalises them: a series is kept per distinct set).
 *
 * @example Two calls, as scraped
 * ```ts
 * import client from "prom-client";
 * import { CallMetrics } from "./call_metrics.ts";
 * import assert from "node:assert/strict";
 * const registry = new client.Registry();
 * const metrics = new CallMetrics(registry, {
 *   calls: { name: "calls_total", help: "Calls" },
 *   duration: { name: "call_seconds", help: "Wall time", buckets: [0.1, 1] },
 * });
 * metrics.record("tool", "add", "ok", 0.05);
 * metrics.record("tool", "add", "timeout", 2);
 * const text = await registry.metrics();
 * assert.match(text, /calls_total\{kind="tool",name="add",outcome="ok"\} 1/);
 * assert.match(text, /call_seconds_bucket\{le="1",kind="tool",name="add"\} 1/);
 * assert.match(text, /call_seconds_count\{kind="tool",name="add"\} 2/);
 * ```
 */
export class CallMetrics {
  #byKind = new Map<string, Map<string, DurationSeries>>();
  // Both in first-seen order, the order prom-client exposes its series in.
  #calls: CallSeries[] = [];
  #durations: DurationSeries[] = [];
  #bounds: readonly number[];

  /**
   * @param registry where the two metrics are exposed
   * @param options their names, help texts and buckets
   */
  constructor(registry: client.Registry, options: CallMetricsOptions) {
    this.#bounds = [...options.duration.buckets];
    const calls = this.#calls;
    new client.Counter({
      ...options.calls,
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
      ...options.duration,
      buckets: [...this.#bounds],
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
      duration = this.#newDuration(kind, name);
      byName.set(name, duration);
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
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        duration.buckets[i]!++;
        break;
      }
    }
  }

  #newDuration(kind: string, name: string): DurationSeries {
    const series: DurationSeries = {
      labels: { kind, name },
      count: 0,
      sum: 0,
      buckets: this.#bounds.map(() => 0),
      outcomes: new Map(),
    };
    this.#durations.push(series);
    return series;
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
// Histogram fed each observation would give, which call_metrics_test.ts
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
      const shared = series.labels;
      let below = 0;
      this.#bounds.forEach((le, i) => {
        below += series.buckets[i]!;
        values.push({
          labels: { le },
          sharedLabels: shared,
          value: below,
          metricName: bucket,
          exemplar: null,
        });
      });
      values.push(
        {
          labels: { le: "+Inf" },
          sharedLabels: shared,
          value: series.count,
          metricName: bucket,
          exemplar: null,
        },
        {
          labels: {},
          sharedLabels: shared,
          value: series.sum,
          metricName: `${this.#name}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels: shared,
          value: series.count,
          metricName: `${this.#name}_count`,
          exemplar: undefined,
        },
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
