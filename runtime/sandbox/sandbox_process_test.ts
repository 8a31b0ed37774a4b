import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Confiner } from "../confine/sandbox_processes.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import { loadBootstrap } from "./bootstrap_text.ts";
import { grantToFlags, grantToWorkerPermissions } from "./grants.ts";
import {
  ControlSocket,
  openControlSocket,
  ranOutOfMemory,
  SANDBOX_MAIN,
  sandboxCommand,
  SandboxProcess,
  UNWRAPPED,
} from "./sandbox_process.ts";
import { Deadlines, settlesWithin } from "../deadline.ts";
import { EgressBroker } from "../egress/broker.ts";
import { MAX_RPCS_IN_FLIGHT } from "../../protocol/sandbox/pipe.ts";
import { openEgressProxy } from "../egress/proxy.ts";
import { callOp, fixture, TEST_LIMITS, testPool } from "./_test_support.ts";
import { killNaming, leftAfter } from "../../tests/support/processes.ts";
import type { SandboxHooks, SandboxOutcome } from "./types.ts";

const deadlines = new Deadlines();

// A confined sandbox process (bubblewrap) killed in its first milliseconds
// leaves no process behind: every process whose command line names the
// grant's folder (bwrap, and the Deno it starts in its namespaces) is gone
// once `exited` resolves, and it resolves at all. The operation sent to it
// spins at top level, so a process that outlived its bubblewrap would run
// forever. Killed by the host (`kill()`), or by another (SIGKILL to
// bubblewrap alone, as an operator or the OOM killer would): bubblewrap
// killed before the Deno it starts asked to die with it leaves that Deno
// running, and the host must still see the process end.
//
// Without working bubblewrap the test is ignored (its name says so).

const confiner = new Confiner("auto");
const status = await confiner.status();
const ROUNDS = 12;

/** What `ps` says of processes (parent, state, command), for a failure. */
async function states(pids: number[]): Promise<string> {
  if (pids.length === 0) return "";
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "pid=,ppid=,stat=,args=", "-p", pids.join(",")],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).trim().slice(0, 400);
}

type Kill =
  | "at once"
  | "at once, a spinning op sent"
  | "at spawn"
  | "after a spinning op"
  | "by another, after the round's milliseconds";

// One confined process granted a fresh folder, killed as `kill` says;
// returns whether `exited` resolved within the bound and the processes
// left after it.
async function oneRound(
  kill: Kill,
  bootstrap: string,
  round: number,
): Promise<{ returned: boolean; left: number[]; states: string }> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_early_kill_" });
  const path = join(dir, "spin.ts");
  await Deno.writeTextFile(path, "while (true) {}\nexport default {};\n");
  const wrap = await confiner.wrapperFor(SANDBOX_MAIN);
  try {
    const proc = SandboxProcess.start({ ...TEST_LIMITS, cwd: dir }, {
      key: "k",
      grant: { read: [dir] },
      bootstrap,
      wrap,
      deadlines,
    });
    if (kill !== "at once" && kill !== "at spawn" && !kill.startsWith("by")) {
      proc.lease();
      proc.run(callOp(path, {}), { timeoutMs: 60_000, hooks: null });
    }
    if (kill === "at spawn") await Promise.resolve();
    // A few milliseconds in: bwrap is setting up, or Deno is starting.
    if (kill === "after a spinning op") {
      await new Promise((r) => setTimeout(r, 5));
    }
    if (kill.startsWith("by")) {
      // Round r waits r ms: one of them falls in bubblewrap's set-up.
      await new Promise((r) => setTimeout(r, round));
      Deno.kill(proc.pid, "SIGKILL");
    } else proc.kill();
    const returned = await settlesWithin(proc.exited, 10_000);
    const left = await leftAfter(dir, 3_000);
    return { returned, left, states: await states(left) };
  } finally {
    deadlines.close();
    // Whatever the test's own processes left is ended here, by pid.
    await killNaming(dir);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: status.active
    ? "a confined sandbox process killed in its first milliseconds leaves no process behind"
    : `a confined sandbox process killed early leaves no process behind [IGNORED: ${status.reason}]`,
  ignore: !status.active,
  async fn() {
    const bootstrap = await loadBootstrap();
    const kills: Kill[] = [
      "at once",
      "at once, a spinning op sent",
      "at spawn",
      "after a spinning op",
      "by another, after the round's milliseconds",
    ];
    const failures: string[] = [];
    for (const kill of kills) {
      for (let round = 0; round < ROUNDS; round++) {
        const { returned, left, states } = await oneRound(
          kill,
          bootstrap,
          round,
        );
        if (!returned || left.length > 0) {
          failures.push(
            `killed ${kill}, round ${round}: ${
              returned ? "exited" : "never exited"
            }, left pids ${left.join(",") || "none"} ${states}`,
          );
        }
      }
    }
    assert.deepEqual(failures, []);
  },
});

