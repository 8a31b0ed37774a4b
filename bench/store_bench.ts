/**
 * The run history's write path, off the host: what one warm no-op tool call
 * costs the host in the store. Three figures, in CPU µs per run (this
 * process's user + system time, so the WAL's writes count and another
 * process's load does not): the SQLite store's write of a batch of 200
 * such runs into a file already holding 10,000 (the default `max_runs`,
 * WAL, as a host writes it), and the whole recording of a run by the
 * {@link RunRecorder} (started, finished, and its share of the flush that
 * redacts and writes it); and, per run, the retention's delete of 2,000
 * runs over the cap: all the operator's, and one token's of a store two
 * tokens and the operator share.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { join } from "node:path";
import { cpuUsage } from "node:process";
import { newRunId, RunRecorder } from "../runtime/store/recorder.ts";
import { openSqliteStore } from "../runtime/store/sqlite.ts";
import type { RunWrite } from "../runtime/store/store.ts";
import type { Bench } from "./main.ts";
import { latencyStats } from "./_stats.ts";

const BATCH = 200;
const FILLED = 10_000;
const ROUNDS = 60;
const PRUNED = 2_000;

// Like a warm call of a no-op tool over WebSocket from one session.
function batchOf(
  session: string,
  size: number,
  owner: string | null = null,
): RunWrite[] {
  const out: RunWrite[] = [];
  for (let i = 0; i < size; i++) {
    const now = Date.now();
    out.push({
      run: {
        id: newRunId(now),
        parentId: null,
        kind: "tool",
        name: "noop",
        toolkit: null,
        session,
        transport: "websocket",
        tokenLabel: owner === null ? null : "token 1",
        owner,
        host: "bench-host:8080",
        startedAt: now,
        endedAt: now,
        durationMs: 0.123,
        outcome: "ok",
        error: null,
        summary: null,
        args: "{}",
        result: '{"ok":true}',
        eventCount: 0,
        llmTurns: 0,
        inputTokens: 0,
        outputTokens: 0,
      },
      events: [],
      files: [],
    });
  }
  return out;
}

function cpuUs(): number {
  const { user, system } = cpuUsage();
  return user + system;
}

function spread(perRun: number[]): string {
  const { min, median, max } = latencyStats(perRun);
  return `min ${min.toFixed(2)} / median ${median.toFixed(2)} / max ${
    max.toFixed(2)
  } µs per run`;
}

async function inTempDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_store_" });
  try {
    return await run(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// A store holding FILLED runs (the default max_runs) of one session.
function filledStore(dir: string) {
  const store = openSqliteStore(join(dir, "runs.db"));
  const session = crypto.randomUUID().replaceAll("-", "");
  for (let n = 0; n < FILLED; n += BATCH) {
    store.write(batchOf(session, BATCH));
  }
  return { store, session };
}

// The store alone: one transaction of BATCH runs, as the recorder hands it.
function storeWrite(): Promise<string> {
  return inTempDir((dir) => {
    const { store, session } = filledStore(dir);
    const perRun: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const batch = batchOf(session, BATCH);
      const t0 = cpuUs();
      store.write(batch);
      perRun.push((cpuUs() - t0) / BATCH);
    }
    store.close();
    return Promise.resolve(
      `SQLite write of ${BATCH} runs (${FILLED} kept): ${spread(perRun)}`,
    );
  });
}

// The retention: what deleting a run beyond max_runs costs (each run a
// host keeps is deleted once, when the cap is reached).
function storePrune(): Promise<string> {
  return inTempDir((dir) => {
    const { store, session } = filledStore(dir);
    const perRun: number[] = [];
    for (let r = 0; r < ROUNDS / 4; r++) {
      for (let n = 0; n < PRUNED; n += BATCH) {
        store.write(batchOf(session, BATCH));
      }
      const t0 = cpuUs();
      const deleted = store.prune({ maxRuns: FILLED, maxAgeDays: 30 });
      perRun.push((cpuUs() - t0) / deleted);
      if (deleted !== PRUNED) throw new Error(`pruned ${deleted} runs`);
    }
    store.close();
    return Promise.resolve(
      `SQLite prune of ${PRUNED} runs over ${FILLED}: ${spread(perRun)}`,
    );
  });
}

// The retention where tokens share the store: one token (A) floods it,
// B and the operator hold FILLED / 10 runs each; each prune deletes
// PRUNED of A's runs only (the old retention, the oldest of anyone's).
function storePruneShared(): Promise<string> {
  return inTempDir((dir) => {
    const store = openSqliteStore(join(dir, "runs.db"));
    const session = crypto.randomUUID().replaceAll("-", "");
    const a = "sha256:aaaaaaaa";
    for (let n = 0; n < FILLED / 10; n += BATCH) {
      store.write(batchOf(session, BATCH, "sha256:bbbbbbbb"));
      store.write(batchOf(session, BATCH, null));
    }
    for (let n = 0; n < FILLED * 0.8; n += BATCH) {
      store.write(batchOf(session, BATCH, a));
    }
    const perRun: number[] = [];
    for (let r = 0; r < ROUNDS / 4; r++) {
      for (let n = 0; n < PRUNED; n += BATCH) {
        store.write(batchOf(session, BATCH, a));
      }
      const t0 = cpuUs();
      const deleted = store.prune({ maxRuns: FILLED, maxAgeDays: 30 });
      perRun.push((cpuUs() - t0) / deleted);
      if (deleted !== PRUNED) throw new Error(`pruned ${deleted} runs`);
    }
    store.close();
    return Promise.resolve(
      `SQLite prune of ${PRUNED} of one token's runs over ${FILLED} (two tokens and the operator): ${
        spread(perRun)
      }`,
    );
  });
}

// The recorder: what a call costs it, and its flush's share per run.
function recorderRun(): Promise<string> {
  return inTempDir(async (dir) => {
    const recorder = new RunRecorder({
      store: openSqliteStore(join(dir, "runs.db")),
      host: "bench-host:8080",
      describeSession: () => ({
        transport: "websocket",
        tokenLabel: null,
        owner: null,
      }),
    });
    const session = {
      id: crypto.randomUUID().replaceAll("-", ""),
      token: "",
      state: new Map(),
      send() {},
      signal: new AbortController().signal,
    };
    const round = async () => {
      const t0 = cpuUs();
      for (let i = 0; i < BATCH; i++) {
        const id = recorder.started({
          kind: "tool",
          name: "noop",
          session,
          args: {},
        });
        recorder.finished(id, {
          outcome: "ok",
          result: { ok: true },
          summary: null,
          toolkit: null,
          secrets: [],
        });
      }
      await recorder.flush();
      return (cpuUs() - t0) / BATCH;
    };
    for (let n = 0; n < FILLED; n += BATCH) await round();
    const perRun: number[] = [];
    for (let r = 0; r < ROUNDS; r++) perRun.push(await round());
    await recorder.close();
    return `recorder, started + finished + flush (${FILLED} kept): ${
      spread(perRun)
    }`;
  });
}

/** The store bench. */
export const storeBench: Bench = {
  name: "store",
  async run() {
    return [
      await storeWrite(),
      await storePrune(),
      await storePruneShared(),
      await recorderRun(),
    ];
  },
};

if (import.meta.main) {
  for (const line of await storeBench.run()) console.log(line);
}
