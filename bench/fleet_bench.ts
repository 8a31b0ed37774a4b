/**
 * The fleet's costs, with the real engines (a throwaway PostgreSQL, HAProxy
 * with `deploy/haproxy.cfg`, host processes): a trivial call's median with
 * the PostgreSQL store against no store (goal: at most 1.05×), the store's
 * sustained writes per second, and 200 HTTP+SSE sessions × 20 calls
 * through HAProxy to two hosts against the same load on one host directly
 * (calls/s; failed calls: none), and through HAProxy to one host (the
 * balancer's own cost).
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { connectClient } from "../tests/support/tools_harness.ts";
import { fixtureHost } from "../tests/support/console_host.ts";
import { a2eSession, haproxyBin, startFleet } from "../tests/fleet/_fleet.ts";
import { postgresBin, startPostgres } from "../tests/support/postgres.ts";
import { openPostgresStore } from "../runtime/store/postgres.ts";
import type { RunWrite } from "../runtime/store/store.ts";
import { latencyStats } from "./_stats.ts";
import type { Bench } from "./main.ts";

const ROUNDS = 10;
const PER_ROUND = 200;
const WARMUP = 200;
const WRITES = 20_000;
const BATCH = 500;
const SESSIONS = 200;
const CALLS = 20;

async function storeOverhead(url: string): Promise<string[]> {
  await using on = await fixtureHost({
    store: { path: "unused.db", url, maxRuns: 100_000, maxAgeDays: 30 },
  });
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
  for (let r = 0; r < ROUNDS; r++) {
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
      for (let n = 0; n < PER_ROUND; n++) await call(i, true);
    }
  }
  await Promise.all(clients.map((c) => c.close()));
  const recorded = await (await on.host.fetch(
    new Request("http://localhost/api/runs?limit=1"),
  )).json();
  if (recorded.runs?.length !== 1) {
    throw new Error("the PostgreSQL-store host recorded nothing");
  }
  const [pg, none] = times.map((t) => latencyStats(t).median);
  return [
    `trivial call over WebSocket, PostgreSQL store: median ${
      pg!.toFixed(3)
    } ms; no store: ${none!.toFixed(3)} ms; ratio ${
      (pg! / none!).toFixed(3)
    } (goal <= 1.05)`,
  ];
}

async function writeRate(url: string): Promise<string[]> {
  const store = await openPostgresStore(url);
  try {
    const write = (i: number): RunWrite => ({
      run: {
        id: `w${i}`,
        parentId: null,
        kind: "tool",
        name: `tool_${i % 50}`,
        toolkit: null,
        session: `s${i % 200}`,
        transport: "sse",
        tokenLabel: "token 1",
        host: "bench",
        startedAt: i,
        endedAt: i + 1,
        durationMs: 1,
        outcome: "ok",
        error: null,
        summary: null,
        args: JSON.stringify({ path: `/data/file_${i}.csv`, limit: i }),
        result: JSON.stringify({ rows: i, summary: "x".repeat(200) }),
        eventCount: 1,
        llmTurns: 0,
        inputTokens: 0,
        outputTokens: 0,
      },
      events: [{ seq: 0, kind: "progress", data: '{"pct":50}', at: i }],
    });
    const t0 = performance.now();
    for (let i = 0; i < WRITES; i += BATCH) {
      await store.write(
        Array.from({ length: BATCH }, (_, k) => write(i + k)),
      );
    }
    const s = (performance.now() - t0) / 1000;
    return [
      `${WRITES} runs (one event each) in batches of ${BATCH}: ${
        (WRITES / s).toFixed(0)
      } runs/s sustained`,
    ];
  } finally {
    await store.close();
  }
}

async function load(base: string): Promise<{ rate: number; failed: number }> {
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, () => a2eSession(base)),
  );
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(sessions.map(async (s, i) => {
    for (let n = 0; n < CALLS; n++) {
      const answer = await s.call("echo", { client: `b${i}`, n });
      const data = answer.data as { success?: boolean } | undefined;
      if (answer.type !== "tool/call/resp" || !data?.success) failed++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(sessions.map((s) => s.close()));
  return { rate: (SESSIONS * CALLS) / seconds, failed };
}

async function balanced(): Promise<string[]> {
  const line = (what: string, r: { rate: number; failed: number }) =>
    `${SESSIONS} HTTP+SSE sessions x ${CALLS} calls, ${what}: ${
      r.rate.toFixed(0)
    } calls/s, ${r.failed} failed`;
  const lines: string[] = [];
  {
    await using fleet = await startFleet();
    lines.push(line("one host directly", await load(fleet.hosts[0]!.url)));
    lines.push(
      line("through HAProxy to two hosts", await load(fleet.balancer)),
    );
  }
  {
    // The balancer's own cost: the same hop, one host behind it.
    await using one = await startFleet({ hosts: 1 });
    lines.push(line("through HAProxy to one host", await load(one.balancer)));
  }
  return lines;
}

/** The fleet bench (needs PostgreSQL and HAProxy installed). */
export const fleetBench: Bench = {
  name: "fleet: PostgreSQL store and HAProxy",
  async run() {
    if (postgresBin() === null || haproxyBin() === null) {
      throw new Error(
        "PostgreSQL and HAProxy are needed: apt-get install -y postgresql haproxy",
      );
    }
    const lines: string[] = [];
    {
      await using pg = await startPostgres();
      lines.push(...await storeOverhead(await pg.database()));
      lines.push(...await writeRate(await pg.database()));
    }
    lines.push(...await balanced());
    return lines;
  },
};

if (import.meta.main) {
  for (const line of await fleetBench.run()) console.log(line);
}
