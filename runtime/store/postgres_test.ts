// What only the PostgreSQL store does: a versioned schema hosts migrate
// together, NOTIFY of other hosts' runs, and a database that goes away
// and comes back while runs are recorded. Against a throwaway cluster.
import assert from "node:assert/strict";
import postgres from "postgres";
import { testWithPostgres } from "../../tests/support/postgres.ts";
import {
  isDriverError,
  lazyPostgresStore,
  openPostgresStore,
  SCHEMA_VERSION,
} from "./postgres.ts";
import {
  type RunCounters,
  RunRecorder,
  type RunRecorderOptions,
} from "./recorder.ts";
import type { FleetChange } from "./store.ts";
import { addRun, startRun, testRun } from "../../tests/support/runs.ts";

// A recorder writing to the database at `url` as host `h1`, what it logs
// and counts kept; `options` replace any of its options.
function recorderOn(url: string, options: Partial<RunRecorderOptions> = {}) {
  const lines: string[] = [];
  const c = counters();
  const recorder = new RunRecorder({
    store: lazyPostgresStore(url),
    host: "h1",
    counters: c,
    log: (l) => lines.push(l),
    ...options,
  });
  return { recorder, lines, c };
}

function counters(): RunCounters & { errors: number } {
  const c = {
    errors: 0,
    finished() {},
    llmTurn() {},
    llmTokens() {},
    eventsDropped() {},
    storeError() {
      c.errors++;
    },
  };
  return c;
}

testWithPostgres(
  "hosts opening one database together migrate it once; a newer schema is refused",
  async (pg) => {
    const url = await pg.database();
    const stores = await Promise.all(
      [1, 2, 3].map(() => openPostgresStore(url)),
    );
    const sql = postgres(url, { onnotice: () => {} });
    try {
      const rows = await sql`SELECT version FROM skillbox_schema`;
      assert.deepEqual(rows.map((r) => r.version), [SCHEMA_VERSION]);
      await sql`UPDATE skillbox_schema SET version = ${SCHEMA_VERSION + 1}`;
      await assert.rejects(
        () => openPostgresStore(url),
        new RegExp(
          `schema is version ${
            SCHEMA_VERSION + 1
          }, this skillbox knows up to ${SCHEMA_VERSION}`,
        ),
      );
    } finally {
      await sql.end();
      for (const s of stores) await s.close();
    }
  },
);

testWithPostgres(
  "a rewritten run's files are replaced; prune() deletes its runs' events and files, no other run's",
  async (pg) => {
    const url = await pg.database();
    const store = await openPostgresStore(url);
    const sql = postgres(url, { onnotice: () => {} });
    try {
      const file = (i: number, name = `f${i}`) => ({
        name,
        size: 1,
        data: new Uint8Array([i]),
        note: null,
      });
      await store.write(Array.from({ length: 6 }, (_, i) => ({
        run: testRun(i),
        events: [
          { seq: 0, kind: "status", data: "{}", at: i },
          { seq: 1, kind: "status", data: "{}", at: i },
        ],
        files: [file(i)],
      })));
      // Written again with its files: they replace the earlier ones.
      await store.write([{
        run: testRun(5, { outcome: "ok" }),
        events: [{ seq: 0, kind: "status", data: "{}", at: 5 }],
        files: [file(5, "g5")],
      }]);
      assert.equal(
        await store.prune({ maxRuns: 2, maxAgeDays: 30, now: 10 }),
        4,
      );
      const left = async (table: string) =>
        (await sql`SELECT run_id, count(*)::int AS n FROM ${
          sql(table)
        } GROUP BY run_id ORDER BY run_id`).map((r) => `${r.run_id}:${r.n}`);
      assert.deepEqual(await left("skillbox_events"), ["r4:2", "r5:1"]);
      assert.deepEqual(await left("skillbox_files"), ["r4:1", "r5:1"]);
      const [g5] = await sql`SELECT name FROM skillbox_files
        WHERE run_id = 'r5'`;
      assert.equal(g5?.name, "g5");
    } finally {
      await sql.end();
      await store.close();
    }
  },
);

