import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  CLOSE_INHERITED,
  confineArgs,
  type ConfinementLayout,
  detectConfinement,
  grantMounts,
  RELAY_FILES,
  RELAY_MAIN,
  relayDenoArgs,
  relayFlags,
} from "./confine.ts";
import { prepareSandboxCache } from "./sandbox_processes.ts";
import { SANDBOX_MAIN, sandboxCommand } from "../sandbox/sandbox_process.ts";
import { interpreterArgv } from "../skills/scripts/run_script.ts";
import { controlArg } from "../../protocol/sandbox/control.ts";
import { RELAY_TOKEN_ARG } from "../../protocol/egress_relay.ts";
import { moduleGraph } from "../discovery/module_graph.ts";
import { SkillboxError } from "../../protocol/errors.ts";

const LAYOUT = {
  bwrap: "/usr/bin/bwrap",
  execPath: "/usr/lib/deno/deno",
  libDirs: ["/usr/lib/x86_64-linux-gnu"],
  links: [["/lib", "usr/lib"]] as Array<[string, string]>,
  denoDir: "/root/.cache/deno",
  systemDirs: ["/usr", "/etc/alternatives"],
};

Deno.test("detectConfinement() says why when bwrap is missing, and refuses when required", async () => {
  const auto = await detectConfinement("auto", { bwrap: "/nonexistent/bwrap" });
  assert.equal(auto.active, false);
  assert.equal(auto.layout, null);
  assert.match(auto.reason, /OS confinement is off: .*\/nonexistent\/bwrap/);
  await assert.rejects(
    detectConfinement("required", { bwrap: "/nonexistent/bwrap" }),
    (err: unknown) =>
      err instanceof SkillboxError && err.code === "runtime_error" &&
      /"required"/.test(err.message),
  );
});

Deno.test("detectConfinement() detects once per mode for every caller", async () => {
  // The host's answer is shared (pool, MCP servers, scripts); another
  // bwrap named is asked each time.
  const off = detectConfinement("off");
  const auto = detectConfinement("auto");
  assert.equal(detectConfinement("off"), off);
  assert.notEqual(auto, off);
  const other = { bwrap: "/nonexistent/bwrap" };
  const asked = [1, 2].map(() => detectConfinement("auto", other));
  assert.notEqual(asked[0], asked[1]);
  await Promise.all([off, auto, ...asked]);
});

Deno.test("detectConfinement() confines where bwrap works", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const status = await detectConfinement("auto");
  // On a Linux machine without working bwrap this states why; when it
  // works, the layout names the binary it runs.
  if (!status.active) {
    assert.match(status.reason, /OS confinement is off: /);
    // Only where bwrap itself cannot make a namespace: a broken probe
    // would otherwise pass here and skip every confined test.
    const plain = await new Deno.Command("bwrap", {
      args: ["--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "true"],
      stdout: "null",
      stderr: "null",
    }).output().catch(() => null);
    assert.notEqual(plain?.success, true, status.reason);
    return;
  }
  assert.match(status.reason, /bubblewrap/);
  assert.equal(status.layout?.execPath, await Deno.realPath(Deno.execPath()));
  // bash runs here (the adversarial tests start bwrap through it).
  assert.ok(status.layout?.closer?.endsWith("/bash"));
});

