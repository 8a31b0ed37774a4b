/**
 * The host's Prometheus metrics through `prom-client`: calls, durations,
 * sessions, sandbox processes and memory, LLM turns and tokens, dropped
 * events and store errors, plus the process defaults. Label values are
 * bounded: names come from what is loaded (an unknown name is counted as
 * `(unknown)`, and past {@link MAX_NAMES} distinct names as `(other)`).
 *
 * @module
 */

import client from "prom-client";
import type { RunCounters } from "../store/recorder.ts";
import { CallMetrics } from "./call_metrics.ts";

/** Distinct tool/skill names given their own label value. */
export const MAX_NAMES = 1000;
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
  /** The Prometheus text exposition. */
  text(): Promise<string>;
  /** The content type of {@link text}. */
  readonly contentType: string;
}

/**
 * Creates the host's metrics on a fresh registry.
 *
 * @param sources live figures read at scrape time
 * @returns the metrics
 * @example Count a call
 * ```ts
 * import { createMetrics } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * const metrics = createMetrics({ defaults: false });
 * metrics.finished("tool", "add", "ok", 0.01);
 * assert.match(await metrics.text(), /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} 1/);
 * ```
 */
// Long (about 110 lines): the metric declarations, one after another, and
// the few methods that move them; splitting would only scatter the list.
export function createMetrics(
  sources: MetricsSources & { defaults?: boolean } = {},
): HostMetrics {
  const registry = new client.Registry();
  if (sources.defaults !== false) {
    client.collectDefaultMetrics({ register: registry });
  }
  // Created first, as the two metrics were: the exposition keeps its order.
  const calls = new CallMetrics(registry, {
    calls: {
      name: "skillbox_calls_total",
      help: "Tool calls and skill runs, by kind, name and outcome",
    },
    duration: {
      name: "skillbox_call_duration_seconds",
      help: "Wall time of tool calls and skill runs",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
    },
  });
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
      this.set(sources.sandbox?.().processes ?? 0);
    },
  });
  new client.Gauge({
    name: "skillbox_sandbox_rss_bytes",
    help: "Resident memory of all sandbox processes",
    registers: [registry],
    collect() {
      this.set(sources.sandbox?.().rssBytes ?? 0);
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
  const names = new Set<string>();
  const providers = new Set<string>();
  const nameLabel = (name: string, outcome: string) => {
    if (OUTCOMES_UNKNOWN.has(outcome)) return "(unknown)";
    if (names.has(name)) return name;
    if (names.size >= MAX_NAMES) return "(other)";
    names.add(name);
    return name;
  };
  const providerLabel = (provider: string) => {
    if (providers.has(provider)) return provider;
    if (providers.size >= MAX_PROVIDERS) return "(other)";
    providers.add(provider);
    return provider;
  };

  return {
    contentType: registry.contentType,
    text: () => registry.metrics(),
    finished(kind, name, outcome, seconds) {
      calls.record(
        kind,
        nameLabel(name, outcome),
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

// Error codes are a closed set; anything else a sandbox made up is "other".
function outcomeLabel(outcome: string): string {
  return /^[a-z_]{1,40}$/.test(outcome) ? outcome : "other";
}

/**
 * Resident memory of a process in bytes (0 where unavailable); see
 * {@link processesRss}.
 *
 * @param pid the process id
 * @returns its RSS in bytes
 * @example
 * ```ts
 * import { processRss } from "./metrics.ts";
 * import assert from "node:assert/strict";
 * assert.ok(processRss(Deno.pid) >= 0);
 * ```
 */
export function processRss(pid: number): number {
  return processesRss([pid]).get(pid) ?? 0;
}

/**
 * Resident memory of processes in bytes: from `/proc` when this process may
 * read it (Deno asks for `--allow-all` there, which the host task does not
 * give), else from one `ps` run for all of them (`--allow-run`). A process
 * not found is left out.
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
    for (const pid of pids) {
      const rss = procRss(pid);
      if (rss !== null) found.set(pid, rss);
    }
    return found;
  } catch {
    // /proc is not readable here: ask ps once for all.
  }
  try {
    const { stdout, success } = new Deno.Command("ps", {
      args: ["-o", "pid=,rss=", "-p", pids.join(",")],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!success && stdout.length === 0) return found;
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

// A process's RSS from /proc; null when it is gone; throws when /proc may
// not be read at all.
function procRss(pid: number): number | null {
  let status: string;
  try {
    status = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw error;
    if (error instanceof Deno.errors.PermissionDenied) throw error;
    return null;
  }
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}
