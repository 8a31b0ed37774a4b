// A fleet losing a part: a host killed mid-call, the database stopped and
// started under load. Real PostgreSQL, HAProxy and host processes.
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  type A2eSession,
  a2eSession,
  allRuns,
  api,
  fleetTest,
  TOKEN,
  until,
} from "./_fleet.ts";
import type { Msg } from "../support/wire.ts";
import { BEAT_LOST_MS } from "../../runtime/store/recorder.ts";

function ok(answer: Msg): void {
  assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
  assert.equal((answer.data as Msg).success, true, JSON.stringify(answer));
}

// Every host's history of echo runs answers 503, its error matching
// `expected`; `guardMs` guards against a hang (the test fails instead),
// far past any bound: not a timing.
async function everyHistoryFails(
  hosts: readonly { id: string; url: string }[],
  expected: RegExp,
  guardMs: number,
): Promise<void> {
  await Promise.all(hosts.map(async (h) => {
    const res = await fetch(`${h.url}/api/runs?name=echo`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(guardMs),
    }).catch((error) => {
      throw new Error(`${h.id}'s /api/runs: ${error}`);
    });
    const body = await res.json();
    assert.equal(res.status, 503, `${h.id}: ${JSON.stringify(body)}`);
    assert.match(body.error, expected);
  }));
}

fleetTest(
  "a host killed mid-call: its client gets a clear error, the other host's are unharmed, and its run says interrupted after restart",
  async (fleet) => {
    const { balancer, hosts } = fleet;
    const [h1, h2] = hosts as [typeof hosts[0], typeof hosts[0]];
    const sessions: A2eSession[] = [];
    try {
      // Sessions until each host holds at least two; which host holds one
      // is read back from the store (the run's host).
      const on: Record<string, A2eSession[]> = { h1: [], h2: [] };
      for (let i = 0; on.h1!.length < 2 || on.h2!.length < 2; i++) {
        assert.ok(i < 40, "the balancer never spread the sessions");
        const s = await a2eSession(balancer);
        sessions.push(s);
        ok(await s.call("echo", { client: `k${i}` }));
        const runs = await allRuns(balancer, "name=echo");
        const run = runs.find((r) => (r.arguments as Msg).client === `k${i}`)!;
        on[String(run.host)]!.push(s);
      }
      const victim = on.h1![0]!;
      const napping = victim.call("nap", { ms: 600_000 });
      const nap = await until(
        "the nap is written running on h1",
        async () =>
          (await allRuns(h2.url, "name=nap")).find((r) =>
            r.outcome === "running" && r.host === "h1"
          ),
      );
      // Written while it runs: no end, no duration yet.
      assert.equal(nap.ended_at, null);
      assert.equal(nap.duration_ms, null);
      // h2's overview shows the nap running on h1, and h1 alive.
      const h1Seen = async (alive: boolean) => {
        const view = await api(h2.url, "/api/overview");
        const host = (view.hosts as Msg[]).find((h) => h.id === "h1");
        return host?.alive === alive ? view : undefined;
      };
      const before = await until("h2 sees h1 alive", () => h1Seen(true));
      assert.ok(
        (before.running as Msg[]).some((r) =>
          r.id === nap.id && r.host === "h1"
        ),
        JSON.stringify(before.running),
      );
      await h1.kill();
      // The client mid-call: its stream ends, the call is answered by an
      // error, and the session is gone (another host does not know it).
      const answer = await napping;
      assert.equal(answer.type, "stream/failed", JSON.stringify(answer));
      const res = await victim.send({
        type: "tool/call/req",
        id: "after",
        tool_name: "echo",
        arguments: {},
      });
      assert.equal(res.status, 404);
      assert.match(await res.text(), /unknown session/);
      // The other host's clients are unharmed.
      for (const s of on.h2!) ok(await s.call("echo", { client: "after" }));
      // New sessions go to the living host at once, none fails.
      for (let i = 0; i < 6; i++) {
        const s = await a2eSession(balancer);
        sessions.push(s);
        ok(await s.call("echo", { client: `new${i}` }));
      }
      // Until h1 is back, h2's overview lists its nap as running on h1, and
      // says h1 is gone (its heartbeat stopped) and since when.
      const gone = await until("h2 sees h1 gone", () => h1Seen(false));
      assert.ok(
        (gone.running as Msg[]).some((r) => r.id === nap.id && r.host === "h1"),
        JSON.stringify(gone.running),
      );
      const h1Gone = (gone.hosts as Msg[]).find((h) => h.id === "h1")!;
      assert.ok(
        Number(h1Gone.last_seen_ms) >= BEAT_LOST_MS,
        JSON.stringify(h1Gone),
      );
      assert.equal(h1Gone.running, 1);
      await h1.start();
      const marked = await until("h1 marks its run interrupted", async () => {
        const detail = await api(h2.url, `/api/runs/${nap.id}`);
        const run = detail.run as Msg;
        return run.outcome === "interrupted" ? run : undefined;
      });
      assert.match(
        String(marked.error),
        /host stopped before the run finished/,
      );
      // Back: alive again, and its interrupted run no longer running.
      const back = await until("h2 sees h1 back", () => h1Seen(true));
      assert.ok(
        !(back.running as Msg[]).some((r) => r.id === nap.id),
        JSON.stringify(back.running),
      );
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  },
);

fleetTest(
  "the database stopped and started under load loses no call and no run",
  async (fleet) => {
    const { balancer, hosts, pg } = fleet;
    const SESSIONS = 8, CALLS = 25;
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, () => a2eSession(balancer)),
    );
    let done = 0;
    let outage: Promise<void> = Promise.resolve();
    const progress = () => {
      done++;
      // Down after a fifth of the calls, up again after three fifths.
      if (done === (SESSIONS * CALLS) / 5) outage = pg.stop();
      if (done === (SESSIONS * CALLS * 3) / 5) {
        outage = outage.then(() => pg.start());
      }
    };
    try {
      await Promise.all(sessions.map(async (s, i) => {
        for (let n = 0; n < CALLS; n++) {
          ok(await s.call("echo", { client: `db${i}`, n }));
          progress();
        }
      }));
      await outage;
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
    // Every run reaches the store once it is back.
    const runs = await until("every run is written", async () => {
      const all = await allRuns(balancer, "name=echo");
      return all.length === SESSIONS * CALLS ? all : undefined;
    });
    assert.equal(new Set(runs.map((r) => r.id)).size, SESSIONS * CALLS);
    let failures = 0;
    for (const h of hosts) {
      const reports = h.lines.filter((l) =>
        /Cannot write the run store/.test(l)
      );
      assert.ok(reports.length <= 1, reports.join("\n"));
      if (reports.length === 1) {
        failures++;
        assert.ok(
          h.lines.some((l) => /run store is written again$/.test(l)),
          h.lines.join("\n"),
        );
        const metrics = await (await fetch(`${h.url}/metrics`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        })).text();
        assert.match(metrics, /skillbox_store_errors_total [1-9]/);
      }
    }
    assert.ok(failures >= 1, "no host saw the database go away");
  },
);

