import assert from "node:assert/strict";
import { SkillboxError, toWireError } from "../../protocol/errors.ts";
import { parseConfig } from "../config.ts";
import { resolveConfig } from "../config_overrides.ts";
import {
  newRunId,
  observeToolCaller,
  openRecorder,
  RunRecorder,
} from "./recorder.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { Redactor } from "./redact.ts";
import { PostgresRunStore } from "./postgres.ts";
import { openSqliteStore, SqliteRunStore } from "./sqlite.ts";
import type { RunStore } from "./store.ts";
import { fakeSession } from "../../tests/support/skill_fakes.ts";
import { emptyStore, startRun } from "../../tests/support/runs.ts";

const session = fakeSession();

Deno.test("a recorded run's id begins with its start time, so the store's keys grow in order", async () => {
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  const ids = [0, 1, 2].map((i) => startRun(recorder, { args: { i } }));
  for (const live of recorder.running) {
    assert.match(live.id, /^[0-9a-f]{32}$/);
    assert.equal(parseInt(live.id.slice(0, 12), 16), live.startedAt);
  }
  for (const id of ids) recorder.finished(id, { outcome: "ok", result: 1 });
  await recorder.flush();
  assert.deepEqual(
    (await recorder.store?.list({}))?.runs.map((r) => r.id),
    [...ids].reverse(),
  );
  await recorder.close();
});

Deno.test("newRunId starts with the time in hex and ends with random digits, distinct across refills of the id pool", () => {
  const now = Date.UTC(2026, 10, 23, 20, 0, 0, 123);
  const seen = new Set<string>();
  const digits = new Set<string>();
  const byPosition = Array.from({ length: 10 }, () => new Set<string>());
  for (let i = 0; i < 2000; i++) {
    const id = newRunId(now);
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(parseInt(id.slice(0, 12), 16), now);
    seen.add(id.slice(12));
    for (const c of id.slice(12)) digits.add(c);
    byPosition.forEach((set, p) => set.add(id.slice(12 + 2 * p, 14 + 2 * p)));
  }
  assert.equal(seen.size, 2000);
  assert.equal(digits.size, 16);
  // Same millisecond, and every random byte takes most of its values (a
  // counter would leave the leading ones fixed): 256, but for uuid4's
  // version nibble (16) and variant bits (64).
  byPosition.forEach((set, p) => {
    const values = p === 0 ? 16 : p === 2 ? 64 : 256;
    assert.ok(set.size > values * 0.8, `byte ${p}: ${set.size}`);
  });
});

Deno.test("newRunId orders ids by start time, with the zero padding that keeps early times in order", () => {
  const times = [
    0,
    1,
    15,
    16,
    4095,
    1_700_000_000_000,
    Date.now(),
    2 ** 48 - 1,
  ];
  const ids = times.map((t) => newRunId(t));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(newRunId(1).slice(0, 12), "000000000001");
  assert.equal(newRunId(1.9).slice(0, 12), "000000000001");
});

Deno.test("newRunId's time digits are the millisecond in hex over the whole 48-bit range", () => {
  for (let i = 0; i < 1000; i++) {
    const ms = Math.floor(Math.random() * 2 ** 48);
    const id = newRunId(ms);
    assert.equal(id.slice(0, 12), ms.toString(16).padStart(12, "0"), `${ms}`);
  }
});

Deno.test("store.url selects the PostgreSQL store; without it SQLite stays the default", async () => {
  const sqlite = parseConfig(`{ "store": { "path": ":memory:" } }`);
  assert.equal(sqlite.store?.url, null);
  assert.equal(sqlite.host?.id, null);
  const a = openRecorder(sqlite.store);
  assert.ok(a.store instanceof SqliteRunStore);
  await a.close();
  const pg = parseConfig(
    `{ "store": { "url": "postgres://u:p@127.0.0.1:1/db" }, "host": { "id": "h7" } }`,
  );
  assert.equal(pg.host?.id, "h7");
  // Connected on first use: a host starts while its database is down.
  const b = openRecorder(pg.store, { host: "h7" });
  assert.ok(b.store instanceof PostgresRunStore);
  await b.close();
});

