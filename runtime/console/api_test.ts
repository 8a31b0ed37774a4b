import assert from "node:assert/strict";
import postgres from "postgres";
import { openRecorder, RunRecorder } from "../store/recorder.ts";
import { testWithPostgres } from "../../tests/support/postgres.ts";
import { openPostgresStore } from "../store/postgres.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import type { RunScope, RunStore } from "../store/store.ts";
import { type ConsoleSources, createApi, fileResponse } from "./api.ts";
import {
  addRun,
  countFileReads,
  emptyStore,
  startRun,
  testRun,
} from "../../tests/support/runs.ts";

// The API over a recorder, with no catalog, sessions or processes.
function apiOf(recorder: RunRecorder, more: Partial<ConsoleSources> = {}) {
  return createApi({
    recorder,
    catalog: () => Promise.reject(new Error("no catalog")),
    sessions: () => [],
    processes: () => [],
    ...more,
  });
}

Deno.test("/live is served no-store, over streamSSE's no-cache", async () => {
  const recorder = openRecorder({
    path: ":memory:",
    maxRuns: 10,
    maxAgeDays: 1,
  });
  const api = apiOf(recorder);
  const abort = new AbortController();
  const res = await api.request("/live", { signal: abort.signal });
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await reader.read()).value ?? "", /^event: hello\n/);
  abort.abort();
  await reader.cancel();
  await recorder.close();
});

Deno.test("/overview lists every other host: beating, gone, or only named by a run", async () => {
  const running = (id: string, host: string, owner = "sha256:aaaaaaaa") => ({
    ...addRun(id, {
      name: "nap",
      host,
      owner,
      endedAt: 1,
      durationMs: 0,
      outcome: "running",
    }),
    cursor: 1,
  });
  const runs = [
    running("r2", "h2"),
    running("r3", "h3", "sha256:bbbbbbbb"),
    running("r1", "h1"),
  ];
  const store = emptyStore({
    list: (query) => ({
      runs: runs.filter((r) => !query.owner || r.owner === query.owner),
      next: null,
    }),
    follow: () => () => {},
    beat() {},
    hosts: () => [
      { host: "h1", ageMs: 0 },
      { host: "h2", ageMs: 100 },
      { host: "h4", ageMs: 99_999 },
    ],
  });
  const recorder = new RunRecorder({ store, host: "h1" });
  let scope: RunScope = "all";
  const api = apiOf(recorder, { scope: () => scope });
  const view = await (await api.request("/overview")).json();
  assert.deepEqual(view.hosts, [
    { id: "h1", self: true, alive: true, last_seen_ms: 0, running: 0 },
    { id: "h2", self: false, alive: true, last_seen_ms: 100, running: 1 },
    { id: "h3", self: false, alive: false, last_seen_ms: null, running: 1 },
    { id: "h4", self: false, alive: false, last_seen_ms: 99_999, running: 0 },
  ]);
  assert.deepEqual(view.running.map((r: { id: string }) => r.id), ["r3", "r2"]);
  // A token that is no admin sees this host and those its own runs are on.
  scope = { owner: "sha256:bbbbbbbb" };
  const own = await (await api.request("/overview")).json();
  assert.deepEqual(own.hosts.map((h: { id: string }) => h.id), ["h1", "h3"]);
  assert.deepEqual(own.running.map((r: { id: string }) => r.id), ["r3"]);
  await recorder.close();
});

// A run_code run making code.max_calls (1,000) inner calls, each with
// arguments and a result near the 16 KiB cap: its detail was every child,
// whole, in one answer (about 35 MB).
async function manyChildren(store: RunStore): Promise<void> {
  const big = JSON.stringify("x".repeat(16_000));
  const child = (i: number) =>
    testRun(i, {
      id: `c${i}`,
      parentId: "p",
      name: "inc",
      startedAt: 1000 + i,
      endedAt: 1001 + i,
      durationMs: 1,
      outcome: "ok",
      args: big,
      result: big,
      eventCount: 0,
    });
  await store.write([{
    run: { ...child(-1), id: "p", parentId: null, name: "run_code" },
    events: [],
  }]);
  for (let i = 0; i < 1000; i += 250) {
    await store.write(
      Array.from(
        { length: 250 },
        (_, k) => ({ run: child(i + k), events: [] }),
      ),
    );
  }
  const recorder = new RunRecorder({ store, host: "h1" });
  const api = apiOf(recorder);
  try {
    const res = await api.request("/runs/p");
    const text = await res.text();
    assert.ok(text.length < 100_000, `the detail is ${text.length} bytes`);
    const detail = JSON.parse(text);
    assert.equal(detail.children.length, 100);
    assert.equal(detail.children_total, 1000);
    assert.equal(detail.children[0].arguments, undefined, "a summary");
    const seen: string[] = detail.children.map((c: { id: string }) => c.id);
    let next: string | null = detail.children_next;
    while (next !== null) {
      const page = await (await api.request(
        `/runs/p/children?after=${encodeURIComponent(next)}&limit=1000`,
      )).json();
      assert.ok(page.children.length <= 100);
      seen.push(...page.children.map((c: { id: string }) => c.id));
      next = page.next;
    }
    assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => `c${i}`));
    const bad = await api.request("/runs/p/children?after=nope");
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /cursor "nope"/);
  } finally {
    await recorder.close();
  }
}

