import assert from "node:assert/strict";
import { dataOf, makeCtx } from "../../tests/support/skill_ctx.ts";
import toolkit from "./toolkit.ts";
import runCommand from "./run_command.ts";

const allowed = ["echo", "cat", "pwd", "printenv", "ls", "sleep", "/bin/true"];

/** A ctx with the config as the host hands it: the schema's defaults under. */
function shellCtx(config: Record<string, unknown>, signal?: AbortSignal) {
  const defaults = {
    max_output_bytes: toolkit.config.properties.max_output_bytes.default,
  };
  return makeCtx({ ...defaults, ...config }, signal);
}

Deno.test("run_command runs an allowed command and streams its output", async () => {
  const t = shellCtx({ allowed_commands: allowed });
  const out = await runCommand.run(
    { command: "echo", args: ["hello", "$HOME", "a|b", "*"] },
    t.ctx,
  ) as { exit_code: number; summary: string };
  const r = dataOf(out);
  // No shell: metacharacters arrive as literal arguments.
  assert.equal(r.stdout, "hello $HOME a|b *\n");
  assert.equal(r.exit_code, 0);
  assert.equal(out.exit_code, 0);
  assert.deepEqual(t.logs("info"), ["hello $HOME a|b *"]);
});

Deno.test("run_command refuses commands that are not allowed", async () => {
  const t = shellCtx({ allowed_commands: allowed });
  for (const command of ["sh", "rm", "/usr/bin/rm", "./echo", "/tmp/echo"]) {
    await assert.rejects(
      () =>
        Promise.resolve(
          runCommand.run({ command, args: ["-c", "true"] }, t.ctx),
        ),
      /is not allowed: allowed commands are "echo"/,
      command,
    );
  }
});

Deno.test("run_command maps a bare name to an allowed absolute path", async () => {
  const r = dataOf(
    await runCommand.run(
      { command: "true" },
      shellCtx({ allowed_commands: allowed }).ctx,
    ),
  );
  assert.equal(r.exit_code, 0);
});

Deno.test("run_command reports a failing exit code and stderr as warn logs", async () => {
  const t = shellCtx({ allowed_commands: allowed });
  const r = dataOf(
    await runCommand.run(
      { command: "ls", args: ["/definitely/not/here"] },
      t.ctx,
    ),
  );
  assert.notEqual(r.exit_code, 0);
  assert.match(r.stderr as string, /not/i);
  assert.equal(t.logs("warn").length, 1);
});