Deno.test("SKILLBOX_STORE_URL sets store.url, even over store: null", () => {
  const off = parseConfig(`{ "store": null }`);
  const { config, overrides } = resolveConfig(off, {
    env: { SKILLBOX_STORE_URL: "postgres://db/skillbox" },
  });
  assert.equal(config.store?.url, "postgres://db/skillbox");
  assert.equal(config.store?.maxRuns, 10_000);
  assert.equal(overrides["store.url"], "SKILLBOX_STORE_URL");
});

Deno.test("a store.url that is not postgres:// is refused at load", () => {
  assert.throws(
    () => parseConfig(`{ "store": { "url": "mysql://db/x" } }`),
    /store\.url/,
  );
});

Deno.test("describeSession is asked once per session; every run of the session carries its answer", async () => {
  const asked: string[] = [];
  const recorder = new RunRecorder({
    store: openSqliteStore(":memory:"),
    describeSession: (s) => {
      asked.push(s.id);
      return { transport: `t-${s.id}`, tokenLabel: "token 1", owner: s.id };
    },
  });
  const other = { ...fakeSession(), id: "session-2" };
  const ids = [session, other, session, other, session].map((s) =>
    startRun(recorder, { session: s })
  );
  assert.deepEqual(asked, ["session-1", "session-2"]);
  assert.deepEqual(recorder.describe(other), {
    transport: "t-session-2",
    tokenLabel: "token 1",
    owner: "session-2",
  });
  assert.deepEqual(asked, ["session-1", "session-2"]);
  for (const id of ids) recorder.finished(id, { outcome: "ok" });
  await recorder.flush();
  const runs = (await recorder.store!.list({})).runs;
  assert.deepEqual(
    runs.map((r) => [r.session, r.transport, r.tokenLabel, r.owner]).sort(),
    [
      ...Array(3).fill(["session-1", "t-session-1", "token 1", "session-1"]),
      ...Array(2).fill(["session-2", "t-session-2", "token 1", "session-2"]),
    ].sort(),
  );
  // Without describeSession a run is the operator's, in-process.
  const bare = new RunRecorder({ store: null });
  assert.deepEqual(bare.describe(session), {
    transport: "in-process",
    tokenLabel: null,
  });
  await bare.close();
  await recorder.close();
});

Deno.test("the retention runs once max_runs runs were written since it last ran, not only on its timer", async () => {
  const store = openSqliteStore(":memory:");
  const recorder = new RunRecorder({
    store,
    retention: { maxRuns: 5, maxAgeDays: 30 },
  });
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < 5; i++) {
      const id = startRun(recorder);
      recorder.finished(id, { outcome: "ok" });
    }
    await recorder.flush();
    assert.equal(store.count(), 5, `round ${round}`);
  }
  // Fewer than max_runs since: kept until the next prune.
  const id = startRun(recorder);
  recorder.finished(id, { outcome: "ok" });
  await recorder.flush();
  assert.equal(store.count(), 6);
  await recorder.close();
});

Deno.test("every run in progress keeps its files, however many runs are going", async () => {
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  // 1,001 skill runs going at once, each leaving one small file: the
  // first one's files were dropped, unsaid, for the last one's.
  const ids = Array.from({ length: 1001 }, (_, i) => {
    const id = startRun(recorder, { kind: "skill", name: "s" });
    const data = new TextEncoder().encode(`run ${i}`);
    const file = { name: "a/out.txt", size: data.length, data, note: null };
    assert.equal(recorder.files!.attach(id, [file]).files, 1);
    return id;
  });
  for (const id of ids) recorder.finished(id, { outcome: "ok" });
  // A run that is not in progress (ended, or never begun) gets none.
  const late = { name: "a/late.txt", size: 0, data: null, note: null };
  assert.equal(recorder.files!.attach(ids[0]!, [late]).truncated, true);
  assert.equal(recorder.files!.attach("gone", [late]).truncated, true);
  await recorder.flush();
  for (const i of [0, 1000]) {
    const file = await recorder.store!.file(ids[i]!, 0);
    assert.equal(new TextDecoder().decode(file?.data ?? undefined), `run ${i}`);
  }
  await recorder.close();
});