function run(proc: SandboxProcess, path: string): Promise<SandboxOutcome> {
  proc.lease();
  return proc.run(callOp(path, { n: 2 }), { timeoutMs: 10_000, hooks: null });
}

// Three calls answered, then the process stopped: between calls the frame
// reader is held (nothing awaited) and each write releases it; the kill
// releases it for good, so `exited` resolves.
async function answersAndStops(
  proc: SandboxProcess,
  path: string,
): Promise<void> {
  await proc.ready;
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await run(proc, path), {
      ok: true,
      value: 4,
      truncated: false,
    });
  }
  proc.kill();
  await proc.exited;
  deadlines.close();
}

async function withModule(
  fn: (dir: string, path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_start_" });
  const path = join(dir, "double.ts");
  await Deno.writeTextFile(
    path,
    "export default { run: (args: { n: number }) => args.n * 2 };\n",
  );
  try {
    await fn(dir, path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a started process runs operations sent on its control socket", async () => {
  await withModule(async (dir, path) => {
    const proc = SandboxProcess.start({ ...TEST_LIMITS, cwd: dir }, {
      key: "k",
      grant: { read: [dir] },
      bootstrap: await loadBootstrap(),
      wrap: UNWRAPPED,
      deadlines,
    });
    await answersAndStops(proc, path);
  });
});

Deno.test("without a control socket (none can be made) a process takes every frame on stdin", async () => {
  await withModule(async (dir, path) => {
    const grant = { read: [dir] };
    const proc = new SandboxProcess({
      key: "k",
      command: sandboxCommand({
        flags: grantToFlags(grant, []),
        grant,
        memoryMb: TEST_LIMITS.memoryMb,
        cwd: dir,
      }),
      permissions: grantToWorkerPermissions(grant),
      bootstrap: await loadBootstrap(),
      spareWorkers: TEST_LIMITS.spareWorkers,
      maxWarmWorkers: TEST_LIMITS.maxWarmWorkers,
      maxResultBytes: TEST_LIMITS.maxResultBytes,
      maxEventBytes: TEST_LIMITS.maxEventBytes,
      deadlines,
    });
    await answersAndStops(proc, path);
  });
});

Deno.test("openControlSocket gives a socket where Unix sockets work", () => {
  const control = openControlSocket();
  if (Deno.build.os === "windows") return;
  assert.ok(control !== null);
  control.close();
});

const SPIN = fixture("spin_on_demand");
const grant = Object.freeze({ read: [dirname(SPIN)] });
const hooks: SandboxHooks = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("none")),
  chat: () => Promise.reject(new Error("none")),
};