testWithPostgres(
  "follow() hears the runs other hosts start and finish, not its own",
  async (pg) => {
    const url = await pg.database();
    const a = await openPostgresStore(url);
    const b = await openPostgresStore(url);
    const heard: FleetChange[] = [];
    let wake = () => {};
    const unfollow = a.follow("h1", (change) => {
      heard.push(change);
      wake();
    });
    try {
      const until = async (n: number) => {
        while (heard.length < n) {
          await new Promise<void>((resolve) => wake = resolve);
        }
      };
      const record = (id: string, host: string, outcome: string) => ({
        run: addRun(id, { host, outcome }),
        events: [],
      });
      // LISTEN is set up asynchronously: write until the first one is heard.
      let n = 0;
      while (heard.length === 0) {
        await b.write([record(`warm${n++}`, "h2", "ok")]);
        await Promise.race([
          until(1),
          new Promise((resolve) => setTimeout(resolve, 200)),
        ]);
      }
      heard.length = 0;
      await a.write([record("mine", "h1", "running")]);
      await b.write([record("x", "h2", "running")]);
      await until(1);
      await b.write([record("x", "h2", "ok")]);
      await until(2);
      assert.deepEqual(heard.map((h) => [h.type, h.run.id, h.run.outcome]), [
        ["started", "x", "running"],
        ["finished", "x", "ok"],
      ]);
      assert.equal(heard[0]!.run.host, "h2");
      // A run first written finished (shorter than a flush) is told as
      // started, then finished; so is each of a batch, starts first.
      heard.length = 0;
      // (An id with a quote and a backslash: arrays go as text literals.)
      await b.write([record('y"\\', "h2", "ok")]);
      await b.write([record("z1", "h2", "running"), record("z1", "h2", "ok")]);
      // A last run, heard after the others whatever they told.
      await b.write([record("end", "h2", "running")]);
      while (!heard.some((h) => h.run.id === "end")) {
        await until(heard.length + 1);
      }
      assert.deepEqual(heard.map((h) => [h.type, h.run.id]), [
        ["started", 'y"\\'],
        ["finished", 'y"\\'],
        ["started", "z1"],
        ["finished", "z1"],
        ["started", "end"],
      ]);
      // A host that restarts ends its left runs in the others' views.
      heard.length = 0;
      assert.equal(await b.interrupt("h2"), 1);
      await until(1);
      assert.deepEqual(heard.map((h) => [h.type, h.run.id, h.run.outcome]), [
        ["finished", "end", "interrupted"],
      ]);
      // A notice not of ours (JSON `null`, from any client of the
      // database) is ignored: the runs after it are still heard.
      heard.length = 0;
      const other = postgres(url, { onnotice: () => {} });
      try {
        await other`SELECT pg_notify('skillbox_runs', 'null')`;
      } finally {
        await other.end();
      }
      await b.write([record("after", "h2", "running")]);
      await until(1);
      assert.deepEqual(heard.map((h) => [h.type, h.run.id]), [
        ["started", "after"],
      ]);
    } finally {
      unfollow();
      await a.close();
      await b.close();
    }
  },
);

testWithPostgres(
  "hosts stamp themselves alive by the database's clock and leave when they stop",
  async (pg) => {
    const url = await pg.database();
    const a = await openPostgresStore(url);
    try {
      await a.beat("h1");
      await a.beat("h2");
      const sql = postgres(url, { onnotice: () => {} });
      try {
        // h2 beat a minute ago: its age says so, whatever the hosts' clocks.
        await sql`UPDATE skillbox_hosts SET seen_at = now() - interval '60 seconds'
          WHERE host = 'h2'`;
      } finally {
        await sql.end();
      }
      const beats = await a.hosts();
      assert.deepEqual(beats.map((b) => b.host), ["h1", "h2"]);
      assert.ok(beats[0]!.ageMs < 5_000, JSON.stringify(beats));
      assert.ok(beats[1]!.ageMs >= 60_000, JSON.stringify(beats));
      await a.beat("h1", true);
      assert.deepEqual((await a.hosts()).map((b) => b.host), ["h2"]);
      // A recorder beats at once and leaves when it closes.
      const { recorder } = recorderOn(url, { host: "h3" });
      await recorder.flush();
      while (!(await a.hosts()).some((b) => b.host === "h3")) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await recorder.close();
      assert.deepEqual((await a.hosts()).map((b) => b.host), ["h2"]);
    } finally {
      await a.close();
    }
  },
);