Deno.test("what the recorder holds for a store that is down is bounded in bytes, not only in runs", async () => {
  // A database that is down, then back: what it is handed is what was held.
  let down = true;
  let files = 0;
  let bytes = 0;
  const refuse = () => {
    if (down) throw new Error("connection refused");
  };
  const store = emptyStore({
    write(batch) {
      refuse();
      for (const w of batch) {
        for (const f of w.files ?? []) files++, bytes += f.data?.length ?? 0;
      }
    },
    interrupt: () => (refuse(), 0),
  });
  const recorder = new RunRecorder({ store });
  // A skill run's scripts may leave 4 MiB of files (the default cap): 40
  // runs of them held while the store is down were 160 MiB of memory.
  const data = new Uint8Array(4 << 20).fill(0x61);
  const runs = 40;
  for (let i = 0; i < runs; i++) {
    const id = startRun(recorder, { kind: "skill", name: "s" });
    recorder.files!.attach(id, [{
      name: "a/out.txt",
      size: data.length,
      data,
      note: null,
    }]);
    recorder.finished(id, { outcome: "ok" });
    await recorder.flush();
  }
  down = false;
  await recorder.flush();
  assert.ok(bytes <= 64 << 20, `held ${bytes} bytes of files`);
  assert.ok(recorder.lost >= runs - 16, `lost ${recorder.lost}`);
  assert.equal(files + recorder.lost, runs);
  await recorder.close();
});

Deno.test("flushes asked while a write waits on the store share one next write, not one each", async () => {
  // A database that hangs (an unreachable address: each try waits out the
  // connect timeout), and a console asked 20 times meanwhile: each request
  // flushes before it reads.
  let tries = 0;
  let open = () => {};
  const gate = new Promise<void>((resolve) => open = resolve);
  const store = emptyStore({
    async write() {
      tries++;
      await gate;
      throw new Error("connect timeout");
    },
  });
  const recorder = new RunRecorder({ store });
  const id = startRun(recorder);
  recorder.finished(id, { outcome: "ok" });
  const first = recorder.flush();
  while (tries === 0) await Promise.resolve();
  const asked = Array.from({ length: 20 }, () => recorder.flush());
  open();
  await Promise.all([first, ...asked]);
  // The one in flight, then one for all 20.
  assert.equal(tries, 2);
  await recorder.close();
});

Deno.test("the events a run keeps for the history are bounded in bytes while it runs", async () => {
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  const id = startRun(recorder, { name: "t" });
  // A tool's module may log 1 MiB events (the sandbox's cap): 500 of them
  // were 500 MiB held in the host until the run ended.
  const big = "x".repeat(1 << 20);
  for (let seq = 0; seq < 500; seq++) {
    recorder.event(id, { kind: "log", seq, data: { message: big } });
  }
  recorder.event(id, { kind: "log", seq: 500, data: { message: "end" } });
  recorder.finished(id, { outcome: "ok" });
  await recorder.flush();
  const detail = (await recorder.store!.get(id))!;
  assert.equal(detail.run.eventCount, 501);
  assert.ok(detail.events.length <= 8, `${detail.events.length} kept`);
  assert.deepEqual(
    detail.events.map((e) => e.seq),
    detail.events.map((_, i) => i),
  );
  await recorder.close();
});

// A store that refuses writes while `down`, and whose writes wait on
// `gate` when one is set: what it took, in order, is in `written`.
function heldStore() {
  const held = {
    down: false,
    gate: null as Promise<void> | null,
    tries: 0,
    written: [] as string[],
    store: null as unknown as RunStore,
  };
  held.store = emptyStore({
    async write(batch) {
      held.tries++;
      if (held.gate) await held.gate;
      if (held.down) throw new Error("connection refused");
      for (const w of batch) held.written.push(w.run.id);
    },
    interrupt: () => {
      if (held.down) throw new Error("connection refused");
      return 0;
    },
  });
  return held;
}

// Counts the recorder's store errors, and keeps its log.
function watched() {
  const seen = { errors: 0, lines: [] as string[] };
  return {
    seen,
    counters: {
      finished() {},
      llmTurn() {},
      llmTokens() {},
      eventsDropped() {},
      storeError: () => void seen.errors++,
    },
    log: (line: string) => void seen.lines.push(line),
    // Each session is its own owner (a token of its own).
    describeSession: (s: { id: string }) => ({
      transport: "websocket",
      tokenLabel: s.id,
      owner: s.id,
    }),
  };
}