Deno.test("SandboxProcess.run() answers a spinning call at its deadline and taints its process", async () => {
  const pool = testPool();
  try {
    const proc = await pool.processFor(grant);
    const warm = await proc.run(callOp(SPIN, { spin: false }), {
      timeoutMs: 10_000,
      hooks,
    });
    assert.deepEqual(warm, { ok: true, value: "ok", truncated: false });
    proc.lease();
    // A call that waited for its process runs for what is left of its
    // timeout, a fraction of a millisecond included: the message rounds it.
    const outcome = await proc.run(callOp(SPIN, { spin: true }), {
      timeoutMs: 300.4271,
      hooks,
    });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) {
      assert.equal(outcome.code, "timeout");
      assert.equal(outcome.message, "Timed out after 300 ms");
    }
    // The spinning worker never acknowledges: the process is killed.
    await proc.exited;
    assert.equal(proc.tainted, true);
  } finally {
    await pool.close();
  }
});

Deno.test("SandboxProcess.run() cancels a call and keeps its process when the worker stops", async () => {
  const pool = testPool();
  try {
    const proc = await pool.processFor(grant);
    const controller = new AbortController();
    controller.abort();
    const { promise: settled, resolve } = Promise.withResolvers<boolean>();
    // The process reports the worker's answer to its owner, the pool.
    const stopped = pool.stopped.bind(pool);
    pool.stopped = (p, acknowledged) => {
      stopped(p, acknowledged);
      resolve(acknowledged);
    };
    const outcome = await proc.run(callOp(SPIN, { spin: false }), {
      timeoutMs: 10_000,
      hooks: { ...hooks, signal: controller.signal },
    });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.match(outcome.message, /cancelled/);
    assert.equal(await settled, true);
    const again = await pool.processFor(grant);
    again.release();
    assert.equal(again, proc);
    assert.equal(proc.tainted, false);
  } finally {
    await pool.close();
  }
});

