/**
 * The OS layer on its own: a confined process holding every Deno permission
 * (as if Deno's checks were bypassed: raw descriptors, symlinks, a
 * subprocess) still cannot reach past its grant. Needs bubblewrap; ignored,
 * saying why, where it does not work.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { confineArgs, MAX_TASKS } from "../../runtime/confine/confine.ts";
import {
  confinement,
  NEEDS_CONFINEMENT,
  runConfined,
  spawnConfined,
} from "./_confined.ts";

const ignore = !confinement.active;

Deno.test({
  name: "a confined process cannot read host files outside its grant" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    const granted = await Deno.makeTempDir({ prefix: "granted_" });
    try {
      await Deno.writeTextFile(join(outside, "secret.txt"), "TOP-SECRET");
      await Deno.writeTextFile(join(granted, "ok.txt"), "fine");
      const hostSource = new URL("../../runtime/config.ts", import.meta.url)
        .pathname;
      const targets = [
        "/etc/passwd",
        "/etc/hostname",
        "/root/.bashrc",
        hostSource,
        join(outside, "secret.txt"),
        `/proc/${Deno.pid}/environ`,
      ];
      const run = await runConfined(
        `const out = {};
        for (const p of ${JSON.stringify(targets)}) {
          try { out[p] = Deno.readTextFileSync(p).slice(0, 20); }
          catch (e) { out[p] = e.name; }
        }
        out.ok = Deno.readTextFileSync(${
          JSON.stringify(join(granted, "ok.txt"))
        });
        out.etc = (() => { try { return [...Deno.readDirSync("/etc")].map((e) => e.name); } catch (e) { return e.name; } })();
        console.log(JSON.stringify(out));`,
        { grant: { read: [granted] } },
      );
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      for (const p of targets) assert.equal(seen[p], "NotFound", p);
      assert.equal(seen.ok, "fine");
      // /etc exists only for the alternatives links of a `run` grant.
      assert.equal(seen.etc, "NotFound");
    } finally {
      await Deno.remove(outside, { recursive: true });
      await Deno.remove(granted, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a confined process cannot write outside its write grant, nor fill memory through files" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const readOnly = await Deno.makeTempDir({ prefix: "ro_" });
    const writable = await Deno.makeTempDir({ prefix: "rw_" });
    try {
      const run = await runConfined(
        `const out = {};
        for (const p of ["/x", "/usr/x", ${
          JSON.stringify(join(readOnly, "x"))
        }, ${JSON.stringify(join(writable, "x"))}, "/tmp/x"]) {
          try { Deno.writeTextFileSync(p, "w"); out[p] = "written"; }
          catch (e) { out[p] = e.name; }
        }
        try {
          const f = Deno.openSync("/tmp/big", { write: true, create: true });
          const chunk = new Uint8Array(1 << 20);
          for (let i = 0; i < 256; i++) f.writeSync(chunk);
          out.big = "filled";
        } catch (e) { out.big = e.name; }
        console.log(JSON.stringify(out));`,
        { grant: { read: [readOnly], write: [writable] } },
      );
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      assert.notEqual(seen["/x"], "written");
      assert.notEqual(seen["/usr/x"], "written");
      assert.notEqual(seen[join(readOnly, "x")], "written");
      assert.equal(seen[join(writable, "x")], "written");
      assert.equal(seen["/tmp/x"], "written");
      // The private /tmp is bounded (64 MiB): a file cannot eat host memory.
      assert.notEqual(seen.big, "filled");
      assert.equal(await Deno.readTextFile(join(writable, "x")), "w");
      await assert.rejects(
        Deno.stat(join(readOnly, "x")),
        Deno.errors.NotFound,
      );
    } finally {
      await Deno.remove(readOnly, { recursive: true });
      await Deno.remove(writable, { recursive: true });
    }
  },
});

Deno.test({
  name: "a confined process sees only its own PID namespace in /proc" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const run = await runConfined(
      `const pids = [...Deno.readDirSync("/proc")].map((e) => e.name)
        .filter((n) => /^\\d+$/.test(n)).map(Number);
      let host = "absent";
      try { Deno.statSync("/proc/${Deno.pid}"); host = "present"; } catch {}
      console.log(JSON.stringify({ pids, host, self: Deno.pid }));`,
    );
    assert.equal(run.code, 0, run.stderr);
    const seen = JSON.parse(run.stdout);
    // bwrap's init and the process itself: nothing of the host.
    assert.ok(seen.pids.length <= 3, `pids: ${seen.pids}`);
    assert.ok(seen.self <= 3);
    if (Deno.pid > 3) assert.equal(seen.host, "absent");
  },
});

Deno.test({
  name:
    "a confined process cannot connect to the host's loopback or any address" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("reached"),
    );
    try {
      const port = server.addr.port;
      const addresses = ["127.0.0.1", "0.0.0.0", "::1"];
      for (const iface of Deno.networkInterfaces()) {
        if (iface.family === "IPv4") addresses.push(iface.address);
      }
      const run = await runConfined(
        `const out = {};
        for (const a of ${JSON.stringify(addresses)}) {
          try {
            const c = await Deno.connect({ hostname: a, port: ${port} });
            c.close(); out[a] = "connected";
          } catch (e) { out[a] = e.name; }
        }
        try { await fetch("http://127.0.0.1:${port}/"); out.fetch = "reached"; }
        catch (e) { out.fetch = e.name; }
        try { await Deno.resolveDns("example.com", "A"); out.dns = "resolved"; }
        catch (e) { out.dns = e.name; }
        console.log(JSON.stringify(out));`,
      );
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      for (const a of addresses) assert.notEqual(seen[a], "connected", a);
      assert.notEqual(seen.fetch, "reached");
      assert.notEqual(seen.dns, "resolved");
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "a symlink swapped in a granted folder never reaches outside it" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    const granted = await Deno.makeTempDir({ prefix: "granted_" });
    const secret = join(outside, "secret.txt");
    const inner = join(granted, "inner.txt");
    const link = join(granted, "link");
    await Deno.writeTextFile(secret, "TOP-SECRET");
    await Deno.writeTextFile(inner, "inner");
    await Deno.symlink(inner, link);
    let swapping = true;
    // The host side of the race: flip the link between a granted file and
    // the secret as fast as it can while the confined reader reads it.
    const swapper = (async () => {
      let flips = 0;
      while (swapping) {
        const tmp = `${link}.${flips++}`;
        await Deno.symlink(flips % 2 ? secret : inner, tmp);
        await Deno.rename(tmp, link);
      }
      return flips;
    })();
    try {
      const run = await runConfined(
        `let inner = 0, secret = 0, other = 0;
        const end = Date.now() + 1500;
        while (Date.now() < end) {
          try {
            const text = await Deno.readTextFile(${JSON.stringify(link)});
            if (text === "inner") inner++;
            else if (text.includes("SECRET")) secret++;
          } catch { other++; }
          try {
            await Deno.writeTextFile(${JSON.stringify(link)}, "inner");
          } catch { other++; }
        }
        console.log(JSON.stringify({ inner, secret, other }));`,
        { grant: { read: [granted], write: [granted] } },
      );
      swapping = false;
      const flips = await swapper;
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      assert.ok(flips > 10, `the race ran (${flips} flips)`);
      assert.ok(seen.other > 0, "the link pointed outside at some reads");
      assert.equal(seen.secret, 0);
      assert.equal(await Deno.readTextFile(secret), "TOP-SECRET");
    } finally {
      swapping = false;
      await swapper;
      await Deno.remove(outside, { recursive: true });
      await Deno.remove(granted, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "an allowed binary cannot read outside the grant whatever its arguments" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const granted = await Deno.makeTempDir({ prefix: "granted_" });
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    try {
      await Deno.writeTextFile(join(outside, "secret.txt"), "TOP-SECRET");
      const git = new Deno.Command("git", { args: ["init", "-q", granted] });
      assert.equal((await git.output()).code, 0);
      const secret = join(outside, "secret.txt");
      const attempts = [
        ["sh", ["-c", `cat /etc/passwd ${secret}; ls /root /work /home`]],
        ["git", [
          "-C",
          granted,
          "-c",
          `alias.x=!cat ${secret} /etc/passwd; env`,
          "x",
        ]],
        ["git", [
          "-C",
          granted,
          "--upload-pack",
          `cat ${secret}`,
          "ls-remote",
          ".",
        ]],
        ["sh", ["-c", `kill -9 ${Deno.pid}; echo $?`]],
      ];
      const run = await runConfined(
        `const out = [];
        for (const [cmd, args] of ${JSON.stringify(attempts)}) {
          const r = await new Deno.Command(cmd, { args, env: { GIT_CONFIG_NOSYSTEM: "1" } }).output();
          out.push(new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr));
        }
        console.log(JSON.stringify(out));`,
        {
          grant: { read: [granted], write: [granted], run: ["sh", "git"] },
          env: { PATH: "/usr/bin:/bin" },
        },
      );
      assert.equal(run.code, 0, run.stderr);
      const outputs: string[] = JSON.parse(run.stdout);
      assert.equal(outputs.length, attempts.length);
      for (const text of outputs) {
        assert.doesNotMatch(text, /TOP-SECRET|root:x:0/);
      }
      // They ran (the attack was tried), and failed for want of the files.
      assert.match(outputs[0]!, /No such file/);
      assert.match(outputs[1]!, /No such file/);
      // The host process is not visible, let alone killable.
      assert.doesNotMatch(outputs[3]!, /^0$/m);
    } finally {
      await Deno.remove(granted, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "a confined process and its children see only the granted environment" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    Deno.env.set("SKILLBOX_TEST_HOST_SECRET", "TOP-SECRET");
    try {
      const run = await runConfined(
        `const own = Deno.env.toObject();
        const r = await new Deno.Command("sh", { args: ["-c", "env"] }).output();
        console.log(JSON.stringify({ own, child: new TextDecoder().decode(r.stdout) }));`,
        { grant: { run: ["sh"] }, env: { GRANTED: "yes", PATH: "/usr/bin" } },
      );
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      assert.equal(seen.own.GRANTED, "yes");
      assert.equal(seen.own.SKILLBOX_TEST_HOST_SECRET, undefined);
      assert.doesNotMatch(seen.child, /TOP-SECRET/);
      assert.match(seen.child, /GRANTED=yes/);
    } finally {
      Deno.env.delete("SKILLBOX_TEST_HOST_SECRET");
    }
  },
});

Deno.test({
  name: "a confined process inherits no descriptor the host inherited" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // Deno opens everything close-on-exec, but a descriptor the host got
    // from its own parent without it (a supervisor's pipe, a log file, a
    // terminal) passes through every exec: bwrap's, then the program's.
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    const secret = join(outside, "secret.txt");
    await Deno.writeTextFile(secret, "TOP-SECRET\n");
    try {
      const run = await runConfined(
        `const r = await new Deno.Command("sh", {
          args: ["-c", "ls /proc/self/fd; cat <&9"],
        }).output();
        const text = new TextDecoder();
        console.log(JSON.stringify({
          fds: [...Deno.readDirSync("/proc/self/fd")].map((e) => {
            try {
              return Deno.readLinkSync("/proc/self/fd/" + e.name);
            } catch {
              return "";
            }
          }),
          child: text.decode(r.stdout) + text.decode(r.stderr),
        }));`,
        {
          grant: { run: ["sh"] },
          env: { PATH: "/usr/bin:/bin" },
          heldOpen: secret,
        },
      );
      assert.equal(run.code, 0, run.stderr);
      const seen = JSON.parse(run.stdout);
      assert.doesNotMatch(seen.child, /TOP-SECRET/);
      // The child tried, and fd 9 was not there; nor is the file open in
      // the process itself.
      assert.match(seen.child, /9: Bad file descriptor/);
      assert.ok(!seen.fds.includes(secret), `fds: ${seen.fds}`);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "nothing in a confined program's environment runs before bwrap" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // The environment is the program's (granted host variables, an
    // imported server's entry), and it reaches the bash that closes
    // inherited descriptors first, on the host: an exported function named
    // like a builtin, or BASH_ENV, would run there, unconfined.
    const host = await Deno.makeTempDir({ prefix: "outside_" });
    const proof = join(host, "ran-on-the-host");
    const hook = `echo HOST-SIDE > ${proof}`;
    await Deno.writeTextFile(join(host, "bash_env"), hook);
    const cmd = confineArgs(confinement.layout!, {
      program: "/bin/sh",
      args: ["-c", "echo confined"],
      grant: {},
      env: {
        "BASH_FUNC_exec%%": `() { ${hook}; }`,
        "BASH_FUNC_eval%%": `() { ${hook}; }`,
        BASH_ENV: join(host, "bash_env"),
        SHELLOPTS: "xtrace",
        PS4: `$(${hook})`,
      },
    });
    try {
      const out = await new Deno.Command(cmd.command, {
        args: cmd.args,
        env: cmd.env,
        clearEnv: true,
        stdin: "null",
      }).output();
      assert.equal(new TextDecoder().decode(out.stdout), "confined\n");
      await assert.rejects(Deno.stat(proof), Deno.errors.NotFound);
    } finally {
      await Deno.remove(host, { recursive: true });
    }
  },
});

Deno.test({
  name: "a grant swapped for a link after it was resolved is never mounted" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // The race a concurrent process with a write grant and `ln` could win:
    // the host resolves and admits a grant's real path, then, before bwrap
    // mounts it, a folder on that path becomes a link to the host.
    const granted = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "granted_" }),
    );
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    await Deno.writeTextFile(join(outside, "secret.txt"), "TOP-SECRET\n");
    const view = join(granted, "view");
    await Deno.mkdir(view);
    try {
      const cmd = confineArgs(confinement.layout!, {
        program: "/bin/sh",
        args: ["-c", `cat ${view}/secret.txt; ls ${view}`],
        grant: { read: [view] },
        env: {},
      });
      await Deno.remove(view);
      await Deno.symlink(outside, view);
      const out = await new Deno.Command(cmd.command, {
        args: cmd.args,
        env: cmd.env,
        clearEnv: true,
        stdin: "null",
      }).output();
      const text = new TextDecoder().decode(out.stdout) +
        new TextDecoder().decode(out.stderr);
      assert.doesNotMatch(text, /TOP-SECRET|secret\.txt\n/);
      assert.notEqual(out.code, 0, text);
      assert.match(text, /changed while it was mounted/);
    } finally {
      await Deno.remove(granted, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "a confined program fills no memory through /dev" + NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // bwrap's /dev is a tmpfs of its own, writable by the confined user and
    // bounded only by half the host's memory: past /tmp's bound and a
    // script's workspace quota.
    const cmd = confineArgs(confinement.layout!, {
      program: "/bin/sh",
      args: [
        "-c",
        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>/dev/null; " +
        "dd if=/dev/zero of=/dev/fill bs=1M count=200 2>/dev/null; " +
        'wc -c /dev/shm/fill /dev/fill; echo "/dev/null" > /dev/null && echo null ok',
      ],
      grant: {},
      env: {},
      tmpMb: 16,
    });
    const out = await new Deno.Command(cmd.command, {
      args: cmd.args,
      env: cmd.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    const shm = Number(/(\d+) \/dev\/shm\/fill/.exec(text)?.[1] ?? 0);
    assert.ok(shm > 0, `it wrote to /dev/shm: ${text}`);
    assert.ok(shm <= 16 * 1024 * 1024, `${shm} bytes in /dev/shm`);
    assert.doesNotMatch(text, /\d+ \/dev\/fill/, text);
    assert.match(text, /null ok/);
  },
});

Deno.test({
  name: "a fork bomb in a confined program stops at its task cap" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // The cap is RLIMIT_NPROC inside the namespace, which the kernel does
    // not enforce on a host running as root (the confined uid maps to
    // root's): run as nobody there, as a host should.
    const cmd = confineArgs(confinement.layout!, {
      program: "/bin/sh",
      // dash stops at the first fork that fails; each line counts one.
      args: [
        "-c",
        'i=0; while [ "$i" -lt 1500 ]; do sleep 60 & i=$((i+1)); echo "$i"; done',
      ],
      grant: {},
      env: {},
    });
    const asNobody = Deno.uid() === 0
      ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
      : [];
    const [program, ...args] = [...asNobody, cmd.command, ...cmd.args];
    const out = await new Deno.Command(program!, {
      args,
      env: cmd.env,
      clearEnv: true,
      cwd: "/",
      stdin: "null",
    }).output();
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    const started = Number(lines.at(-1));
    assert.ok(started > 100, `it ran: ${started} started`);
    assert.ok(started < MAX_TASKS, `${started} started`);
    assert.match(new TextDecoder().decode(out.stderr), /fork/i);
  },
});

Deno.test({
  name: "killing the confined process takes its whole process tree down" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const marker = `skillbox-orphan-${crypto.randomUUID()}`;
    const { child, cleanup } = await spawnConfined(
      `const c = new Deno.Command("sh", {
        args: ["-c", "sleep 300 & sleep 301 & wait", "${marker}"],
      }).spawn();
      await c.status;`,
      { grant: { run: ["sh"] }, env: { PATH: "/usr/bin:/bin" } },
    );
    // Wait (bounded) until the children exist on the host.
    // Reading other processes' /proc entries needs --allow-all; ps does
    // it for us under the test task's --allow-run.
    const orphans = async () => {
      const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] })
        .output();
      return new TextDecoder().decode(out.stdout).split("\n")
        .filter((line) => line.includes(marker) && !line.includes(" ps "));
    };
    const until = async (cond: () => Promise<boolean>, what: string) => {
      const end = Date.now() + 10_000;
      while (!(await cond())) {
        if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until(
      async () => (await orphans()).length > 0,
      "the children to start",
    );
    child.kill("SIGKILL"); // as the host kills a process: no clean-up
    await child.status;
    await cleanup();
    await until(
      async () => (await orphans()).length === 0,
      "the children to die",
    );
    assert.deepEqual(await orphans(), []);
  },
});