testWithPostgres(
  "two live hosts given one host.id each hear of the other; a restarted one does not",
  async (pg) => {
    const url = await pg.database();
    const a = await openPostgresStore(url);
    try {
      // The store: a stamp another instance made, with its age.
      assert.equal(await a.beat("h", false, "first"), null);
      const age = await a.beat("h", false, "second");
      assert.ok(typeof age === "number" && age < 5_000, String(age));
      assert.equal(await a.beat("h", false, "second"), null);
      // Two recorders with one host id, each beating every 2 s: each says
      // so once its beats have found the other's twice in a row.
      const lines: string[] = [];
      const one = recorderOn(url, {
        host: "twin",
        log: (l) => lines.push(`one: ${l}`),
      }).recorder;
      const two = recorderOn(url, {
        host: "twin",
        log: (l) => lines.push(`two: ${l}`),
      }).recorder;
      // Restarted in place: the same id, one instance at a time, says
      // nothing, though its first beat finds its predecessor's fresh.
      await a.beat("alone", false, "predecessor");
      const alone = recorderOn(url, {
        host: "alone",
        log: (l) => lines.push(`alone: ${l}`),
      }).recorder;
      try {
        const said = (who: string) =>
          lines.some((l) => l.startsWith(`${who}: Another live host`));
        const end = Date.now() + 30_000;
        while (!(said("one") && said("two")) && Date.now() < end) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(said("one") && said("two"), lines.join("\n"));
        assert.match(lines.find((l) => l.startsWith("one: "))!, /"twin"/);
        assert.ok(!said("alone"), lines.join("\n"));
      } finally {
        await one.close();
        await two.close();
        await alone.close();
      }
    } finally {
      await a.close();
    }
  },
);

testWithPostgres(
  "a database stopped and started while runs are recorded loses none and says so once",
  async (pg) => {
    const url = await pg.database();
    const { recorder, lines, c } = recorderOn(url);
    try {
      const finish = (i: number) => {
        const id = startRun(recorder, { args: { i } });
        recorder.finished(id, { outcome: "ok", result: i });
      };
      for (let i = 0; i < 10; i++) finish(i);
      await recorder.flush();
      await pg.stop();
      for (let i = 10; i < 60; i++) {
        finish(i);
        if (i % 10 === 0) await recorder.flush();
      }
      await recorder.flush();
      const reports = lines.filter((l) => /run store/.test(l));
      assert.equal(reports.length, 1, lines.join("\n"));
      assert.match(reports[0]!, /calls keep working/);
      assert.ok(c.errors >= 1);
      await pg.start();
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 60);
      assert.equal(recorder.lost, 0);
      assert.match(lines.at(-1)!, /written again/);
    } finally {
      await recorder.close();
    }
  },
);

testWithPostgres(
  "beyond what it may hold for a dead database, the recorder counts the runs it loses",
  async (pg) => {
    const url = await pg.database();
    const { recorder, c } = recorderOn(url, { maxPending: 5 });
    try {
      await pg.stop();
      for (let i = 0; i < 12; i++) {
        const id = startRun(recorder);
        recorder.finished(id, { outcome: "ok" });
        await recorder.flush();
      }
      assert.equal(recorder.lost, 7);
      await pg.start();
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 5);
      assert.ok(c.errors >= 7);
    } finally {
      await recorder.close();
    }
  },
);

testWithPostgres(
  "a host that restarts marks its own unfinished runs interrupted",
  async (pg) => {
    const url = await pg.database();
    const first = recorderOn(url).recorder;
    const other = recorderOn(url, { host: "h2" }).recorder;
    const mine = startRun(first, { name: "slow" });
    const theirs = startRun(other, { name: "slow" });
    await first.flush();
    await other.flush();
    // The first life ends without finishing its run (as a killed host).
    await first.close();
    const second = recorderOn(url).recorder;
    try {
      await second.flush();
      assert.equal((await second.store!.get(mine))?.run.outcome, "interrupted");
      assert.equal((await second.store!.get(theirs))?.run.outcome, "running");
      other.finished(theirs, { outcome: "ok" });
      await other.flush();
      assert.equal((await second.store!.get(theirs))?.run.outcome, "ok");
    } finally {
      await second.close();
      await other.close();
    }
  },
);

