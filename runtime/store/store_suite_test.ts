// The run store's behaviour, once per engine: SQLite (embedded) and
// PostgreSQL (a throwaway cluster the test starts, see
// tests/support/postgres.ts). Both must answer alike.
import assert from "node:assert/strict";
import { testWithPostgres } from "../../tests/support/postgres.ts";
import { openPostgresStore } from "./postgres.ts";
import { openSqliteStore } from "./sqlite.ts";
import {
  CHILD_PAGE,
  childrenQuery,
  INTERRUPTED,
  type RunStore,
  type StoredEvent,
} from "./store.ts";
import { testRun as run } from "../../tests/support/runs.ts";

const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id);

/** The cases every engine passes, each on a fresh, empty store. */
const CASES: [string, (store: RunStore) => Promise<void>][] = [
  [
    "every field of a run is kept and read back as written: its detail, its page, its parent's children",
    async (store) => {
      // No field left at a default: a column the stores dropped or
      // swapped would read back as null, 0 or another field's value.
      const full = run(7, {
        parentId: "p",
        kind: "skill",
        toolkit: "kit",
        session: "s7",
        transport: "sse",
        tokenLabel: "token 2",
        owner: "sha256:0a0b0c0d",
        host: "h7",
        startedAt: 1.5,
        endedAt: 4.25,
        durationMs: 2.75,
        outcome: "tool_error",
        error: "it failed",
        summary: "half done",
        args: '{"a":1}',
        result: '{"b":2}',
        eventCount: 3,
        llmTurns: 4,
        inputTokens: 5,
        outputTokens: 6,
      });
      await store.write([{ run: run(6, { id: "p" }), events: [] }]);
      await store.write([{ run: full, events: [] }]);
      assert.deepEqual((await store.get("r7"))?.run, full);
      const [listed] = (await store.list({ name: "odd" })).runs;
      assert.deepEqual({ ...listed, cursor: undefined }, {
        ...full,
        cursor: undefined,
      });
      const { error: _e, summary: _s, args: _a, result: _r, ...brief } = full;
      assert.deepEqual((await store.get("p"))?.children, [brief]);
    },
  ],
  [
    "prune() over max_runs takes the runs of the owner holding most, never another's fair share",
    async (store) => {
      const b = "sha256:bbbbbbbb";
      const a = "sha256:aaaaaaaa";
      // B and the operator first (the oldest), then A floods: 40 runs
      // where 10 are kept in all.
      await store.write([
        ...[0, 1, 2].map((i) => ({ run: run(i, { owner: b }), events: [] })),
        ...[3, 4].map((i) => ({ run: run(i, { owner: null }), events: [] })),
      ]);
      for (let at = 5; at < 45; at += 10) {
        await store.write(Array.from({ length: 10 }, (_, i) => ({
          run: run(at + i, { owner: a }),
          events: [{ seq: 0, kind: "status", data: "{}", at: 0 }],
        })));
      }
      const now = 45;
      assert.equal(await store.prune({ maxRuns: 10, maxAgeDays: 30, now }), 35);
      assert.equal(await store.count(), 10);
      assert.deepEqual(ids(await store.list({ owner: b })), ["r2", "r1", "r0"]);
      assert.deepEqual(
        ids(await store.list({ limit: 500 })).filter((id) =>
          ["r3", "r4"].includes(id)
        ),
        ["r4", "r3"],
      );
      assert.deepEqual(ids(await store.list({ owner: a })), [
        "r44",
        "r43",
        "r42",
        "r41",
        "r40",
      ]);
      assert.equal(await store.get("r39"), null);
      // Within its share, nothing more of A's goes; the age limit still
      // takes anyone's.
      assert.equal(await store.prune({ maxRuns: 10, maxAgeDays: 30, now }), 0);
      assert.equal(
        await store.prune({ maxRuns: 10, maxAgeDays: 1, now: 86_400_003 }),
        3,
      );
      assert.deepEqual(ids(await store.list({ owner: b })), []);
    },
  ],
  [
    "prune() keeps a run and its children together: pruned with it, kept with it",
    async (store) => {
      const a = "sha256:aaaaaaaa";
      await store.write(Array.from({ length: 30 }, (_, i) => ({
        run: run(100 + i, { owner: "sha256:bbbbbbbb" }),
        events: [],
      })));
      // p is written running, then ten more runs, its children and p
      // finished (PostgreSQL keeps its first cursor, SQLite moves it on);
      // q's children and q are written at once, then five more.
      const child = (i: number, parentId: string) =>
        run(i, { owner: a, parentId });
      await store.write([{
        run: run(1, { owner: a, outcome: "running" }),
        events: [],
      }]);
      await store.write(Array.from({ length: 10 }, (_, i) => ({
        run: run(10 + i, { owner: a }),
        events: [],
      })));
      await store.write([
        ...[20, 21, 22].map((i) => ({ run: child(i, "r1"), events: [] })),
        { run: run(1, { owner: a, outcome: "ok" }), events: [] },
        ...[30, 31, 32].map((i) => ({ run: child(i, "r2"), events: [] })),
        { run: run(2, { owner: a }), events: [] },
      ]);
      await store.write(Array.from({ length: 2 }, (_, i) => ({
        run: run(40 + i, { owner: a }),
        events: [],
      })));
      // A: 1 + 10 + 3 + 1 + 3 + 1 + 2 = 21 runs, B 30; 18 kept: 9 each.
      await store.prune({ maxRuns: 18, maxAgeDays: 30, now: 50 });
      const kept = new Set(ids(await store.list({ owner: a, limit: 500 })));
      for (
        const [parent, children] of [["r1", [20, 21, 22]], ["r2", [
          30,
          31,
          32,
        ]]] as const
      ) {
        assert.deepEqual(
          children.map((i) => kept.has(`r${i}`)),
          children.map(() => kept.has(parent)),
          `${parent} and its children: ${[...kept]}`,
        );
      }
      // q ended last but two: it and its children are kept, over the share.
      assert.ok(kept.has("r2"));
      assert.equal(
        (await store.list({ owner: "sha256:bbbbbbbb" })).runs.length,
        9,
      );
    },
  ],
  [
    "prune() takes a run's grandchildren with it, however deep",
    async (store) => {
      // A run_code call's tool call ran a skill that made a call: written
      // as each finished, the deepest first.
      await store.write([
        { run: run(3, { parentId: "r2" }), events: [] },
        { run: run(2, { parentId: "r1" }), events: [] },
        { run: run(1), events: [] },
        { run: run(4), events: [] },
        { run: run(5), events: [] },
      ]);
      assert.equal(
        await store.prune({ maxRuns: 2, maxAgeDays: 30, now: 9 }),
        3,
      );
      assert.deepEqual(ids(await store.list({})), ["r5", "r4"]);
    },
  ],
  [
    "prune() keeps the newest max_runs and drops runs older than max_age_days",
    async (store) => {
      const now = 100 * 86_400_000;
      await store.write(Array.from({ length: 20 }, (_, i) => ({
        run: run(i, { endedAt: now - (20 - i) * 3_600_000 }),
        events: [{ seq: 0, kind: "status", data: "{}", at: 0 }],
      })));
      assert.equal(await store.prune({ maxRuns: 15, maxAgeDays: 30, now }), 5);
      assert.equal(await store.count(), 15);
      assert.equal(await store.get("r4"), null);
      assert.equal((await store.get("r5"))?.events.length, 1);
      assert.equal(
        await store.prune({ maxRuns: 100, maxAgeDays: 10 / 24, now }),
        5,
      );
      assert.equal(ids(await store.list({})).at(-1), "r10");
    },
  ],
  [
    "list() takes a fractional limit or cursor (the console passes the query's)",
    async (store) => {
      await store.write([1, 2, 3].map((i) => ({ run: run(i), events: [] })));
      const page = await store.list({ limit: 1.5 });
      assert.deepEqual(ids(page), ["r3"]);
      assert.deepEqual(ids(await store.list({ before: page.next! })), [
        "r2",
        "r1",
      ]);
      // A fractional cursor (hand-written in a URL) reads as the next whole one.
      assert.deepEqual(ids(await store.list({ before: page.next! - 0.5 })), [
        "r2",
        "r1",
      ]);
    },
  ],
  [
    "a cursor past any run, or a NUL in a filter or an id, is read, not a 503",
    async (store) => {
      await store.write([1, 2].map((i) => ({ run: run(i), events: [] })));
      // Both come from a URL (`?before=1e300`, `/runs/a%00b`): PostgreSQL
      // refused them (BIGINT out of range, NUL in text), and the console
      // answered 503 as if the store were down.
      assert.deepEqual(ids(await store.list({ before: 1e300 })), ["r2", "r1"]);
      assert.deepEqual(ids(await store.list({ before: -1e300 })), []);
      assert.deepEqual(ids(await store.list({ name: "o\u0000dd" })), []);
      assert.equal(await store.get("r\u00001"), null);
      // `/api/stats?window=1e300` and `?window=0.0001`, as the console asks.
      assert.equal((await store.timings(-1e303)).length, 2);
      assert.equal((await store.timings(1.5)).length, 1);
    },
  ],
  [
    "list() filters by name, outcome, kind and session, newest first, with a cursor",
    async (store) => {
      await store.write(Array.from({ length: 10 }, (_, i) => ({
        run: run(i, { session: i < 5 ? "a" : "b" }),
        events: [],
      })));
      const odd = await store.list({ name: "odd", limit: 3 });
      assert.deepEqual(ids(odd), ["r9", "r7", "r5"]);
      assert.deepEqual(
        ids(await store.list({ name: "odd", before: odd.next! })),
        ["r3", "r1"],
      );
      assert.deepEqual(ids(await store.list({ outcome: "error" })), [
        "r9",
        "r6",
        "r3",
        "r0",
      ]);
      assert.deepEqual(
        ids(await store.list({ outcome: "timeout", name: "even" })),
        ["r6", "r0"],
      );
      assert.deepEqual(ids(await store.list({ session: "a", name: "odd" })), [
        "r3",
        "r1",
      ]);
      assert.equal((await store.list({ kind: "skill" })).runs.length, 0);
      assert.equal((await store.list({ limit: 10 })).next, null);
    },
  ],
  ["a write that fails leaves nothing half-written", async (store) => {
    await store.write([{ run: run(1), events: [] }]);
    const broken = { ...run(2), args: null as unknown as string };
    await assert.rejects(async () =>
      await store.write([{ run: run(3), events: [] }, {
        run: broken,
        events: [],
      }])
    );
    assert.deepEqual(ids(await store.list({})), ["r1"]);
  }],
  [
    "with an owner, list(), get() and timings() see that owner's runs only",
    async (store) => {
      await store.write(Array.from({ length: 6 }, (_, i) => ({
        run: run(i, {
          owner: i < 2 ? null : i % 2 ? "sha256:0000000b" : "sha256:0000000a",
          parentId: i === 5 ? "r3" : null,
        }),
        events: [],
      })));
      const a = { owner: "sha256:0000000a" } as const;
      assert.deepEqual(ids(await store.list({ owner: a.owner })), ["r4", "r2"]);
      const page = await store.list({ owner: a.owner, limit: 1 });
      assert.deepEqual(
        ids(await store.list({ owner: a.owner, before: page.next! })),
        ["r2"],
      );
      assert.deepEqual(
        ids(await store.list({ owner: a.owner, name: "odd" })),
        [],
      );
      assert.equal((await store.list({})).runs.length, 6);
      assert.equal(await store.get("r3", a), null);
      assert.equal(await store.get("r0", a), null, "no owner: admins only");
      assert.equal((await store.get("r4", a))?.run.owner, "sha256:0000000a");
      assert.equal((await store.get("r0", "all"))?.run.owner, null);
      assert.deepEqual(
        (await store.get("r3", { owner: "sha256:0000000b" }))?.children.map((
          c,
        ) => c.id),
        ["r5"],
      );
      assert.deepEqual(
        (await store.timings(0, a)).map((t) => t.durationMs),
        [2, 4],
      );
      assert.equal((await store.timings(0)).length, 6);
    },
  ],
  [
    "get() carries one page of a run's children, children() pages the rest",
    async (store) => {
      // A run_code run making code.max_calls (1,000) inner calls, each
      // with arguments and a result near the 16 KiB cap.
      const big = JSON.stringify("x".repeat(16_000));
      const kids = Array.from({ length: 1000 }, (_, i) => ({
        run: run(i + 1, {
          parentId: "r0",
          startedAt: 1000 + Math.floor(i / 2),
          args: big,
          result: big,
          error: "e".repeat(4000),
        }),
        events: [],
      }));
      await store.write([{ run: run(0), events: [] }]);
      // Written in reverse, so the store's own order (its cursor) is not
      // the start order the pages follow.
      for (let i = 1000; i > 0; i -= 250) {
        await store.write(kids.slice(i - 250, i).reverse());
      }
      const detail = (await store.get("r0"))!;
      assert.equal(detail.children.length, CHILD_PAGE);
      assert.equal(detail.childCount, 1000);
      assert.ok(detail.childrenNext);
      assert.ok(
        detail.children.every((c) => !("args" in c) && !("result" in c)),
        "children are summaries",
      );
      const seen = detail.children.map((c) => c.id);
      let next: string | null = detail.childrenNext;
      while (next !== null) {
        const page = await store.children("r0", { after: next, limit: 300 });
        assert.ok(page.children.length <= CHILD_PAGE);
        seen.push(...page.children.map((c) => c.id));
        next = page.next;
      }
      // Start order, ties in the store's order (written later: after).
      const order = kids.map((k) => k.run.id);
      for (let i = 0; i < order.length; i += 2) {
        [order[i], order[i + 1]] = [order[i + 1]!, order[i]!];
      }
      assert.deepEqual(seen, order, "start order, each once");
      // Another owner's children are neither shown nor counted.
      await store.write([{
        run: run(2000, { parentId: "r0", owner: "sha256:0000000c" }),
        events: [],
      }]);
      const mine = (await store.get("r0", { owner: "sha256:0000000c" }))!;
      assert.equal(mine, null, "r0 is the operator's");
      const page = await store.children("r0", { limit: 5 }, {
        owner: "sha256:0000000c",
      });
      assert.deepEqual(page.children.map((c) => c.id), ["r2000"]);
      assert.equal(page.next, null);
      assert.equal((await store.get("r0"))?.childCount, 1001);
      assert.throws(() => childrenQuery({ after: "x" }), RangeError);
    },
  ],
  [
    "a run and its events, files and host read back as written",
    async (store) => {
      const bytes = new Uint8Array([0, 1, 2, 255]);
      await store.write([{
        run: run(7, { host: "box:8080", result: '{"n":1}', inputTokens: 12 }),
        events: [
          { seq: 0, kind: "progress", data: '{"pct":50}', at: 10 },
          { seq: 1, kind: "status", data: '{"message":"x"}', at: 11 },
        ],
        files: [
          { name: "a/out.bin", size: 4, data: bytes, note: null },
          { name: "a/big", size: 9e6, data: null, note: "over the cap" },
        ],
      }]);
      const detail = (await store.get("r7"))!;
      assert.equal(detail.run.host, "box:8080");
      assert.equal(detail.run.result, '{"n":1}');
      assert.equal(detail.run.inputTokens, 12);
      assert.deepEqual(
        detail.events.map((e) => [e.seq, e.kind, e.data, e.at]),
        [
          [0, "progress", '{"pct":50}', 10],
          [1, "status", '{"message":"x"}', 11],
        ],
      );
      assert.deepEqual(detail.files?.map((f) => [f.name, f.size, f.note]), [
        ["a/out.bin", 4, null],
        ["a/big", 9e6, "over the cap"],
      ]);
      // The detail lists the files, their content is read one at a time.
      assert.deepEqual(
        detail.files?.map((f) => [f.kept, f.keptBytes, f.binary, "data" in f]),
        [[true, 4, true, false], [false, 0, false, false]],
      );
      assert.deepEqual([...(await store.file("r7", 0))!.data!], [0, 1, 2, 255]);
      assert.equal((await store.file("r7", 1))!.data, null);
      assert.equal(await store.file("r7", 2), null);
      assert.equal(await store.file("r8", 0), null);
      assert.equal(
        await store.file("r7", 0, { owner: "sha256:0000000c" }),
        null,
      );
      assert.equal(await store.file("r7", 2 ** 40), null);
    },
  ],
  [
    "a run written running is replaced when it finishes; running runs stay out of errors and timings",
    async (store) => {
      await store.write([{ run: run(1, { outcome: "running" }), events: [] }]);
      assert.equal((await store.get("r1"))?.run.outcome, "running");
      assert.deepEqual(ids(await store.list({ outcome: "error" })), []);
      assert.equal((await store.timings(0)).length, 0);
      await store.write([{
        run: run(1, { outcome: "ok", durationMs: 5 }),
        events: [{ seq: 0, kind: "status", data: "{}", at: 1 }],
      }]);
      const detail = (await store.get("r1"))!;
      assert.equal(detail.run.outcome, "ok");
      assert.equal(detail.events.length, 1);
      assert.equal(await store.count(), 1);
      assert.deepEqual((await store.timings(0)).map((t) => t.durationMs), [5]);
      // Both in one batch: the last one wins.
      await store.write([
        { run: run(2, { outcome: "running" }), events: [] },
        { run: run(2, { outcome: "ok" }), events: [] },
      ]);
      assert.equal((await store.get("r2"))?.run.outcome, "ok");
    },
  ],
  [
    "a batch of many runs is written in its order: cursors follow it and a run's later write wins",
    async (store) => {
      // 70 writes: more than one multi-row statement, and a remainder.
      const batch = Array.from({ length: 68 }, (_, i) => ({
        run: run(i),
        events: [] as StoredEvent[],
      }));
      // And events past one statement's worth, across runs.
      batch[10]!.events = Array.from({ length: 40 }, (_, seq) => ({
        seq,
        kind: "llm.token",
        data: `{"text":"${seq}"}`,
        at: seq,
      }));
      batch[11]!.events = batch[10]!.events.slice(0, 30);
      batch[31] = { run: run(31, { outcome: "running" }), events: [] };
      batch.splice(33, 0, { run: run(31, { outcome: "ok" }), events: [] });
      batch.push({
        run: run(67, { outcome: "ok", durationMs: 99 }),
        events: [],
      });
      await store.write(batch);
      assert.equal(await store.count(), 68);
      assert.equal((await store.get("r31"))?.run.outcome, "ok");
      assert.equal((await store.get("r67"))?.run.durationMs, 99);
      assert.deepEqual(
        (await store.get("r10"))?.events.map((e) => [e.seq, e.data]),
        batch[10]!.events.map((e) => [e.seq, e.data]),
      );
      assert.equal((await store.get("r11"))?.events.length, 30);
      // (A run written again moves to the end on SQLite, not on
      // PostgreSQL: leave those out.)
      const others = (list: string[]) =>
        list.filter((id) => id !== "r31" && id !== "r67");
      assert.deepEqual(
        others(ids(await store.list({ limit: 500 }))),
        others(batch.map((w) => w.run.id)).reverse(),
      );
      const broken = { ...run(100), args: null as unknown as string };
      await assert.rejects(async () =>
        await store.write([
          ...Array.from({ length: 40 }, (_, i) => ({
            run: run(200 + i),
            events: [],
          })),
          { run: broken, events: [] },
        ])
      );
      assert.equal(await store.count(), 68);
    },
  ],
  [
    "interrupt() marks a host's own running runs interrupted, no other's",
    async (store) => {
      await store.write([
        { run: run(1, { outcome: "running", host: "h1" }), events: [] },
        { run: run(2, { outcome: "running", host: "h2" }), events: [] },
        { run: run(4, { outcome: "ok", host: "h1" }), events: [] },
      ]);
      assert.equal(await store.interrupt("h1"), 1);
      const r1 = (await store.get("r1"))!.run;
      assert.equal(r1.outcome, "interrupted");
      assert.equal(r1.error, INTERRUPTED);
      assert.equal((await store.get("r2"))?.run.outcome, "running");
      assert.equal((await store.get("r4"))?.run.outcome, "ok");
      assert.deepEqual(ids(await store.list({ outcome: "error" })), ["r1"]);
      assert.equal(await store.interrupt("h1"), 0);
    },
  ],
];

Deno.test("the SQLite store", async (t) => {
  for (const [name, check] of CASES) {
    await t.step(name, async () => {
      const store = openSqliteStore(":memory:");
      try {
        await check(store);
      } finally {
        store.close();
      }
    });
  }
});

testWithPostgres("the PostgreSQL store", async (pg, t) => {
  for (const [name, check] of CASES) {
    await t.step(name, async () => {
      const store = await openPostgresStore(await pg.database());
      try {
        await check(store);
      } finally {
        await store.close();
      }
    });
  }
});