const alice = { ...fakeSession(), id: "alice" };
const bob = { ...fakeSession(), id: "bob" };

// One finished run of the session's owner; a large one keeps about 15 Ki
// chars of result (the redactor cuts a string at 2,000, and a result at 16
// Ki): about 30 KiB held.
function call(recorder: RunRecorder, who: typeof alice, large = false): string {
  const id = startRun(recorder, { session: who });
  recorder.finished(id, {
    outcome: "ok",
    result: large ? Array(8).fill("x".repeat(1900)) : 1,
  });
  return id;
}

Deno.test("a token flooding calls while the store is down loses its own held runs, never another token's few", async () => {
  const held = heldStore();
  const w = watched();
  const recorder = new RunRecorder({ store: held.store, ...w, maxPending: 10 });
  held.down = true;
  const few = [0, 1, 2].map(() => call(recorder, bob));
  await recorder.flush();
  const flood: string[] = [];
  for (let i = 0; i < 40; i++) {
    flood.push(call(recorder, alice));
    if (i % 10 === 9) await recorder.flush();
  }
  await recorder.flush();
  // Bob's 3 are within his share of 10; Alice keeps the 7 he leaves.
  assert.equal(recorder.lost, 33);
  held.down = false;
  await recorder.flush();
  assert.deepEqual(
    held.written.filter((id) => few.includes(id)).sort(),
    [...few].sort(),
  );
  assert.deepEqual(
    held.written.filter((id) => flood.includes(id)).sort(),
    flood.slice(-7).sort(),
  );
  assert.equal(held.written.length, 10);
  assert.match(w.seen.lines.at(-1)!, /written again; 33 runs were lost/);
  assert.ok(w.seen.errors >= 33, `${w.seen.errors} store errors`);
  await recorder.close();
});

Deno.test("past the held bytes' bound a token's flood of large runs loses its own, never another token's small ones", async () => {
  const held = heldStore();
  const w = watched();
  const recorder = new RunRecorder({
    store: held.store,
    ...w,
    maxPendingBytes: 256 << 10,
  });
  held.down = true;
  const few = [0, 1, 2].map(() => call(recorder, bob));
  await recorder.flush();
  // About 30 KiB held each: 40 are about five times the bound.
  const flood: string[] = [];
  for (let i = 0; i < 40; i++) {
    flood.push(call(recorder, alice, true));
    if (i % 10 === 9) await recorder.flush();
  }
  await recorder.flush();
  held.down = false;
  await recorder.flush();
  assert.deepEqual(
    held.written.filter((id) => few.includes(id)).sort(),
    [...few].sort(),
  );
  const kept = held.written.filter((id) => flood.includes(id));
  assert.ok(kept.length >= 4 && kept.length <= 8, `${kept.length} kept`);
  // Alice's newest are those kept.
  assert.deepEqual(kept.sort(), flood.slice(-kept.length).sort());
  assert.equal(recorder.lost, 40 - kept.length);
  await recorder.close();
});

Deno.test("runs dropped while their write was in flight are not written twice, and lost only if that write fails", async (t) => {
  for (const fails of [false, true]) {
    await t.step(fails ? "the write fails" : "the write succeeds", async () => {
      const held = heldStore();
      const w = watched();
      const recorder = new RunRecorder({
        store: held.store,
        ...w,
        maxPending: 4,
      });
      let open = () => {};
      held.gate = new Promise<void>((resolve) => open = resolve);
      const sent = [0, 1, 2].map(() => call(recorder, alice));
      const first = recorder.flush();
      while (held.tries === 0) await Promise.resolve();
      // The write of Alice's 3 hangs; meanwhile Bob's one run and 6 more of
      // Alice's take the hold past its 4: hers go, the 3 in flight first.
      const quiet = call(recorder, bob);
      const later = [0, 1, 2, 3, 4, 5].map(() => call(recorder, alice));
      held.down = fails;
      open();
      await first;
      held.gate = null;
      held.down = false;
      await recorder.flush();
      const expected = [...(fails ? [] : sent), quiet, ...later.slice(3)];
      assert.equal(new Set(held.written).size, held.written.length);
      assert.deepEqual([...held.written].sort(), expected.sort());
      assert.equal(recorder.lost, 10 - expected.length);
      // One store error per run lost, and one for the failed write.
      assert.equal(w.seen.errors, recorder.lost + (fails ? 1 : 0));
      if (fails) {
        assert.match(w.seen.lines.at(-1)!, /written again; 6 runs were lost/);
      }
      await recorder.close();
    });
  }
});

