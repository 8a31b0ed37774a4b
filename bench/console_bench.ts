/**
 * The console's costs: a trivial tool call over WebSocket with the run store
 * on vs `store: null` (goal: at most 5% slower at the median), and 10,000
 * recorded runs queried through `/api/runs` with a filter (goal: at most
 * 20 ms), and what a run keeping 4 MiB of files costs its detail and one
 * file's download (file bytes read per request, and time).
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { join } from "node:path";
import { createApi } from "../runtime/console/api.ts";
import { RunRecorder } from "../runtime/store/recorder.ts";
import { openSqliteStore } from "../runtime/store/sqlite.ts";
import { connectClient } from "../tests/support/tools_harness.ts";
import { fixtureHost } from "../tests/support/console_host.ts";
import { countFileReads } from "../tests/support/runs.ts";
import { latencyStats } from "./_stats.ts";
import type { Bench } from "./main.ts";

const ROUNDS = 10;
const PER_ROUND = 200;
const WARMUP = 200;
const RUNS = 10_000;
const QUERIES = 200;

function fmt(values: number[]): string {
  const s = latencyStats(values);
  return `min ${s.min.toFixed(3)} / median ${s.median.toFixed(3)} / max ${
    s.max.toFixed(3)
  } ms (${s.count})`;
}

async function storeOverhead(): Promise<string[]> {
  await using on = await fixtureHost();
  await using off = await fixtureHost({ store: null });
  const urls = await Promise.all([on, off].map(async (t) => {
    const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
    return url.replace("http", "ws") + "/a2e";
  }));
  const clients = await Promise.all(urls.map((u) => connectClient(u)));
  const times: number[][] = [[], []];
  const call = async (i: number, keep: boolean) => {
    const t0 = performance.now();
    const answer = await clients[i]!.request("tool/call/req", {
      tool_name: "echo",
      arguments: { n: 1 },
    });
    const ms = performance.now() - t0;
    const data = answer.final.data as { success?: boolean } | undefined;
    if (!data?.success) {
      throw new Error(`call failed: ${JSON.stringify(answer.final)}`);
    }
    if (keep) times[i]!.push(ms);
  };
  for (let w = 0; w < WARMUP; w++) {
    await call(0, false);
    await call(1, false);
  }
  // Alternate which host goes first so drift in machine load hits both.
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      for (let n = 0; n < PER_ROUND; n++) await call(i, true);
    }
  }
  await Promise.all(clients.map((c) => c.close()));
  const recorded = on.host.fetch(
    new Request("http://localhost/api/runs?limit=1"),
  );
  const kept = ((await (await recorded).json()).runs as unknown[]).length;
  if (kept !== 1) throw new Error("the store-on host recorded nothing");
  const [withStore, without] = times.map((t) => latencyStats(t).median);
  return [
    `trivial call over WebSocket, store on:   ${fmt(times[0]!)}`,
    `trivial call over WebSocket, store null: ${fmt(times[1]!)}`,
    `store on / store null at the median: ${
      (withStore! / without!).toFixed(3)
    } (goal <= 1.05)`,
  ];
}

async function queryTime(): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_console_" });
  try {
    const store = openSqliteStore(join(dir, "runs.db"));
    const recorder = new RunRecorder({ store });
    const session = {
      id: "bench",
      token: "",
      state: new Map(),
      send() {},
      signal: new AbortController().signal,
    };
    const t0 = performance.now();
    for (let i = 0; i < RUNS; i++) {
      const id = recorder.started({
        kind: i % 10 === 0 ? "skill" : "tool",
        name: `tool_${i % 50}`,
        session,
        args: { path: `/data/file_${i}.csv`, limit: i },
      });
      recorder.event(id, {
        kind: "progress",
        data: { pct: 50, message: "half" },
        seq: 0,
      });
      recorder.finished(id, {
        outcome: i % 7 === 0 ? "tool_error" : "ok",
        result: { rows: i, summary: "x".repeat(200) },
      });
      if (i % 1000 === 999) await recorder.flush();
    }
    await recorder.flush();
    const writeMs = performance.now() - t0;
    const api = createApi({
      recorder,
      catalog: () => Promise.reject(new Error("unused")),
      sessions: () => [],
      processes: () => [],
    });
    const times: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const name = `tool_${q % 50}`;
      const s = performance.now();
      const res = await api.request(`/runs?name=${name}&outcome=ok&limit=50`);
      const body = await res.json();
      times.push(performance.now() - s);
      if (body.runs.length !== 50) {
        throw new Error(`query returned ${body.runs.length}`);
      }
    }
    const s = performance.now();
    await (await api.request("/stats")).json();
    const statsMs = performance.now() - s;
    await recorder.close();
    return [
      `${RUNS} runs recorded and flushed in ${writeMs.toFixed(0)} ms (${
        (writeMs * 1000 / RUNS).toFixed(1)
      } µs per run)`,
      `GET /api/runs?name=…&outcome=ok&limit=50 over ${RUNS} runs: ${
        fmt(times)
      } (goal <= 20 ms)`,
      `GET /api/stats over ${RUNS} runs: ${statsMs.toFixed(1)} ms`,
    ];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// A run keeping its scripts' workspaces at the caps (100 files, 4 MiB):
// what its detail and one file's download read from the store, in file
// bytes the store hands the API (counted) and milliseconds per request.
const FILES = 100;
const FILE_BYTES = 40 * 1024;

async function keptFiles(): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_bench_console_" });
  try {
    const counted = countFileReads(openSqliteStore(join(dir, "runs.db")));
    const store = counted.store;
    const text = new TextEncoder().encode("x".repeat(FILE_BYTES - 1) + "\n");
    store.write([{
      run: {
        id: "scripted",
        parentId: null,
        kind: "skill",
        name: "scripted",
        toolkit: null,
        session: "s",
        transport: "websocket",
        tokenLabel: null,
        startedAt: 1,
        endedAt: 2,
        durationMs: 1,
        outcome: "ok",
        error: null,
        summary: null,
        args: "{}",
        result: null,
        eventCount: 0,
        llmTurns: 0,
        inputTokens: 0,
        outputTokens: 0,
      },
      events: [],
      files: Array.from({ length: FILES }, (_, i) => ({
        name: `1/out_${i}.txt`,
        size: FILE_BYTES,
        data: text,
        note: null,
      })),
    }]);
    const recorder = new RunRecorder({ store });
    const api = createApi({
      recorder,
      catalog: () => Promise.reject(new Error("unused")),
      sessions: () => [],
      processes: () => [],
    });
    const measure = async (path: (q: number) => string) => {
      const times: number[] = [];
      counted.read = 0;
      for (let q = 0; q < QUERIES; q++) {
        const s = performance.now();
        const res = await api.request(path(q));
        await res.arrayBuffer();
        times.push(performance.now() - s);
        if (!res.ok) throw new Error(`${path(q)}: ${res.status}`);
      }
      return `${
        (counted.read / QUERIES / 1024).toFixed(0)
      } KiB of files read, ${fmt(times)}`;
    };
    const detail = await measure(() => "/runs/scripted");
    const one = await measure((q) => `/runs/scripted/files/${q % FILES}`);
    await recorder.close();
    return [
      `GET /api/runs/<id> of a run keeping ${FILES} files of ${
        FILE_BYTES / 1024
      } KiB: ${detail}`,
      `GET /api/runs/<id>/files/<n> of the same run: ${one}`,
    ];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The console bench. */
export const consoleBench: Bench = {
  name: "console",
  async run() {
    return [
      ...await storeOverhead(),
      ...await queryTime(),
      ...await keptFiles(),
    ];
  },
};

if (import.meta.main) {
  for (const line of await consoleBench.run()) console.log(line);
}
