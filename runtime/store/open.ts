/**
 * Opens the run recorder a host configuration asks for: the PostgreSQL
 * store at `store.url` (a fleet's; connected on first use, so a host starts
 * while its database is down), else the SQLite store at `store.path`
 * (relative to the working folder), or none with `store: null` or when the
 * file cannot be opened (reported once; the host keeps serving).
 *
 * @module
 */

import { resolve } from "node:path";
import type { StoreConfig } from "./config.ts";
import {
  type RunCounters,
  RunRecorder,
  type RunRecorderOptions,
} from "./recorder.ts";
import type { Redactor } from "./redact.ts";
import { lazyPostgresStore } from "./postgres.ts";
import { openSqliteStore } from "./sqlite.ts";
import type { RunStore } from "./store.ts";

/** Options of {@link openRecorder}. */
export interface OpenRecorderOptions {
  /** Redacts everything kept or shown. */
  redactor?: Redactor;
  /** Transport, token label and owner of a session. */
  describeSession?: RunRecorderOptions["describeSession"];
  /** Counts runs for the metrics. */
  counters?: RunCounters;
  /** Receives the one-time report of a failing store. */
  log?: (line: string) => void;
  /** This host's name on its runs (`host.id`). @default "" */
  host?: string;
}

/**
 * Opens the recorder for a `store` configuration.
 *
 * @param config the `store` section, or null to keep nothing
 * @param options redaction, session description, counters, log
 * @returns the recorder (its `store` is null when runs are not kept)
 * @example Keep nothing
 * ```ts
 * import { openRecorder } from "./open.ts";
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
    store,
    retention: config ?? undefined,
    files: config?.files,
    redactor: options.redactor,
    describeSession: options.describeSession,
    counters: options.counters,
    log: options.log,
    host: options.host,
  });
}