Deno.test("run_command passes stdin, cwd and only the configured env", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_shell_" });
  await Deno.mkdir(`${dir}/sub`);
  const cfg = { allowed_commands: allowed, cwd: dir, env: { GREETING: "hi" } };
  const cat = dataOf(
    await runCommand.run(
      { command: "cat", stdin: "a\nb\n" },
      shellCtx(cfg).ctx,
    ),
  );
  assert.equal(cat.stdout, "a\nb\n");
  const pwd = dataOf(
    await runCommand.run({ command: "pwd", cwd: "sub" }, shellCtx(cfg).ctx),
  );
  assert.equal(pwd.stdout, `${await Deno.realPath(dir)}/sub\n`);
  await assert.rejects(
    () =>
      Promise.resolve(
        runCommand.run({ command: "pwd", cwd: "../" }, shellCtx(cfg).ctx),
      ),
    /without \.\./,
  );
  const env = dataOf(
    await runCommand.run({ command: "printenv" }, shellCtx(cfg).ctx),
  );
  const names = (env.stdout as string).trim().split("\n").map((l) =>
    l.slice(0, l.indexOf("="))
  ).sort();
  assert.deepEqual(names, ["GREETING", "LANG", "PATH"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("run_command reads output while it writes a large stdin", async () => {
  // cat echoes as it reads: with its output unread, its stdout pipe fills,
  // it stops reading stdin, and a write of all of stdin first never ends.
  // The signal only bounds a failure: it aborts a call still waiting.
  const stdin = "x".repeat(1_000_000);
  const out = await runCommand.run(
    { command: "cat", stdin },
    shellCtx({ allowed_commands: allowed }, AbortSignal.timeout(20_000)).ctx,
  );
  const r = dataOf(out);
  assert.equal(r.exit_code, 0);
  assert.equal(r.stdout, stdin.slice(0, 100_000));
  assert.equal(r.stdout_truncated, true);
});

Deno.test("run_command caps captured output and logged lines", async () => {
  const t = shellCtx({ allowed_commands: allowed, max_output_bytes: 1024 });
  const r = dataOf(
    await runCommand.run({ command: "echo", args: ["x".repeat(5000)] }, t.ctx),
  );
  assert.equal((r.stdout as string).length, 1024);
  assert.equal(r.stdout_truncated, true);
  // The line ends in the chunk that holds it, and was logged whole.
  assert.deepEqual(t.logs("info"), ["x".repeat(1024)]);
});

Deno.test("run_command bounds a long line and multibyte output in bytes", async () => {
  // Without a newline, a line was held whole and logged as one event of
  // any size; and the cap cut characters, not bytes.
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/one_line`, "x".repeat(1 << 20));
  await Deno.writeTextFile(`${dir}/accents`, "é".repeat(2000));
  const t = shellCtx({ allowed_commands: allowed, max_output_bytes: 1024 });
  await runCommand.run({ command: "cat", args: [`${dir}/one_line`] }, t.ctx);
  assert.deepEqual(t.logs("info"), ["x".repeat(1024)]);
  const r = dataOf(
    await runCommand.run({ command: "cat", args: [`${dir}/accents`] }, t.ctx),
  );
  assert.equal(r.stdout, "é".repeat(512));
  assert.equal(r.stdout_truncated, true);
  // A U+FFFD the output holds is kept when it fits whole.
  await Deno.writeTextFile(`${dir}/replacement`, "x".repeat(1021) + "\uFFFDyy");
  const kept = dataOf(
    await runCommand.run(
      { command: "cat", args: [`${dir}/replacement`] },
      t.ctx,
    ),
  );
  assert.equal(kept.stdout, "x".repeat(1021) + "\uFFFD");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("run_command kills a long command when the call is aborted", async () => {
  // `cat` of a FIFO nobody writes never ends on its own: the call can only
  // settle before the test writes to it if the command was killed.
  const dir = await Deno.makeTempDir();
  const fifo = `${dir}/never`;
  await new Deno.Command("mkfifo", { args: [fifo] }).output();
  const ac = new AbortController();
  const t = shellCtx({ allowed_commands: allowed }, ac.signal);
  const running = Promise.resolve(
    runCommand.run({ command: "cat", args: [fifo] }, t.ctx),
  );
  ac.abort(new Error("timed out"));
  // The timer only bounds a failure: it ends a command still running.
  let released = false;
  const timer = setTimeout(() => {
    released = true;
    Deno.writeTextFile(fifo, "");
  }, 10_000);
  await assert.rejects(
    running,
    /was killed: the call was aborted \(timed out\)/,
  );
  assert.equal(released, false, "the call waited for the command");
  clearTimeout(timer);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("run_command settles an aborted call whose grandchild holds stdin", async () => {
  // The grandchild keeps the stdin pipe open without reading it, so the
  // write of 1 MB never ends; the call must not wait for it after abort.
  // It holds stdin until the test opens `release`, then says it let go
  // by closing `done`.
  const dir = await Deno.makeTempDir();
  const [release, done] = [`${dir}/release`, `${dir}/done`];
  await new Deno.Command("mkfifo", { args: [release, done] }).output();
  const ac = new AbortController();
  const t = shellCtx({ allowed_commands: ["sh"] }, ac.signal);
  const ready = Promise.withResolvers<void>();
  const ctx: typeof t.ctx = {
    ...t.ctx,
    log: (level, message) => {
      t.ctx.log(level, message);
      if (message === "ready") ready.resolve();
    },
  };
  const running = Promise.resolve(runCommand.run({
    command: "sh",
    args: [
      "-c",
      'exec 3<&0; { echo ready; cat "$1"; exec <&-; : >"$2"; } <&3 3<&- & exit 0',
      "sh",
      release,
      done,
    ],
    stdin: "x".repeat(1_000_000),
  }, ctx));
  await ready.promise;
  ac.abort(new Error("timed out"));
  const unblock = () =>
    Deno.open(release, { write: true }).then((f) => f.close());
  // The timer only bounds a failure: it frees a call still waiting.
  let released = false;
  const timer = setTimeout(() => {
    released = true;
    unblock();
  }, 10_000);
  await assert.rejects(running, /was killed: the call was aborted/);
  assert.equal(released, false, "the call waited for the grandchild");
  clearTimeout(timer);
  await unblock();
  await Deno.readTextFile(done);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("run_command scans each output byte for newlines once", async () => {
  // A long line sent in many small writes arrives in many chunks; the
  // held line was scanned again for each one, quadratic in its length.
  // The spies count the characters searched for "\n", whatever the chunks.
  const n = 20_000;
  let scanned = 0;
  const { indexOf, split } = String.prototype;
  String.prototype.indexOf = function (this: string, s, from) {
    if (s === "\n") scanned += this.length - (from ?? 0);
    return indexOf.call(this, s, from);
  };
  String.prototype.split = function (this: string, s: string, limit) {
    if (s === "\n") scanned += this.length;
    return Reflect.apply(split, this, [s, limit]);
  } as typeof split;
  try {
    const r = dataOf(
      await runCommand.run({
        command: "sh",
        args: [
          "-c",
          `i=0; while [ $i -lt ${n} ]; do printf x; i=$((i+1)); done`,
        ],
      }, shellCtx({ allowed_commands: ["sh"] }).ctx),
    );
    assert.equal(r.stdout, "x".repeat(n));
  } finally {
    Object.assign(String.prototype, { indexOf, split });
  }
  assert.ok(scanned <= 2 * n, `${scanned} characters scanned for ${n}`);
});

Deno.test("shell permissions follow the config", () => {
  const perms = toolkit.permissions({
    allowed_commands: ["git"],
    cwd: "/work/repo",
  });
  assert.deepEqual(perms, {
    run: ["git"],
    read: ["/work/repo"],
    write: ["/work/repo"],
  });
  assert.deepEqual(toolkit.permissions({}), { run: [], read: [], write: [] });
});