Deno.test("confineArgs() isolates every namespace and binds only the grant", () => {
  // Real folders: a grant is bound from its real path, and one that does
  // not exist is not bound.
  const srv = Deno.realPathSync(Deno.makeTempDirSync());
  const [input, output] = [`${srv}/in`, `${srv}/out`];
  Deno.mkdirSync(input);
  Deno.mkdirSync(output);
  const cmd = confineArgs(LAYOUT, {
    grant: { read: [input], write: [output], env: ["K"] },
    runtimeFiles: ["/app/sandbox/main.ts"],
    args: ["run", "/app/sandbox/main.ts"],
    env: { K: "v" },
  });
  for (
    const flag of [
      "--unshare-user",
      "--unshare-pid",
      "--unshare-net",
      "--unshare-ipc",
      "--unshare-uts",
      "--die-with-parent",
      "--new-session",
      "--disable-userns",
    ]
  ) assert.ok(cmd.args.includes(flag), flag);
  const pairs = (flag: string) =>
    cmd.args.flatMap((a, i) => a === flag ? [cmd.args[i + 1]] : []);
  assert.deepEqual(pairs("--bind-try"), [output]);
  assert.deepEqual(pairs("--ro-bind-try"), [
    "/root/.cache/deno/npm",
    "/root/.cache/deno/remote",
    input,
  ]);
  assert.deepEqual(pairs("--ro-bind"), [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/deno/deno",
    "/app/sandbox/main.ts",
  ]);
  // The private /tmp comes before the grants (which may live under /tmp).
  assert.ok(cmd.args.indexOf("/tmp") < cmd.args.indexOf(input));
  assert.deepEqual(cmd.env, {
    K: "v",
    DENO_DIR: "/root/.cache/deno",
    HOME: "/tmp",
    TMPDIR: "/tmp",
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  });
  // Environment values never go on the command line (other users see it).
  assert.ok(!cmd.args.includes("v"));
  Deno.removeSync(srv, { recursive: true });
});

Deno.test("confineArgs() binds a grant from its real path, a link's target only when admitted", () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync());
  const [real, link, gone] = [`${root}/real`, `${root}/link`, `${root}/gone`];
  Deno.mkdirSync(real);
  Deno.symlinkSync(real, link);
  const base = { runtimeFiles: [], args: [], env: {} };
  const grant = { read: [link, gone], write: [root] };
  const seen: Array<[string, boolean]> = [];
  const binds = (admit: boolean) =>
    confineArgs(LAYOUT, {
      ...base,
      grant,
      admitLink: (path, writable) => {
        seen.push([path, writable]);
        return admit;
      },
    }).args.join(" ");
  const admitted = binds(true);
  // The link's target at the link's path: what bwrap would have followed
  // to, fixed now, and a grant that does not exist is not bound at all.
  assert.match(admitted, new RegExp(`--ro-bind-try ${real} ${link}( |$)`));
  assert.doesNotMatch(admitted, new RegExp(gone));
  assert.deepEqual(seen, [[real, false]]);
  const refused = binds(false);
  assert.doesNotMatch(refused, new RegExp(`${link}( |$)`));
  assert.match(refused, new RegExp(`--bind-try ${root} ${root}`));
  Deno.removeSync(root, { recursive: true });
});

Deno.test("confineArgs() starts bwrap through the closer when there is one", () => {
  const base = { runtimeFiles: [], args: ["x"], grant: {}, env: {} };
  const direct = confineArgs(LAYOUT, base);
  const layout = { ...LAYOUT, closer: "/usr/bin/bash" };
  const closed = confineArgs(layout, base);
  assert.equal(closed.command, "/usr/bin/bash");
  assert.deepEqual(closed.args, [
    "-p",
    "-c",
    CLOSE_INHERITED,
    LAYOUT.bwrap,
    "0",
    ...direct.args,
  ]);
  // Grants: the closer opens their real paths, bwrap mounts what is open.
  const root = Deno.realPathSync(Deno.makeTempDirSync());
  Deno.mkdirSync(`${root}/in`);
  Deno.symlinkSync(`${root}/in`, `${root}/link`);
  const granted = confineArgs(layout, {
    ...base,
    grant: { read: [`${root}/link`], write: [root] },
  }).args;
  assert.deepEqual(granted.slice(4, 7), ["2", root, `${root}/in`]);
  const line = granted.join(" ");
  assert.match(line, new RegExp(` --bind-fd 3 ${root} `));
  assert.match(line, new RegExp(` --ro-bind-fd 4 ${root}/link `));
  assert.doesNotMatch(line, new RegExp(`-bind-try ${root}`));
  Deno.removeSync(root, { recursive: true });
});