fleetTest(
  "a run table locked for good: calls go on, every host's history answers 503, not a hang, and the runs are written once it is free",
  async (fleet) => {
    const { balancer, hosts } = fleet;
    const session = await a2eSession(balancer);
    const locker = postgres(fleet.storeUrl, { onnotice: () => {}, max: 1 });
    const release = Promise.withResolvers<void>();
    try {
      ok(await session.call("echo", { n: 0 }));
      await until(
        "the first run is listed",
        async () =>
          (await allRuns(balancer, "name=echo")).length === 1
            ? true
            : undefined,
      );
      // Someone's LOCK TABLE (or a migration queued behind a long
      // transaction), held: every host's reads and writes waited on it.
      const locked = Promise.withResolvers<void>();
      const holding = locker.begin(async (tx) => {
        await tx`LOCK TABLE skillbox_runs IN ACCESS EXCLUSIVE MODE`;
        locked.resolve();
        await release.promise;
      });
      holding.catch(locked.reject);
      await locked.promise;
      ok(await session.call("echo", { n: 1 }));
      await everyHistoryFails(hosts, /lock timeout/, 60_000);
      release.resolve();
      await holding;
      const runs = await until("both runs are listed", async () => {
        const all = await allRuns(balancer, "name=echo");
        return all.length === 2 ? all : undefined;
      });
      assert.deepEqual(runs.map((r) => (r.arguments as Msg).n).sort(), [0, 1]);
    } finally {
      release.resolve();
      await locker.end();
      await session.close();
    }
  },
);

fleetTest(
  "a frozen database server: calls go on, every host's history answers 503 within its bound, not a hang, and the runs are written once it thaws",
  async (fleet) => {
    const { balancer, hosts, pg } = fleet;
    const session = await a2eSession(balancer);
    try {
      ok(await session.call("echo", { n: 0 }));
      await until(
        "the first run is listed",
        async () =>
          (await allRuns(balancer, "name=echo")).length === 1
            ? true
            : undefined,
      );
      // Every process of the server stopped: connections stay open, the
      // kernel takes what the hosts send, nothing answers. A read waited
      // for ever (the hosts' default bound is 30 s).
      await pg.freeze();
      ok(await session.call("echo", { n: 1 }));
      // The bound's own error, or the next connection's timeout once the
      // host dropped the connections the server stopped answering.
      const error = /no answer in 30000 ms|CONNECT_TIMEOUT/;
      await everyHistoryFails(hosts, error, 120_000);
      pg.thaw();
      const runs = await until("both runs are listed", async () => {
        const all = await allRuns(balancer, "name=echo");
        return all.length === 2 ? all : undefined;
      });
      assert.deepEqual(runs.map((r) => (r.arguments as Msg).n).sort(), [0, 1]);
      ok(await session.call("echo", { n: 2 }));
      await until("a run after the thaw is listed", async () => {
        const all = await allRuns(balancer, "name=echo");
        return all.length === 3 ? all : undefined;
      });
    } finally {
      pg.thaw();
      await session.close();
    }
  },
);