Deno.test("a run the store refuses for good is lost once the store takes others, not held while everyone else's are dropped", async () => {
  const held = heldStore();
  const w = watched();
  const recorder = new RunRecorder({ store: held.store, ...w, maxPending: 20 });
  // The store refuses one of Bob's runs whatever it is written with (a
  // value it cannot take), and takes everything else.
  let poison = "";
  const write = held.store.write.bind(held.store);
  held.store.write = (batch) => {
    if (batch.some((r) => r.run.id === poison)) {
      throw new Error("invalid byte sequence for encoding");
    }
    return write(batch);
  };
  poison = call(recorder, bob);
  await recorder.flush();
  const alices: string[] = [];
  for (let i = 0; i < 30; i++) {
    alices.push(call(recorder, alice));
    if (i % 5 === 4) await recorder.flush();
  }
  await recorder.flush();
  assert.deepEqual([...held.written].sort(), [...alices].sort());
  assert.equal(recorder.lost, 1);
  assert.ok(
    w.seen.lines.some((l) =>
      /refused a run it cannot take, which was dropped: invalid byte/.test(l)
    ),
    w.seen.lines.join("\n"),
  );
  // Bob's next run is written: nothing of his is held any more.
  const next = call(recorder, bob);
  await recorder.flush();
  assert.equal(held.written.at(-1), next);
  await recorder.close();
});

// A recorder observing calls of a toolkit's tool (`gh__issue`) whose
// configuration holds a secret under a key that does not look secret.
function toolkitCalls(call: () => Promise<unknown>) {
  const kit = {
    kind: "toolkit" as const,
    name: "gh",
    configSchema: {
      type: "object",
      properties: { pat: { type: "string", secret: true } },
    },
  };
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  const caller = observeToolCaller({ call: call as never }, recorder, {
    registry: {
      snapshot: {
        tools: new Map([["gh__issue", { toolkit: "gh" }]]),
        toolkits: new Map([["gh", kit]]),
      },
    } as never,
    configs: createToolkitConfigs({ gh: { pat: "pat-7c1e99d0f2" } }),
  });
  const args = { note: "see pat-7c1e99d0f2" };
  return {
    recorder,
    call: () => caller.call({ name: "gh__issue", args, session } as never),
    lastRun: async () => (await recorder.store!.list({})).runs[0]!,
  };
}

Deno.test("a toolkit's call written while it runs has the toolkit's secrets scrubbed from its arguments", async () => {
  let release!: () => void;
  const ran = new Promise<void>((resolve) => release = resolve);
  const { recorder, call, lastRun } = toolkitCalls(async () => {
    await ran;
    return { result: { success: true, data: null }, entry: { toolkit: "gh" } };
  });
  const calling = call();
  // Written `running`: what a host that dies leaves for good.
  await recorder.flush();
  const running = await lastRun();
  assert.equal(running.outcome, "running");
  assert.equal(running.args, '{"note":"see [redacted]"}');
  release();
  await calling;
  await recorder.flush();
  assert.equal((await lastRun()).args, '{"note":"see [redacted]"}');
  await recorder.close();
});

Deno.test("a toolkit's call that throws has the toolkit's secrets scrubbed from its arguments", async () => {
  const { recorder, call, lastRun } = toolkitCalls(() =>
    Promise.reject(new SkillboxError("tool_denied", "Denied"))
  );
  await assert.rejects(call());
  await recorder.flush();
  const run = await lastRun();
  assert.equal(run.outcome, "tool_denied");
  assert.equal(run.args, '{"note":"see [redacted]"}');
  await recorder.close();
});