Deno.test("confineArgs() never opens or binds a FIFO or a socket a grant names", async () => {
  // Opening a FIFO waits for a writer: the closer would never become bwrap,
  // and a module that can write where another's grant points could stop
  // every start of that module's processes.
  const root = Deno.realPathSync(Deno.makeTempDirSync());
  const [fifo, socket, file] = [`${root}/fifo`, `${root}/sock`, `${root}/f`];
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo failed");
  const listener = Deno.listen({ transport: "unix", path: socket });
  Deno.writeTextFileSync(file, "x");
  const base = { runtimeFiles: [], args: ["x"], env: {} };
  const grant = { read: [fifo, socket, file] };
  try {
    const layout = { ...LAYOUT, closer: "/usr/bin/bash" };
    const closed = confineArgs(layout, { ...base, grant }).args;
    assert.deepEqual(closed.slice(4, 6), ["1", file]);
    const direct = confineArgs(LAYOUT, { ...base, grant }).args.join(" ");
    assert.match(direct, new RegExp(`--ro-bind-try ${file} ${file}`));
    for (const line of [closed.join(" "), direct]) {
      assert.doesNotMatch(line, new RegExp(`${fifo}|${socket}`));
    }
  } finally {
    listener.close();
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("confineArgs() caps the tasks of a program that can fork", () => {
  const layout = { ...LAYOUT, maxTasks: 7 };
  const base = { runtimeFiles: [], args: ["a"], env: {} };
  const line = (
    spec: Parameters<typeof confineArgs>[1],
    at: ConfinementLayout = layout,
  ) => confineArgs(at, spec).args.join(" ");
  const python = { ...base, program: "/usr/bin/python3", grant: {} };
  assert.match(
    line(python),
    / -- \/usr\/bin\/prlimit --nproc=7 -- \/usr\/bin\/python3 a$/,
  );
  assert.match(
    line({ ...python, memoryBytes: 1024 }),
    / -- \/usr\/bin\/prlimit --as=1024 --nproc=7 -- \/usr\/bin\/python3 a$/,
  );
  // Deno forks only with a run grant.
  assert.doesNotMatch(line({ ...base, grant: {} }), /--nproc/);
  assert.match(
    line({ ...base, grant: { run: ["git"] } }),
    / -- \/usr\/bin\/prlimit --nproc=7 -- \/usr\/lib\/deno\/deno a$/,
  );
  // Without prlimit found on the machine, nothing is capped.
  assert.doesNotMatch(line(python, LAYOUT), /--nproc/);
});

Deno.test("confineArgs() binds system folders only for a run grant", () => {
  const without = confineArgs(LAYOUT, {
    grant: {},
    runtimeFiles: [],
    args: [],
    env: {},
  });
  assert.ok(!without.args.includes("/usr"));
  const withRun = confineArgs(LAYOUT, {
    grant: { run: ["git"] },
    runtimeFiles: [],
    args: [],
    env: {},
  });
  assert.ok(withRun.args.includes("/usr"));
  assert.ok(withRun.args.includes("/etc/alternatives"));
  // Already inside /usr: not bound twice.
  assert.ok(!withRun.args.includes("/usr/lib/x86_64-linux-gnu"));
});

Deno.test("grantMounts() mounts parents first and keeps a write grant writable", () => {
  assert.deepEqual(
    grantMounts({ read: ["/d/sub", "/d", "/c"], write: ["/d/sub"] }),
    [["/c", false], ["/d", false], ["/d/sub", true]],
  );
});

Deno.test("confineArgs() never keeps the network: hosts go through the egress socket", () => {
  const base = { runtimeFiles: [], args: [], env: {} };
  const none = confineArgs(LAYOUT, { ...base, grant: {} });
  assert.ok(none.args.includes("--unshare-net"));
  assert.ok(!none.args.includes("/run/skillbox/egress.sock"));
  const net = confineArgs(LAYOUT, {
    ...base,
    grant: { net: ["api.x.io"], read: ["/run"] },
    egress: { socket: "/tmp/e/x.sock" },
  });
  assert.ok(net.args.includes("--unshare-net"));
  // Nothing to resolve names with inside: the host resolves them.
  assert.ok(!net.args.includes("/etc/resolv.conf"));
  // The socket is bound after every grant, so no grant's mount covers it.
  const at = net.args.indexOf("/tmp/e/x.sock");
  assert.deepEqual(net.args.slice(at - 1, at + 2), [
    "--ro-bind",
    "/tmp/e/x.sock",
    "/run/skillbox/egress.sock",
  ]);
  assert.ok(at > net.args.lastIndexOf("/run"));
  // Its HTTP clients are sent to the relay its main runs.
  assert.equal(net.env.HTTPS_PROXY, "http://127.0.0.1:3128");
  assert.equal(none.env.HTTPS_PROXY, undefined);
  // Every other namespace stays.
  for (const flag of ["--unshare-pid", "--unshare-user", "--unshare-ipc"]) {
    assert.ok(net.args.includes(flag), flag);
  }
});

Deno.test("confineArgs() makes DENO_DIR a private tmpfs holding the sandbox cache's files read-only", () => {
  const layout = {
    bwrap: "/usr/bin/bwrap",
    execPath: "/opt/deno",
    libDirs: [],
    links: [],
    denoDir: "/c/deno",
    systemDirs: [],
  };
  const cache = "/c/deno/skillbox_sandbox";
  const cmd = confineArgs(layout, {
    // A grant covering the cache's folder must not cover the cache.
    grant: { write: ["/c"] },
    runtimeFiles: ["/app/main.ts"],
    args: ["run", "/app/main.ts"],
    env: {},
    cacheDir: cache,
  });
  const pairs = (flag: string) =>
    cmd.args.flatMap((a, i) =>
      a === flag ? [[cmd.args[i + 1], cmd.args[i + 2]]] : []
    );
  const tmpfs = cmd.args.indexOf(cache);
  assert.equal(cmd.args[tmpfs - 1], "--tmpfs");
  assert.ok(tmpfs > cmd.args.indexOf("/c"), "mounted after the grants");
  assert.deepEqual(
    pairs("--ro-bind-try").filter(([, to]) => to!.startsWith(cache)),
    [
      ["/c/deno/npm", `${cache}/npm`],
      ["/c/deno/remote", `${cache}/remote`],
      [`${cache}/v8_code_cache_v2`, `${cache}/v8_code_cache_v2`],
      [`${cache}/dep_analysis_cache_v2`, `${cache}/dep_analysis_cache_v2`],
      [`${cache}/node_analysis_cache_v2`, `${cache}/node_analysis_cache_v2`],
      [`${cache}/gen/file/app/main.ts.js`, `${cache}/gen/file/app/main.ts.js`],
    ],
  );
  // Nothing of the cache is bound writable.
  assert.ok(!pairs("--bind-try").some(([from]) => from!.startsWith("/c/deno")));
  assert.ok(!pairs("--bind").some(([from]) => from!.startsWith("/c/deno")));
  assert.equal(cmd.env.DENO_DIR, cache);
  // The host's whole cache is never bound, only its npm and remote parts.
  assert.equal(cmd.args.includes("/c/deno"), false);
});

Deno.test("RELAY_FILES is the relay main's whole module graph", async () => {
  const graph = await moduleGraph(fileURLToPath(RELAY_MAIN));
  assert.deepEqual([...graph.files].sort(), [...RELAY_FILES].sort());
});

Deno.test("relayDenoArgs() lets the relay run only the command it wraps", () => {
  const args = relayDenoArgs({ token: "ab" }, ["/usr/bin/curl", "-s"]);
  assert.deepEqual(args.filter((a) => a.startsWith("--allow-run")), [
    "--allow-run=/usr/bin/curl",
  ]);
  assert.ok(!args.some((a) => a === "-A" || a === "--allow-all"));
  assert.throws(() => relayDenoArgs({ token: "ab" }, []), TypeError);
});

// The pairs `flag a b` of a bwrap command line, for mounts.
function mounts(args: string[], flag: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  args.forEach((a, i) => {
    if (a === flag) out.push([args[i + 1]!, args[i + 2]!]);
  });
  return out;
}

Deno.test("confineArgs() binds the CA and resolver files with systemConfig, never /etc/ssl/private", () => {
  const cmd = confineArgs(LAYOUT, {
    program: "/usr/bin/python3",
    args: [],
    grant: {},
    env: {
      SSL_CERT_FILE: "/opt/corp/ca.pem",
      NODE_EXTRA_CA_CERTS: "/etc/ssl/private/key.pem",
      SSL_CERT_DIR: "/root/.ssh",
    },
    systemConfig: true,
  });
  const named = confineArgs(LAYOUT, {
    program: "/usr/bin/python3",
    args: [],
    grant: {},
    env: {
      SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
      SSL_CERT_DIR: "/etc/shadow",
    },
    systemConfig: true,
  });
  assert.ok(named.args.includes("/etc/ssl/certs/ca-certificates.crt"));
  assert.ok(!named.args.includes("/etc/shadow"));
  const bound = mounts(cmd.args, "--ro-bind-try").map(([from]) => from);
  for (
    const file of [
      "/etc/ssl/certs",
      "/usr/share/ca-certificates",
      "/etc/resolv.conf",
      "/etc/hosts",
      "/etc/nsswitch.conf",
      "/opt/corp/ca.pem",
    ]
  ) assert.ok(bound.includes(file), file);
  assert.ok(!bound.some((p) => p.includes("/private")), bound.join(" "));
  assert.ok(!bound.includes("/root/.ssh"));
  assert.ok(!bound.includes("/etc/ssl") && !bound.includes("/etc"));
  const without = confineArgs(LAYOUT, {
    program: "/usr/bin/python3",
    args: [],
    grant: {},
    env: {},
  });
  assert.ok(!without.args.includes("/etc/resolv.conf"));
});

Deno.test("confineArgs() hides protected host files inside a mount, also through a link", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/skillbox.jsonc`, "{}");
    await Deno.mkdir(`${dir}/store`);
    await Deno.symlink(dir, `${dir}-link`);
    const cmd = confineArgs(LAYOUT, {
      program: "/usr/bin/python3",
      args: [],
      grant: { read: [`${dir}-link`, "/srv/elsewhere"] },
      env: {},
      hidden: [`${dir}/skillbox.jsonc`, `${dir}/store`, "/srv/absent"],
    });
    // Seen through the link, hidden at the path the mount shows it.
    assert.deepEqual(mounts(cmd.args, "--ro-bind").slice(-1), [[
      "/dev/null",
      `${dir}-link/skillbox.jsonc`,
    ]]);
    const tmpfs = cmd.args.indexOf(`${dir}-link/store`);
    assert.equal(cmd.args[tmpfs - 1], "--tmpfs");
    assert.equal(cmd.args[tmpfs + 1], "--remount-ro");
    // Not under a mount, or absent: nothing to hide.
    const none = confineArgs(LAYOUT, {
      program: "/usr/bin/python3",
      args: [],
      grant: { read: ["/srv/elsewhere"] },
      env: {},
      hidden: [`${dir}/skillbox.jsonc`],
    });
    assert.ok(!none.args.includes("/dev/null"));
  } finally {
    await Deno.remove(`${dir}-link`);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("grantMounts() leaves out a path inside a mount of the same kind", () => {
  assert.deepEqual(
    grantMounts({
      read: ["/v", "/v/bin/python", "/w/data/x"],
      write: ["/w/data", "/w/data/x/y"],
    }),
    [["/v", false], ["/w/data", true], ["/w/data/x", false], [
      "/w/data/x/y",
      true,
    ]],
  );
});

// Each Deno child's command line as `[subcommand, sorted flags, ...rest]`:
// the flags before the first positional argument (the main script or the
// code), in any order (Deno parses them so), and everything from it on.
function shape(args: readonly string[]): unknown[] {
  const first = args.findIndex((a, i) => i > 0 && !a.startsWith("-"));
  const end = first === -1 ? args.length : first;
  return [args[0], args.slice(1, end).sort(), ...args.slice(end)];
}

// What each Deno child starts with, pinned: a change here changes what a
// child may do (fetch, prompt, read a config, use memory, start workers).
const OWN = ["--quiet", "--no-prompt", "--no-lock", "--no-config"];

Deno.test("every Deno child starts with its own pinned flags", async (t) => {
  await t.step("a sandbox process", () => {
    const cmd = sandboxCommand({
      flags: ["--allow-read=/s"],
      grant: {},
      memoryMb: 64,
      cwd: "/",
      controlSocket: "/c.sock",
    });
    assert.equal(cmd.program, Deno.execPath());
    assert.deepEqual(shape(cmd.args), [
      "run",
      [
        ...OWN,
        "--no-remote",
        "--cached-only",
        "--unstable-worker-options",
        "--v8-flags=--max-old-space-size=64,--single-threaded",
        "--allow-read=/s",
        "--allow-read=/c.sock",
        "--allow-write=/c.sock",
        "--allow-net=unix:/c.sock",
      ].sort(),
      fileURLToPath(SANDBOX_MAIN),
      controlArg("/c.sock"),
    ]);
  });
  await t.step("the egress relay in front of a command", () => {
    assert.deepEqual(shape(relayDenoArgs({ token: "ab" }, ["/bin/x", "-s"])), [
      "run",
      [
        ...OWN,
        "--no-remote",
        ...relayFlags(),
        "--allow-run=/bin/x",
      ].sort(),
      fileURLToPath(RELAY_MAIN),
      RELAY_TOKEN_ARG + "ab",
      "--",
      "/bin/x",
      "-s",
    ]);
  });
  await t.step("a Deno skill script", () => {
    const argv = interpreterArgv({ deno: true }, {
      deno: "/d/deno",
      memoryBytes: 64 << 20,
      filesRoot: { from: "/h/f", to: "/files", writable: true },
      hosts: ["a.io"],
    });
    assert.deepEqual(shape(argv.slice(1)), [
      "run",
      [
        "--no-prompt",
        "--no-config",
        "--cached-only",
        "--allow-read=/skill,/work,/files",
        "--allow-write=/work,/files",
        "--allow-net=a.io",
        "--v8-flags=--max-old-space-size=64",
      ].sort(),
    ]);
    assert.equal(argv[0], "/d/deno");
  });
  await t.step("the sandbox cache's warm-up runs", async () => {
    // A stand-in Deno binary that writes down its arguments.
    const dir = await Deno.makeTempDir();
    try {
      const fake = `${dir}/deno`;
      await Deno.writeTextFile(
        fake,
        '#!/bin/sh\nprintf "%s\\n" "$@" > "$DENO_DIR/args-$1"\n',
      );
      await Deno.chmod(fake, 0o755);
      const cache = await prepareSandboxCache({
        execPath: fake,
        denoDir: dir,
        mains: [SANDBOX_MAIN],
      });
      const args = async (sub: string) =>
        (await Deno.readTextFile(`${cache}/args-${sub}`)).split("\n")
          .slice(0, -1);
      assert.deepEqual(shape(await args("run")), [
        "run",
        [
          ...OWN,
          "--no-remote",
          "--cached-only",
          "--unstable-worker-options",
        ].sort(),
        fileURLToPath(SANDBOX_MAIN),
      ]);
      const evalArgs = await args("eval");
      assert.deepEqual(shape(evalArgs).slice(0, 2), [
        "eval",
        ["--quiet", "--no-lock", "--no-config", "--cached-only"].sort(),
      ]);
      assert.equal(evalArgs.length, 6);
      assert.match(evalArgs[5]!, /^await import\("npm:zod@/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