Deno.test("an error the PostgreSQL client drops does not end the host", async () => {
  // Opening a store holds the client's own uncatchable errors.
  const store = lazyPostgresStore("postgres://skillbox@127.0.0.1:1/none");
  try {
    const dropped = new TypeError(
      "Cannot read properties of undefined (reading 'replace')",
    );
    dropped.stack =
      "TypeError: Cannot read properties of undefined (reading 'replace')\n" +
      "    at queryError (file:///deno/npm/registry.npmjs.org/postgres/3.4.7/src/connection.js:389:48)";
    // As the client does: a rejected promise nobody awaits, and a throw
    // in a timer callback (a socket listener in the client).
    Promise.reject(dropped);
    const thrown = Promise.withResolvers<void>();
    setTimeout(() => {
      thrown.resolve();
      throw dropped;
    }, 0);
    await thrown.promise;
    // Both are past: a turn of the event loop later the test still runs.
    await new Promise((r) => setTimeout(r, 0));
  } finally {
    await store.close();
  }
});

testWithPostgres(
  "a run whose texts hold a NUL character is written, not a batch refused for ever",
  async (pg) => {
    const url = await pg.database();
    const { recorder } = recorderOn(url);
    try {
      // A client names a tool that does not exist; a tool's error says
      // what its module threw. PostgreSQL's text refuses NUL: the whole
      // batch failed, was retried each second, and every later run with
      // it, for every token, until the held runs were lost.
      const bad = startRun(recorder, { name: "a\u0000b" });
      recorder.finished(bad, {
        outcome: "unknown_tool",
        error: 'Unknown tool "a\u0000b"',
        summary: "\u0000",
      });
      const good = startRun(recorder);
      recorder.finished(good, { outcome: "ok" });
      await recorder.flush();
      assert.equal(recorder.lost, 0);
      assert.equal(await recorder.store!.count(), 2);
      const run = (await recorder.store!.get(bad))!.run;
      assert.equal(run.name, "a\uFFFDb");
      assert.equal(run.error, 'Unknown tool "a\uFFFDb"');
    } finally {
      await recorder.close();
    }
  },
);

testWithPostgres(
  "token counts an LLM endpoint answers as fractions or past BIGINT are written as whole numbers",
  async (pg) => {
    const url = await pg.database();
    const { recorder } = recorderOn(url);
    try {
      // The usage is the endpoint's answer, as it sent it: `1.5` or `1e30`
      // into BIGINT refused the whole batch, retried for ever.
      const odd = startRun(recorder, { kind: "skill", name: "s" });
      recorder.event(odd, {
        kind: "llm.started",
        seq: 0,
        data: { provider: "p" },
      });
      recorder.event(odd, {
        kind: "llm.completed",
        seq: 1,
        data: { usage: { input_tokens: 1.5, output_tokens: 1e30 } },
      });
      recorder.finished(odd, { outcome: "ok" });
      const good = startRun(recorder);
      recorder.finished(good, { outcome: "ok" });
      await recorder.flush();
      assert.equal(recorder.lost, 0);
      assert.equal(await recorder.store!.count(), 2);
      const run = (await recorder.store!.get(odd))!.run;
      assert.equal(run.inputTokens, 1);
      assert.ok(Number.isSafeInteger(run.outputTokens), `${run.outputTokens}`);
    } finally {
      await recorder.close();
    }
  },
);

testWithPostgres(
  "a host whose clock runs ahead prunes by the database's clock, not the fleet's recent runs",
  async (pg) => {
    const url = await pg.database();
    const store = await openPostgresStore(url);
    const realNow = Date.now;
    try {
      // A run another host (its clock right) finished just now.
      const endedAt = realNow();
      await store.write([{
        run: addRun("recent", {
          startedAt: endedAt - 5,
          endedAt,
          durationMs: 5,
        }),
        events: [],
      }]);
      // This host's clock is 30 days ahead; it keeps 7 days, as the
      // recorder asks (no `now`: the store's clock).
      Date.now = () => realNow() + 30 * 86_400_000;
      const pruned = await store.prune({ maxRuns: 100, maxAgeDays: 7 });
      Date.now = realNow;
      assert.equal(pruned, 0);
      assert.equal(await store.count(), 1);
      // By the database's clock a run ended 8 days ago is past 7 days.
      await store.write([{
        run: {
          ...(await store.get("recent"))!.run,
          id: "old",
          endedAt: endedAt - 8 * 86_400_000,
        },
        events: [],
      }]);
      assert.equal(await store.prune({ maxRuns: 100, maxAgeDays: 7 }), 1);
      assert.equal(await store.get("old"), null);
    } finally {
      Date.now = realNow;
      await store.close();
    }
  },
);