Deno.test("a run's detail carries one page of its 1,000 children (SQLite)", async () => {
  await manyChildren(openSqliteStore(":memory:"));
});

testWithPostgres(
  "a run's detail carries one page of its 1,000 children (PostgreSQL)",
  async (pg) => {
    await manyChildren(await openPostgresStore(await pg.database()));
  },
);

// A run's kept files are up to 4 MiB (store.script_files_max_bytes) of a
// script's workspace: its detail and each download read every byte of
// them, to list names and sizes or to serve one.
async function keptFiles(inner: RunStore): Promise<void> {
  const MiB = 1 << 20;
  // Counts the file bytes each store method hands the API.
  const counted = countFileReads(inner);
  const store = counted.store;
  const bytes = (fill: number, size = MiB) => new Uint8Array(size).fill(fill);
  await store.write([{
    run: addRun("k", {
      kind: "skill",
      name: "scripted",
      transport: "websocket",
      host: "h1",
    }),
    events: [],
    files: [
      { name: "1/a.txt", size: MiB, data: bytes(0x61), note: null },
      { name: "1/b.txt", size: MiB, data: bytes(0x62), note: null },
      { name: "1/c.bin", size: MiB, data: bytes(0xff), note: null },
      { name: "1/empty", size: 0, data: bytes(0, 0), note: null },
      { name: "1/big", size: 9 * MiB, data: null, note: "not kept: over" },
    ],
  }]);
  const recorder = new RunRecorder({ store, host: "h1" });
  const api = apiOf(recorder);
  try {
    counted.read = 0;
    const detail = await (await api.request("/runs/k")).json();
    assert.deepEqual(
      detail.files.map((
        f: Record<string, unknown>,
      ) => [f.name, f.size, f.kept, f.kept_bytes, f.binary, f.content]),
      [
        ["1/a.txt", MiB, true, MiB, false, "files/0"],
        ["1/b.txt", MiB, true, MiB, false, "files/1"],
        ["1/c.bin", MiB, true, MiB, true, "files/2"],
        ["1/empty", 0, true, 0, false, "files/3"],
        ["1/big", 9 * MiB, false, 0, false, null],
      ],
    );
    assert.equal(counted.read, 0, "file bytes read to list the files");
    counted.read = 0;
    const one = await api.request("/runs/k/files/1");
    assert.equal(one.status, 200);
    assert.equal(one.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.deepEqual(new Uint8Array(await one.arrayBuffer()), bytes(0x62));
    assert.equal(counted.read, MiB, "file bytes read to serve one file");
    const binary = await api.request("/runs/k/files/2");
    assert.equal(
      binary.headers.get("content-type"),
      "application/octet-stream",
    );
    await binary.body?.cancel();
    assert.equal((await api.request("/runs/k/files/3")).status, 200);
    counted.read = 0;
    for (const missing of ["4", "5", "x", "01", "-1"]) {
      const res = await api.request(`/runs/k/files/${missing}`);
      assert.equal(res.status, 404, missing);
      await res.body?.cancel();
    }
    assert.equal((await api.request("/runs/nope/files/0")).status, 404);
    assert.equal(counted.read, 0);
  } finally {
    await recorder.close();
  }
}

Deno.test("a run's detail lists its files and a download reads one file's bytes (SQLite)", async () => {
  await keptFiles(openSqliteStore(":memory:"));
});

testWithPostgres(
  "a run's detail lists its files and a download reads one file's bytes (PostgreSQL)",
  async (pg) => {
    await keptFiles(await openPostgresStore(await pg.database()));
  },
);

Deno.test("a store that cannot be read is named to admins only: the driver's words carry its address and user", async () => {
  const down = () =>
    Promise.reject(
      new Error(
        'password authentication failed for user "skillbox" at 10.0.0.5:5432',
      ),
    );
  const store = {
    write: () => Promise.resolve(),
    list: down,
    get: down,
    hosts: down,
    interrupt: () => Promise.resolve(),
  } as unknown as RunStore;
  const recorder = new RunRecorder({ store, host: "h1" });
  let scope: RunScope = { owner: "sha256:00000000" };
  const api = apiOf(recorder, { scope: () => scope });
  const read = async (path: string) => {
    const res = await api.request(path);
    return { status: res.status, text: await res.text() };
  };
  for (const path of ["/runs", "/runs/r1", "/overview"]) {
    const own = await read(path);
    assert.doesNotMatch(own.text, /10\.0\.0\.5|skillbox"/, path);
    assert.match(own.text, /Cannot read the run store/, path);
  }
  assert.equal((await read("/runs")).status, 503);
  scope = "all";
  assert.match((await read("/runs")).text, /10\.0\.0\.5:5432/);
  assert.match((await read("/overview")).text, /10\.0\.0\.5:5432/);
  await recorder.close();
});

// In a fleet every host reads one store: a host whose clock ran 2 hours
// ahead asked for the runs ended after its "an hour ago", an hour in every
// other host's future, and showed no stats at all.
testWithPostgres(
  "/stats reads its window by the shared store's clock, not this host's",
  async (pg) => {
    const store = await openPostgresStore(await pg.database());
    const ended = Date.now() - 60_000;
    await store.write([{
      run: addRun("r1", {
        startedAt: ended - 5,
        endedAt: ended,
        durationMs: 5,
        result: "3",
      }),
      events: [],
    }]);
    const recorder = new RunRecorder({ store, host: "h1" });
    const api = apiOf(recorder);
    const realNow = Date.now;
    try {
      Date.now = () => realNow() + 2 * 3600_000;
      const body = await (await api.request("/stats")).json();
      Date.now = realNow;
      assert.deepEqual(
        body.stats.map((
          s: { name: string; calls: number },
        ) => [s.name, s.calls]),
        [["add", 1]],
      );
    } finally {
      Date.now = realNow;
      await recorder.close();
    }
  },
);

// The PostgreSQL store has a pool of 4 connections, in FIFO order: one
// token's requests, each waiting on a slow statement, took all four and
// every other token's reads (and the recorder's writes) waited behind
// them. Here a lock makes token A's reads wait (its run's events are
// locked) until token B has its answer: before, B's read waited behind
// A's until A's gave up on the lock (5 s, `lock_timeout`), so A got 503s.
testWithPostgres(
  "one token's flood of reads waits in its own line, not in the store's pool",
  async (pg) => {
    const url = await pg.database();
    const store = await openPostgresStore(url);
    const run = (id: string, owner: string) =>
      addRun(id, { tokenLabel: "token 1", owner, host: "h1", result: "3" });
    await store.write([
      { run: run("a1", "sha256:aaaaaaaa"), events: [] },
      { run: run("b1", "sha256:bbbbbbbb"), events: [] },
    ]);
    const recorder = new RunRecorder({ store, host: "h1" });
    const api = apiOf(recorder, {
      scope: (c) => ({ owner: c.req.header("x-owner")! }),
    });
    const as = (owner: string, path: string) =>
      api.request(path, { headers: { "x-owner": owner } });
    const locker = postgres(url, { onnotice: () => {} });
    try {
      const locked = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      const holder = locker.begin(async (tx) => {
        await tx`LOCK TABLE skillbox_events IN ACCESS EXCLUSIVE MODE`;
        locked.resolve();
        await release.promise;
      });
      await locked.promise;
      const flood = Array.from(
        { length: 40 },
        () => as("sha256:aaaaaaaa", "/runs/a1"),
      );
      // B asks once A's reads wait on the lock (as a slow read would).
      const waiting = () =>
        locker`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND datname = current_database()`;
      while ((await waiting())[0]!.n === 0) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const b = await as("sha256:bbbbbbbb", "/runs");
      release.resolve();
      await holder;
      assert.equal(b.status, 200);
      assert.deepEqual(
        (await b.json()).runs.map((r: { id: string }) => r.id),
        ["b1"],
      );
      const answers = await Promise.all(flood);
      const statuses = answers.map((r) => r.status);
      // A's reads waited their turn and were answered, none gave up on the
      // lock; past its line's bound A is told to come back.
      assert.deepEqual(
        statuses.filter((s) => s !== 429),
        Array(statuses.filter((s) => s !== 429).length).fill(200),
        `statuses: ${statuses}`,
      );
      const texts = await Promise.all(answers.map((r) => r.text()));
      const refused = statuses.indexOf(429);
      assert.ok(refused >= 0, `statuses: ${statuses}`);
      assert.equal(answers[refused]!.headers.get("retry-after"), "1");
      assert.match(JSON.parse(texts[refused]!).error, /Too many reads/);
    } finally {
      await locker.end();
      await recorder.close();
    }
  },
);

Deno.test("a kept file's long name cut through an emoji still downloads", async () => {
  const name = `1/${"a".repeat(199)}\u{1F600}`;
  const data = new Uint8Array([0x61]);
  const res = fileResponse({ name, size: 1, data, note: null })!;
  assert.equal(
    res.headers.get("content-disposition"),
    `attachment; filename="${"a".repeat(100)}"; filename*=UTF-8''${
      "a".repeat(199)
    }%EF%BF%BD`,
  );
  assert.equal(await res.text(), "a");
});

// A viewer token chooses the window: any finite number of seconds. The
// bound it makes reaches the store as a fraction or far below any run, and
// PostgreSQL's BIGINT column must take both (what is read stays within the
// store's retention).
testWithPostgres(
  "/stats answers any window a query names, falling back to an hour",
  async (pg) => {
    const store = await openPostgresStore(await pg.database());
    const recorder = new RunRecorder({ store, host: "h1" });
    const api = apiOf(recorder);
    try {
      for (
        const [window, seconds] of [
          ["0.0001", 0.0001],
          ["1e300", 1e300],
          ["1e306", 1e306],
          ["-5", 3600],
          ["x", 3600],
          ["Infinity", 3600],
          ["120", 120],
        ] as const
      ) {
        const res = await api.request(`/stats?window=${window}`);
        const body = await res.json();
        assert.equal(res.status, 200, `window=${window}: ${body.error}`);
        assert.equal(body.window_seconds, seconds, `window=${window}`);
      }
    } finally {
      await recorder.close();
    }
  },
);

// A module's events may be up to 1 MiB each (the sandbox's cap): a live
// feed that is not read held up to 2,000 of them whole, about 2 GiB, for
// as long as its viewer kept it open. What it holds is bounded in bytes:
// past the bound, events are counted lost, as past the count.
Deno.test("a live feed nobody reads holds a bounded size of events, not 2,000 of 1 MiB", async () => {
  const recorder = openRecorder(null);
  const api = apiOf(recorder);
  const abort = new AbortController();
  const res = await api.request("/live", { signal: abort.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("event: hello")) text += (await reader.read()).value;
  const id = startRun(recorder, { name: "big" });
  const big = "x".repeat(1 << 20);
  const SENT = 64;
  for (let seq = 0; seq < SENT; seq++) {
    recorder.event(id, { kind: "log", seq, data: { message: big } });
  }
  // Read what the feed held: at each read one more small event, heard
  // once the feed has room again, after the count of those it lost.
  let seq = SENT;
  while (
    !/^event: (lost|event\ndata: .*"seq":\d+,"kind":"status")/m.test(text)
  ) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    recorder.event(id, { kind: "status", seq: seq++, data: { message: "." } });
  }
  abort.abort();
  await reader.cancel();
  await recorder.close();
  const delivered = text.match(/"kind":"log"/g)?.length ?? 0;
  const lost = Number(/^event: lost\ndata: (\d+)$/m.exec(text)?.[1] ?? 0);
  assert.ok(delivered <= 16, `${delivered} events of 1 MiB were held`);
  assert.ok(lost >= SENT - 16, `${lost} lost`);
});

// A feed waiting for changes is woken by each one, not by its next ping:
// here the 15 s ping never comes (its timer is held back), so a change
// that did not wake the feed would never reach the viewer. The bound
// only turns that hang into a failure.
Deno.test("a live feed waiting for changes is woken by each one, not by its ping", async () => {
  const realSetTimeout = globalThis.setTimeout;
  const held: number[] = [];
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    if ((ms ?? 0) < 10_000) return realSetTimeout(fn, ms);
    held.push(ms!);
    return 0;
  }) as typeof setTimeout;
  const recorder = openRecorder(null);
  const api = apiOf(recorder);
  const abort = new AbortController();
  try {
    const res = await api.request("/live", { signal: abort.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const until = async (pattern: RegExp) => {
      const gaveUp = Promise.withResolvers<never>();
      const timer = realSetTimeout(
        () => gaveUp.reject(new Error(`no ${pattern} in ${text}`)),
        20_000,
      );
      try {
        while (!pattern.test(text)) {
          text += (await Promise.race([reader.read(), gaveUp.promise])).value;
        }
      } finally {
        clearTimeout(timer);
      }
    };
    await until(/event: hello/);
    // The feed waits (its ping's timer is set) before the run starts.
    for (let waited = 0; held.length === 0; waited++) {
      assert.ok(waited < 10_000, "the feed never waited");
      await new Promise((resolve) => realSetTimeout(resolve, 1));
    }
    const id = startRun(recorder, { name: "woken" });
    await until(/event: started\ndata: [^\n]*"woken"/);
    recorder.finished(id, { outcome: "ok", result: 1 });
    await until(/event: finished\ndata: [^\n]*"woken"/);
    abort.abort();
    await reader.cancel();
  } finally {
    globalThis.setTimeout = realSetTimeout;
    await recorder.close();
  }
});