// A system error's `code` (Deno's NotFound is `ENOENT`) is no A2E code:
// its client is told `runtime_error` (toWireError), and so is the history.
Deno.test("a call that throws a system error is recorded as the runtime_error its client is told", async () => {
  const thrown = Object.assign(new Error("gone"), { code: "ENOENT" });
  const { recorder, call, lastRun } = toolkitCalls(() =>
    Promise.reject(thrown)
  );
  await assert.rejects(call());
  await recorder.flush();
  const run = await lastRun();
  assert.equal(run.outcome, toWireError(thrown).code);
  assert.equal(run.outcome, "runtime_error");
  assert.equal(run.error, "gone");
  await recorder.close();
});

Deno.test("a run's name and its events' kinds have the operator's secrets scrubbed, as its texts have", async () => {
  const secret = "sk-operator-5be0c2d9a1";
  const recorder = new RunRecorder({
    store: openSqliteStore(":memory:"),
    redactor: new Redactor([secret]),
  });
  // Chosen by a module: run_code's code names the tool it calls, and a
  // worker's own messages name an event's kind.
  const id = startRun(recorder, { name: `x-${secret}` });
  assert.equal(recorder.running[0]!.name, "x-[redacted]");
  recorder.event(id, { kind: `k-${secret}`, data: {}, seq: 0 });
  recorder.finished(id, { outcome: "unknown_tool" });
  await recorder.flush();
  const detail = (await recorder.store!.get(id))!;
  assert.equal(detail.run.name, "x-[redacted]");
  assert.equal(detail.events[0]!.kind, "k-[redacted]");
  await recorder.close();
});

Deno.test("a run's texts holding a NUL are kept whole in SQLite, the NUL written as on PostgreSQL", async () => {
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  // A client's tool name and a module's error message and event kind:
  // node:sqlite reads a text back only up to its first NUL, so the
  // history showed "Unknown tool \"a" and hid the rest.
  const id = startRun(recorder, { name: "a\u0000b" });
  recorder.event(id, { kind: "k\u0000z", data: {}, seq: 0 });
  recorder.finished(id, {
    outcome: "unknown_tool",
    error: 'Unknown tool "a\u0000b"',
    summary: "s\u0000t",
  });
  await recorder.flush();
  const detail = (await recorder.store!.get(id))!;
  assert.equal(detail.run.name, "a\uFFFDb");
  assert.equal(detail.run.error, 'Unknown tool "a\uFFFDb"');
  assert.equal(detail.run.summary, "s\uFFFDt");
  assert.equal(detail.events[0]!.kind, "k\uFFFDz");
  await recorder.close();
});

Deno.test("a tool's events named as LLM turns count no turns or tokens: only a skill's LLM relay makes them", async () => {
  const counted: string[] = [];
  const recorder = new RunRecorder({
    store: openSqliteStore(":memory:"),
    counters: {
      finished() {},
      llmTurn: (provider) => counted.push(`turn ${provider}`),
      llmTokens: (provider, direction, n) =>
        counted.push(`${provider} ${direction} ${n}`),
      eventsDropped() {},
      storeError() {},
    },
  });
  // A module's worker can name its events' kinds (its globals are its own).
  const forge = (kind: "tool" | "skill") => {
    const id = startRun(recorder, { kind, name: "x" });
    recorder.event(id, {
      kind: "llm.started",
      data: { provider: "openai" },
      seq: 0,
    });
    recorder.event(id, {
      kind: "llm.completed",
      data: { usage: { input_tokens: 1e12, output_tokens: 1e12 } },
      seq: 1,
    });
    recorder.finished(id, { outcome: "ok" });
    return id;
  };
  const tool = forge("tool");
  assert.deepEqual(counted, []);
  await recorder.flush();
  const run = (await recorder.store!.get(tool))!.run;
  assert.deepEqual([run.llmTurns, run.inputTokens, run.outputTokens], [
    0,
    0,
    0,
  ]);
  assert.equal(run.eventCount, 2);
  // A skill's are counted, as its LLM relay emits them.
  const skill = forge("skill");
  assert.equal(counted.length, 3);
  await recorder.flush();
  assert.equal((await recorder.store!.get(skill))!.run.llmTurns, 1);
  await recorder.close();
});