testWithPostgres(
  "a statement waiting on a lock gives up: the history answers an error and runs are held, not hung",
  async (pg) => {
    const url = await pg.database();
    const { recorder, lines, c } = recorderOn(url);
    // A guard against a hang, not a timing: the test fails instead.
    const unhung = async <T>(what: string, promise: Promise<T>) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} hung`)), 60_000);
      });
      try {
        return await Promise.race([promise, hung]);
      } finally {
        clearTimeout(timer);
      }
    };
    const finish = () => {
      const id = startRun(recorder);
      recorder.finished(id, { outcome: "ok" });
    };
    const locker = postgres(url, { onnotice: () => {}, max: 1 });
    const release = Promise.withResolvers<void>();
    try {
      finish();
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 1);
      // An operator's LOCK TABLE, a migration's ALTER queued behind a
      // long transaction, a host frozen mid-write: the table is locked
      // and stays so. Reads and writes waited for ever.
      const locked = Promise.withResolvers<void>();
      const holding = locker.begin(async (tx) => {
        await tx`LOCK TABLE skillbox_runs IN ACCESS EXCLUSIVE MODE`;
        locked.resolve();
        await release.promise;
      });
      holding.catch(locked.reject);
      await locked.promise;
      finish();
      await unhung(
        "a read and a write of a locked table",
        Promise.all([
          assert.rejects(
            async () => await recorder.store!.list({}),
            /lock timeout/,
          ),
          recorder.flush(),
        ]),
      );
      assert.ok(c.errors >= 1);
      assert.match(
        lines.join("\n"),
        /Cannot write the run store: .*lock timeout/,
      );
      release.resolve();
      await holding;
      // Held meanwhile, written once the lock is gone.
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 2);
      assert.equal(recorder.lost, 0);
    } finally {
      release.resolve();
      await locker.end();
      await recorder.close();
    }
  },
);

testWithPostgres(
  "follow() tells the runs that finished while its LISTEN connection was down",
  async (pg) => {
    const url = await pg.database();
    const name = new URL(url).pathname.slice(1);
    const a = await openPostgresStore(url);
    const b = await openPostgresStore(url);
    const admin = postgres(pg.url, { onnotice: () => {}, max: 1 });
    const heard: string[] = [];
    let wake = () => {};
    const unfollow = a.follow("h1", (change) => {
      heard.push(`${change.type} ${change.run.id} ${change.run.outcome}`);
      wake();
    });
    const hear = async (line: string) => {
      while (!heard.includes(line)) {
        await new Promise<void>((resolve) => wake = resolve);
      }
    };
    const record = (id: string, outcome: string) => ({
      run: addRun(id, { outcome }),
      events: [],
    });
    try {
      // LISTEN is set up asynchronously: write until the first is heard.
      for (let n = 0; heard.length === 0; n++) {
        await b.write([record(`warm${n}`, "ok")]);
        await Promise.race([
          hear(`finished warm${n} ok`),
          new Promise((resolve) => setTimeout(resolve, 200)),
        ]);
      }
      await b.write([record("x", "running")]);
      await hear("started x running");
      // h1's LISTEN connection drops (a network blip, a proxy's idle
      // cut) and cannot come back yet, while h2, connected, finishes x.
      await admin.unsafe(
        `ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`,
      );
      const [cut] = await admin`SELECT pg_terminate_backend(pid, 10000) AS done
        FROM pg_stat_activity WHERE datname = ${name}
        AND query ILIKE 'listen %'`;
      assert.equal(cut?.done, true);
      await b.write([record("x", "ok")]);
      await b.write([record("z", "running")]);
      await admin.unsafe(
        `ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`,
      );
      // Once h1 listens again: x is over in its viewers' eyes too, z
      // runs, and later runs are heard as before.
      await b.write([record("y", "running")]);
      for (let n = 0; !heard.includes("started y running"); n++) {
        await Promise.race([
          hear("started y running"),
          new Promise((resolve) => setTimeout(resolve, 200)),
        ]);
        if (!heard.includes("started y running")) {
          await b.write([record("y", "running")]);
        }
      }
      const after = heard.slice(heard.indexOf("started x running"))
        .filter((h) => !/warm/.test(h));
      assert.equal(after[0], "started x running");
      assert.deepEqual(after.slice(1, 3).sort(), [
        "finished x ok",
        "started z running",
      ]);
      // (y may have been written more than once before it was heard.)
      assert.deepEqual([...new Set(after.slice(3))], ["started y running"]);
    } finally {
      unfollow();
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
        .catch(() => {});
      await admin.end();
      await a.close();
      await b.close();
    }
  },
);

testWithPostgres(
  "follow() begun while the database is unreachable hears each run once when it is back",
  async (pg) => {
    const url = await pg.database();
    // A door in front of the database: while shut it answers every
    // connection as a server still starting up does (FATAL 57P03),
    // counting them; once open it passes them through.
    const field = (code: string, text: string) => `${code}${text}\0`;
    const body = new TextEncoder().encode(
      field("S", "FATAL") + field("V", "FATAL") + field("C", "57P03") +
        field("M", "the database system is starting up") + "\0",
    );
    const refusal = new Uint8Array(5 + body.length);
    refusal[0] = 0x45; // 'E', an ErrorResponse
    new DataView(refusal.buffer).setInt32(1, 4 + body.length);
    refusal.set(body, 5);
    const door = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    let open = false;
    let cut = 0;
    let cutWake = () => {};
    const pipes: Promise<unknown>[] = [];
    const conns: Deno.Conn[] = [];
    const serving = (async () => {
      for await (const conn of door) {
        conns.push(conn);
        if (!open) {
          // After the client's startup message, as a server would.
          await conn.read(new Uint8Array(1024)).catch(() => null);
          await conn.write(refusal).catch(() => 0);
          conn.close();
          cut++;
          cutWake();
          continue;
        }
        const db = await Deno.connect({ hostname: "127.0.0.1", port: pg.port });
        conns.push(db);
        pipes.push(
          conn.readable.pipeTo(db.writable).catch(() => {}),
          db.readable.pipeTo(conn.writable).catch(() => {}),
        );
      }
    })();
    const behind = new URL(url);
    behind.port = String((door.addr as Deno.NetAddr).port);
    const a = lazyPostgresStore(behind.href);
    const b = await openPostgresStore(url);
    const heard: string[] = [];
    let wake = () => {};
    const unfollow = a.follow("h1", (change) => {
      heard.push(`${change.type} ${change.run.id}`);
      wake();
    });
    const record = (id: string) => ({ run: addRun(id), events: [] });
    try {
      // The LISTEN is tried, and tried again, while the door is shut.
      while (cut < 4) await new Promise<void>((r) => cutWake = r);
      open = true;
      // Once it listens, a run another host ran is heard.
      for (let n = 0; !heard.includes("finished r0"); n++) {
        if (n > 0) await new Promise((r) => setTimeout(r, 200));
        await b.write([record("r0")]);
      }
      // A notice's copies (one per listener the LISTEN holds for this
      // follow) are all told before the next notice's first.
      const hear = async (line: string) => {
        while (!heard.includes(line)) {
          await new Promise<void>((r) => wake = r);
        }
      };
      await b.write([record("end")]);
      await hear("finished end");
      await b.write([record("after")]);
      await hear("finished after");
      assert.deepEqual(heard.filter((h) => / end$/.test(h)), [
        "started end",
        "finished end",
      ]);
    } finally {
      unfollow();
      await a.close();
      await b.close();
      door.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // closed already
        }
      }
      await serving.catch(() => {});
      await Promise.all(pipes);
    }
  },
);

testWithPostgres(
  "a frozen server: a read fails with the store's own error, not a hang, and runs held meanwhile are written once it thaws",
  async (pg) => {
    const base = await pg.database();
    // A bound set low for the test; the default is 30 s.
    const url = `${base}?query_timeout=1500`;
    const { recorder, lines, c } = recorderOn(url);
    const other = await openPostgresStore(url);
    const heard: FleetChange[] = [];
    let wake = () => {};
    const unfollow = other.follow("h2", (change) => {
      heard.push(change);
      wake();
    });
    const finish = (n: number) => {
      const id = startRun(recorder, { name: `add${n}` });
      recorder.finished(id, { outcome: "ok" });
    };
    // What answers first: the store (a value or its own error), or a
    // guard far past the bound. The guard winning is the hang.
    const answer = <T>(promise: T | Promise<T>) =>
      Promise.race([
        Promise.resolve(promise).then(
          (value) => ({ value }),
          (error: Error) => ({ error }),
        ),
        new Promise<{ hung: true }>((resolve) =>
          AbortSignal.timeout(30_000).onabort = () => resolve({ hung: true })
        ),
      ]);
    // The server's side of the other host's LISTEN connection.
    const watcher = postgres(base, { onnotice: () => {}, max: 1 });
    // Its pid once it listens (a new one, not `gone`); a notice sent
    // before is never heard.
    const listening = async (gone?: number) => {
      for (let i = 0;; i++) {
        const pids = (await watcher`SELECT pid FROM pg_stat_activity
          WHERE query ILIKE 'listen %'`).map((r) => Number(r.pid));
        if (pids.length === 1 && pids[0] !== gone) return pids[0];
        assert.ok(i < 600, `no new LISTEN: ${pids}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      const before = await listening();
      finish(1);
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 1);
      while (!heard.some((h) => h.run.name === "add1")) {
        await new Promise<void>((resolve) => wake = resolve);
      }
      // Every process of the server stopped: the kernel still takes the
      // bytes sent, nothing answers them.
      await pg.freeze();
      finish(2);
      const [listed, got, flushed] = await Promise.all([
        answer(recorder.store!.list({})),
        answer(other.get("nothing")),
        answer(recorder.flush()),
      ]);
      assert.ok("error" in listed, `list(): ${JSON.stringify(listed)}`);
      assert.match(
        listed.error.message,
        /PostgreSQL gave no answer in 1500 ms/,
      );
      assert.ok("error" in got, `get(): ${JSON.stringify(got)}`);
      assert.ok(!("hung" in flushed), "the write hung");
      assert.ok(c.errors >= 1);
      assert.match(lines.join("\n"), /Cannot write the run store: /);
      pg.thaw();
      // The other host dropped its LISTEN connection with the rest and
      // listens again once the server answers.
      await listening(before);
      // Held meanwhile, written once the server answers; a new write and
      // a read go through, and the other host's live view hears again.
      finish(3);
      await recorder.flush();
      assert.equal(await recorder.store!.count(), 3);
      assert.equal((await recorder.store!.list({})).runs.length, 3);
      assert.equal(recorder.lost, 0);
      while (!heard.some((h) => h.run.name === "add3")) {
        await new Promise<void>((resolve) => wake = resolve);
      }
    } finally {
      pg.thaw();
      await watcher.end({ timeout: 1 });
      unfollow();
      await other.close();
      await recorder.close();
    }
  },
);

Deno.test("store.url's query_timeout must be milliseconds", () => {
  for (const bad of ["abc", "-1", "1.5", "", "9999999999"]) {
    assert.throws(
      () =>
        lazyPostgresStore(
          `postgres://skillbox@127.0.0.1:1/none?query_timeout=${bad}`,
        ),
      new RegExp(`query_timeout must be milliseconds, not "${bad}"`),
    );
  }
});

Deno.test("a store.url the client cannot read is refused, password hidden", () => {
  // The client's own error quotes the URL whole, password and all, to an
  // embedder's log; and, thrown from its files, it would be held as one of
  // its stray errors (isDriverError).
  let error: unknown;
  try {
    lazyPostgresStore("postgres://skillbox:pa/ss-word@127.0.0.1:1/runs");
  } catch (thrown) {
    error = thrown;
  }
  assert.ok(error instanceof Error, String(error));
  assert.match(
    error.message,
    /^Cannot use the run store: .*postgres:\/\/…@127\.0\.0\.1:1\/runs/,
  );
  assert.ok(!error.message.includes("ss-word"), error.message);
  assert.equal(isDriverError(error), false);
});