Deno.test("SandboxProcess.run() refuses ctx RPCs when it has no hooks", async () => {
  const dir = await Deno.makeTempDir();
  const pool = testPool();
  try {
    const path = `${dir}/mod.ts`;
    await Deno.writeTextFile(
      path,
      `export default { kind: "tool", name: "t", description: "d",
        async run(_a, ctx) {
          try { await ctx.tools.call("x"); } catch (e) { return e.message; }
        } };`,
    );
    const proc = await pool.processFor({ read: [dir] });
    const outcome = await proc.run(callOp(path, {}), {
      timeoutMs: 10_000,
      hooks: null,
    });
    assert.deepEqual(outcome, {
      ok: true,
      value: "Not available here",
      truncated: false,
    });
  } finally {
    await pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const encoder = new TextEncoder();

async function connectWith(path: string, hello: string): Promise<Deno.Conn> {
  const conn = await Deno.connect({ transport: "unix", path });
  await conn.write(encoder.encode(hello));
  return conn;
}

// Reads until `bytes` bytes came or the connection ended.
async function readBytes(conn: Deno.Conn, bytes: number): Promise<Uint8Array> {
  const got = new Uint8Array(bytes);
  let at = 0;
  while (at < bytes) {
    const n = await conn.read(got.subarray(at));
    if (n === null) break;
    at += n;
  }
  return got.subarray(0, at);
}

async function ended(conn: Deno.Conn): Promise<boolean> {
  try {
    return await conn.read(new Uint8Array(1)) === null;
  } catch {
    return true;
  }
}

Deno.test("a connection without the nonce is closed and the process still gets its frames, in order", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n0nce");
    control.write(encoder.encode("one\n"));
    const impostor = await connectWith(control.path, "guess\n");
    assert.ok(await ended(impostor), "the impostor was not closed");
    impostor.close();
    control.write(encoder.encode("two\n"));
    const conn = await connectWith(control.path, "n0nce\n");
    control.write(encoder.encode("three\n"));
    const got = new TextDecoder().decode(await readBytes(conn, 14));
    assert.equal(got, "one\ntwo\nthree\n");
    assert.ok(control.connected);
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("once the process is connected nothing else can connect, with or without the nonce", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n0nce");
    const conn = await connectWith(control.path, "n0nce\n");
    control.write(encoder.encode("x\n"));
    await readBytes(conn, 2);
    await assert.rejects(
      Deno.connect({ transport: "unix", path: control.path }),
    );
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("a large frame arrives whole, before the frames written after it", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n");
    const conn = await connectWith(control.path, "n\n");
    // Far more than a socket buffer: written in parts.
    const big = new Uint8Array(8 << 20).fill(97);
    big[big.length - 1] = 10;
    control.write(big);
    control.write(encoder.encode("after\n"));
    const got = await readBytes(conn, big.length + 6);
    assert.equal(got.length, big.length + 6);
    assert.ok(got.subarray(0, big.length).every((b, i) => b === big[i]));
    assert.equal(new TextDecoder().decode(got.subarray(big.length)), "after\n");
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("closed, it ends the process's connection, takes no new one, and drops later writes", async () => {
  const control = new ControlSocket();
  control.accept("n");
  const conn = await connectWith(control.path, "n\n");
  control.write(encoder.encode("a\n"));
  assert.equal(new TextDecoder().decode(await readBytes(conn, 2)), "a\n");
  control.close();
  control.write(encoder.encode("late\n"));
  assert.ok(await ended(conn));
  conn.close();
  await assert.rejects(
    Deno.connect({ transport: "unix", path: control.path }),
  );
  // Closed before anyone connected: the path is gone too.
  const unused = new ControlSocket();
  unused.accept("n");
  unused.close();
  await assert.rejects(Deno.connect({ transport: "unix", path: unused.path }));
});

// Whether the peer closed `conn` within a bound (a kept connection would
// otherwise hang the test).
function endsSoon(conn: Deno.Conn): Promise<boolean> {
  return settlesWithin(ended(conn), 5_000);
}

Deno.test("a connection that never says a nonce is closed once the process is found, and when the socket closes", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n");
    const silent = await Deno.connect({
      transport: "unix",
      path: control.path,
    });
    const conn = await connectWith(control.path, "n\n");
    control.write(encoder.encode("x\n"));
    await readBytes(conn, 2);
    assert.ok(await endsSoon(silent), "the silent connection was kept open");
    silent.close();
    conn.close();
  } finally {
    control.close();
  }
  const other = new ControlSocket();
  other.accept("n");
  const silent = await Deno.connect({ transport: "unix", path: other.path });
  // Connections are taken in order: once a later one is answered (closed,
  // without the nonce), the silent one has been taken too.
  const wrong = await connectWith(other.path, "wrong\n");
  assert.ok(await endsSoon(wrong));
  wrong.close();
  other.close();
  assert.ok(await endsSoon(silent), "close left a connection open");
  silent.close();
});

// The command line, and deaths told apart.

Deno.test("sandboxCommand() passes only the environment the grant names", () => {
  Deno.env.set("SKILLBOX_SPAWN_SECRET", "s3cret");
  Deno.env.set("SKILLBOX_SPAWN_OK", "fine");
  try {
    const plain = sandboxCommand({
      flags: [],
      grant: {},
      memoryMb: 64,
      cwd: "/",
    });
    assert.equal(plain.env.SKILLBOX_SPAWN_SECRET, undefined);
    assert.equal(plain.env.PATH, undefined);
    const granted = sandboxCommand({
      flags: [],
      grant: { env: ["SKILLBOX_SPAWN_OK"], run: ["git"] },
      memoryMb: 64,
      cwd: "/",
    });
    assert.equal(granted.env.SKILLBOX_SPAWN_OK, "fine");
    assert.equal(granted.env.SKILLBOX_SPAWN_SECRET, undefined);
    assert.equal(granted.env.PATH, Deno.env.get("PATH"));
  } finally {
    Deno.env.delete("SKILLBOX_SPAWN_SECRET");
    Deno.env.delete("SKILLBOX_SPAWN_OK");
  }
});

Deno.test("sandboxCommand() never allows everything or remote modules", () => {
  const cmd = sandboxCommand({
    flags: ["--allow-net=x.io"],
    grant: {},
    memoryMb: 64,
    cwd: "/tmp",
  });
  assert.ok(!cmd.args.some((a) => a === "-A" || a === "--allow-all"));
  assert.ok(cmd.args.includes("--cached-only"));
  assert.ok(
    cmd.args.includes("--v8-flags=--max-old-space-size=64,--single-threaded"),
  );
  // No config: the host project's deno.json never applies inside.
  assert.ok(cmd.args.includes("--no-config"));
  assert.match(cmd.args.at(-1)!, /sandbox\/process\/main\.ts$/);
  assert.equal(cmd.cwd, "/tmp");
});

Deno.test("sandboxCommand() lets the process reach its control socket, adding only the flags it lacks", () => {
  const cmd = sandboxCommand({
    flags: ["--allow-read"],
    grant: {},
    memoryMb: 64,
    cwd: "/",
    controlSocket: "/s/c.sock",
  });
  const at = cmd.args.indexOf("--allow-read");
  assert.deepEqual(cmd.args.slice(at, at + 3), [
    "--allow-read",
    "--allow-write=/s/c.sock",
    "--allow-net=unix:/s/c.sock",
  ]);
  assert.ok(!cmd.args.includes("--allow-read=/s/c.sock"));
  assert.deepEqual(cmd.sockets, ["/s/c.sock"]);
});

const trap: Deno.CommandStatus = {
  success: false,
  code: 133,
  signal: "SIGTRAP",
};

Deno.test("a heap-limit abort is out of memory; a trap or an exit without the message is not", () => {
  assert.equal(
    ranOutOfMemory(trap, "<--- JS stacktrace --->\nheap limit"),
    true,
  );
  assert.equal(
    ranOutOfMemory(
      { success: false, code: 1, signal: "SIGTRAP" },
      "Out Of Memory",
    ),
    true,
  );
  assert.equal(ranOutOfMemory(trap, "Trace/breakpoint trap"), false);
  // A skill printing the words and exiting does not fake one.
  assert.equal(
    ranOutOfMemory({ success: false, code: 1, signal: null }, "out of memory"),
    false,
  );
  assert.equal(
    ranOutOfMemory(
      { success: false, code: 137, signal: "SIGKILL" },
      "heap limit",
    ),
    false,
  );
});

// Processes that cannot be spawned.

const NONE = {
  read: false,
  write: false,
  net: false,
  env: false,
  run: false,
  sys: false,
  ffi: false,
  import: false,
} as const;

function proxy() {
  return openEgressProxy({
    broker: new EgressBroker({ resolve: () => Promise.resolve(["192.0.2.1"]) }),
    allow: ["example.test"],
  });
}

async function closed(path: string): Promise<void> {
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
  await assert.rejects(Deno.connect({ transport: "unix", path }));
}

Deno.test("a sandbox process that cannot be spawned closes the egress proxy opened for it", async () => {
  const opened = proxy();
  assert.ok((await Deno.lstat(opened.path)).isSocket);
  assert.throws(() =>
    new SandboxProcess({
      key: "k",
      command: {
        program: "/nonexistent/skillbox-deno",
        args: [],
        env: {},
        cwd: Deno.cwd(),
        release: () => opened.close(),
      },
      permissions: NONE,
      bootstrap: "",
      spareWorkers: 0,
      maxWarmWorkers: 1,
      maxResultBytes: 1024,
      maxEventBytes: 1024,
      deadlines: new Deadlines(),
    })
  );
  await closed(opened.path);
});

Deno.test("a pool whose process cannot be spawned fails the call, leaks no proxy, and starts no spare", async () => {
  const paths: string[] = [];
  const wrap: CommandWrapper = (command) => {
    const opened = proxy();
    paths.push(opened.path);
    return {
      ...command,
      program: "/nonexistent/skillbox-deno",
      release: () => opened.close(),
    };
  };
  const pool = testPool({
    spareProcesses: 1,
    wrapper: () => Promise.resolve(wrap),
  });
  try {
    await assert.rejects(
      Promise.resolve(
        pool.processFor({}, { principal: "session:a", session: "a" }),
      ),
    );
    assert.equal(paths.length, 1);
    for (const path of paths) await closed(path);
    assert.deepEqual([...pool.processes], []);
  } finally {
    await pool.close();
  }
});

// Every line the sandbox writes fits the bound the host reads lines with,
// whatever the text holds: a character of JSON is up to 3 bytes of UTF-8,
// and a string's escapes count in the result's bound. A line over the
// host's bound is dropped whole, so its call used to wait for its timeout.
Deno.test("results, events and errors of any text reach the host within its line bound", async (t) => {
  const dir = await Deno.makeTempDir();
  const bootstrap = await loadBootstrap();
  const call = async (
    limits: { maxResultBytes: number; maxEventBytes: number },
    run: string,
  ) => {
    const path = join(dir, `m${crypto.randomUUID()}.ts`);
    await Deno.writeTextFile(path, `export default { run: ${run} };\n`);
    const proc = SandboxProcess.start({ ...TEST_LIMITS, ...limits, cwd: dir }, {
      key: "k",
      grant: { read: [dir] },
      bootstrap,
      wrap: UNWRAPPED,
      deadlines,
    });
    const events: Record<string, unknown>[] = [];
    try {
      await proc.ready;
      proc.lease();
      const outcome = await proc.run(callOp(path, {}), {
        timeoutMs: 30_000,
        hooks: { ...hooks, onEvent: (_kind, data) => events.push(data) },
      });
      return { outcome, events };
    } finally {
      proc.kill();
      await proc.exited;
    }
  };
  const K64 = 64 * 1024;
  const K4 = 4 * 1024;
  try {
    await t.step("a result of 3-byte characters under the bound", async () => {
      const { outcome } = await call(
        { maxResultBytes: K64, maxEventBytes: K4 },
        `() => "中".repeat(65_000)`,
      );
      assert.deepEqual(outcome, {
        ok: true,
        value: "中".repeat(65_000),
        truncated: false,
      });
    });
    await t.step("a result over the bound once escaped", async () => {
      const { outcome } = await call(
        { maxResultBytes: K64, maxEventBytes: K4 },
        `() => "\\u0001".repeat(100_000)`,
      );
      assert.equal(outcome.ok, true, JSON.stringify(outcome).slice(0, 200));
      assert.ok(outcome.ok && outcome.truncated);
      const json = JSON.stringify(outcome.ok && outcome.value);
      assert.ok(json.length <= K64 + 2, `${json.length}`);
    });
    await t.step("an event of 3-byte characters under the bound", async () => {
      const { outcome, events } = await call(
        { maxResultBytes: K4, maxEventBytes: K64 },
        `(_a, ctx) => { ctx.log("info", "中".repeat(65_000)); return 1; }`,
      );
      assert.deepEqual(outcome, { ok: true, value: 1, truncated: false });
      assert.deepEqual(events, [
        { level: "info", message: "中".repeat(65_000) },
      ]);
    });
    await t.step("a module's load error of any length", async () => {
      const { outcome } = await call(
        { maxResultBytes: K64, maxEventBytes: K4 },
        `(() => { throw new Error("中".repeat(200_000)); })()`,
      );
      assert.equal(outcome.ok, false, JSON.stringify(outcome).slice(0, 200));
      assert.ok(!outcome.ok && outcome.code === "tool_error", outcome.code);
      assert.match(!outcome.ok ? outcome.message : "", /^Cannot load module/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// A worker's ctx RPCs each hold host work and memory until answered (a
// fetch's body is up to 8 MiB): one operation has a bounded number in
// flight, whatever its worker posts. This worker's bootstrap is hostile
// (module code shares the bootstrap's realm, so nothing it counts is
// trusted): it posts 100 fetches at once and reports each refusal.
const FLOOD_BOOTSTRAP = `
let op = "", answered = 0;
onmessage = (e) => {
  const m = typeof e.data === "string" ? JSON.parse(e.data) : e.data;
  if (m.t === "load") postMessage({ t: "loaded" });
  else if (m.t === "op") {
    op = m.id;
    for (let rid = 1; rid <= 100; rid++) {
      postMessage({ t: "rpc", id: op, rid, method: "fetch", payload: { url: "http://a.test/" } });
    }
  } else if (m.t === "rpc_result") {
    answered++;
    if (!m.ok) {
      postMessage({ t: "events", batch: [{ id: op, kind: "log", data: { message: m.error } }] });
    }
    if (answered === 100) postMessage({ t: "result", id: op, ok: true, value: "done" });
  }
};
postMessage({ t: "ready" });
`;

Deno.test("one operation has at most MAX_RPCS_IN_FLIGHT ctx requests in flight in the host; the rest are refused", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "m.ts");
  await Deno.writeTextFile(path, "export default {};\n");
  const proc = SandboxProcess.start({ ...TEST_LIMITS, cwd: dir }, {
    key: "k",
    grant: { read: [dir] },
    bootstrap: FLOOD_BOOTSTRAP,
    wrap: UNWRAPPED,
    deadlines,
  });
  let running = 0;
  let most = 0;
  let refused = 0;
  const held: (() => void)[] = [];
  const all = Promise.withResolvers<void>();
  const seen = () => {
    if (held.length + refused === 100) all.resolve();
  };
  try {
    await proc.ready;
    proc.lease();
    const outcome = proc.run(callOp(path, {}), {
      timeoutMs: 30_000,
      hooks: {
        ...hooks,
        onEvent(_kind, data) {
          assert.match(String(data.message), /Too many ctx requests in flight/);
          refused++;
          seen();
        },
        fetch() {
          most = Math.max(most, ++running);
          return new Promise((resolve) => {
            held.push(() => {
              running--;
              resolve({ status: 200, headers: {}, body: "" } as never);
            });
            seen();
          });
        },
      },
    });
    await Promise.race([all.promise, outcome]);
    assert.equal(most, MAX_RPCS_IN_FLIGHT);
    assert.equal(refused, 100 - MAX_RPCS_IN_FLIGHT);
    for (const release of held) release();
    assert.deepEqual(await outcome, {
      ok: true,
      value: "done",
      truncated: false,
    });
  } finally {
    proc.kill();
    await proc.exited;
    await Deno.remove(dir, { recursive: true });
  }
});

// V8's heap cap (`--max-old-space-size`) holds one isolate's heap: not the
// memory of binary buffers, nor the sum of a process's workers (each has
// its own). A process is held to its resident cap as a whole.
Deno.test("a process holding binary buffers past its resident cap ends with out_of_memory", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "buffers.ts");
  await Deno.writeTextFile(
    path,
    `const kept = [];
     export default { run() {
       for (let i = 0; i < 16; i++) kept.push(new Uint8Array(64 << 20).fill(1));
       return new Promise(() => {});
     } };\n`,
  );
  const proc = SandboxProcess.start(
    { ...TEST_LIMITS, memoryMb: 64, residentMb: 256, cwd: dir },
    {
      key: "k",
      grant: { read: [dir] },
      bootstrap: await loadBootstrap(),
      wrap: UNWRAPPED,
      deadlines,
    },
  );
  try {
    await proc.ready;
    proc.lease();
    const outcome = await proc.run(callOp(path, {}), {
      timeoutMs: 30_000,
      hooks: null,
    });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.code, "out_of_memory");
  } finally {
    proc.kill();
    await proc.exited;
    await Deno.remove(dir, { recursive: true });
  }
});
