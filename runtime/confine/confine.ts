/**
 * OS confinement with bubblewrap, for every untrusted process the host
 * starts: sandbox processes, imported stdio MCP servers and skill scripts.
 * Two things live here: whether confinement works on this machine
 * ({@link detectConfinement}, run once per host) and the one builder of a
 * bwrap command line from a declarative {@link ConfineSpec}
 * ({@link confineArgs}).
 *
 * A confined process gets its own user (mapped to `nobody`, no
 * capabilities), PID, network (nothing but a loopback that is down: a
 * process with hosts reaches them through the host's egress proxy, whose
 * socket is bound in), IPC and UTS namespaces, and a mount namespace in
 * which only what it needs exists: its program (the Deno binary and its
 * libraries with Deno's module cache read-only, or, for any other program,
 * the system folders read-only), its runtime files read-only, each read
 * grant read-only, each write grant read-write, the binds it is given, a
 * private `/tmp`, `/proc` of its own PID namespace and a minimal `/dev`;
 * for an imported MCP server also the CA certificates and resolver files,
 * and the host's own files hidden wherever a mount would show them. What a
 * command line needs is found by `installation.ts`, and every path an MCP
 * server's entry names is held to `mount_rule.ts`.
 *
 * @module
 */

import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SkillboxError } from "../../protocol/errors.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  RELAY_PORT,
  RELAY_PROXY_URL,
  RELAY_SOCKET,
  RELAY_TOKEN_ARG,
} from "../../protocol/egress_relay.ts";
import { mountable, realPath, within } from "./mount_rule.ts";
import { locateProgram } from "./installation.ts";
import { compareCodeUnits } from "../tools/filter.ts";

/**
 * `"auto"`: confine when it works, else say why and run with Deno's
 * permissions alone; `"required"`: refuse to start without it; `"off"`.
 */
export type ConfinementMode = "auto" | "required" | "off";

/** Where the pieces a confined process needs live on this machine. */
export interface ConfinementLayout {
  /** The `bwrap` binary. */
  bwrap: string;
  /** The Deno binary (real path). */
  execPath: string;
  /** Folders holding the Deno binary's shared libraries (real paths). */
  libDirs: string[];
  /** Top-level links such as `/lib -> usr/lib` (merged /usr), recreated inside. */
  links: Array<[path: string, target: string]>;
  /** Deno's cache folder (`DENO_DIR`, real path). */
  denoDir: string;
  /**
   * System folders bound read-only when the process runs other binaries
   * (a `run` grant, or a program that is not Deno): `/usr` and friends.
   */
  systemDirs: string[];
  /**
   * A bash that closes every descriptor above stderr before it becomes
   * bwrap ({@link CLOSE_INHERITED}). @default none: a descriptor the host
   * inherited without close-on-exec reaches the confined program
   */
  closer?: string;
  /**
   * The cap on tasks (processes and threads) of a program that can fork:
   * any program but Deno, and Deno with a `run` grant. Set by detection
   * where {@link PRLIMIT} exists, to {@link MAX_TASKS}. @default none
   */
  maxTasks?: number;
}

/**
 * The tasks (processes and threads) one confined program may have at once:
 * RLIMIT_NPROC, set by `prlimit` inside the namespace, where it counts the
 * confined uid of that user namespace only (so a fork bomb stops there,
 * and the host's other processes do not count). A Deno sandbox process
 * with 16 workers has about 24 threads; a headless browser a few hundred.
 * The kernel does not enforce it when the host runs as root (the confined
 * uid maps to root's).
 */
export const MAX_TASKS = 1024;

/**
 * What the {@link ConfinementLayout.closer} runs before it becomes bwrap
 * (`$0`; then how many grants it opens, their real paths, and bwrap's
 * arguments). First it closes every descriptor above stderr: Deno opens
 * its own close-on-exec and gives a child only its stdio, but one the host
 * inherited without close-on-exec (a supervisor's pipe, a log file, a
 * terminal) passes through every exec, and Deno has no way to close a raw
 * descriptor. Then it opens each grant at descriptors 3, 4, ... (bwrap's
 * `--bind-fd` mounts what is open, not a path it resolves again) and
 * checks, with one `readlink` of all of them, that each is still the real
 * path the host resolved and admitted: a folder on it swapped for a link
 * since then fails the start (125) instead of mounting the link's target.
 * It runs bwrap through `env`, which leaves bash's `SHLVL` out of the
 * program's environment (bwrap sets `PWD` itself).
 */
export const CLOSE_INHERITED = [
  "export -n PWD OLDPWD",
  'for f in /proc/self/fd/*; do f=${f##*/}; [ "$f" -gt 2 ] && eval "exec $f>&-"; done',
  "n=$1; shift; want=(); links=()",
  "for ((i = 3; i < n + 3; i++)); do",
  '  eval "exec $i<\\"\\$1\\"" || exit 125',
  '  want+=("$1"); links+=("/proc/$$/fd/$i"); shift',
  "done",
  "if ((n > 0)); then",
  '  mapfile -t got < <(/usr/bin/readlink -- "${links[@]}")',
  "  for ((i = 0; i < n; i++)); do",
  '    [ "${got[i]}" = "${want[i]}" ] || {',
  '      echo "Cannot confine: \\"${want[i]}\\" changed while it was mounted" >&2',
  "      exit 125",
  "    }",
  "  done",
  "fi",
  'exec /usr/bin/env -u SHLVL "$0" "$@"',
].join("\n");

/** What {@link detectConfinement} found. */
export interface ConfinementStatus {
  mode: ConfinementMode;
  /** Whether untrusted processes run confined. */
  active: boolean;
  /** One line for the banner: what is used, or why confinement is off. */
  reason: string;
  /** Where the binary, libraries and cache live; null when not active. */
  layout: ConfinementLayout | null;
}

/** What one confined process gets. */
export interface ConfineSpec {
  /**
   * The program run inside (absolute real path). The Deno binary gets its
   * libraries and Deno's cache; any other program gets the system folders
   * read-only and nothing of Deno's. @default the layout's Deno binary
   */
  program?: string;
  /** Its arguments. */
  args: readonly string[];
  /** The checked grant (absolute paths). */
  grant: Permissions;
  /** Host files it needs at their own paths, read-only (its main and imports). @default [] */
  runtimeFiles?: readonly string[];
  /**
   * Its whole environment besides `HOME`/`TMPDIR` (the private `/tmp`) and,
   * for Deno, `DENO_DIR` and the quiet flags. Values never go on the
   * command line, where other users could read them.
   */
  env: Readonly<Record<string, string>>;
  /**
   * Address-space cap of the program, in bytes (`prlimit --as` inside the
   * namespace, behind the relay: on the program only). Not for Deno, which
   * reserves more address space than it uses and caps its heap itself.
   * @default none
   */
  memoryBytes?: number;
  /** Size of the private `/tmp` (and of a sandbox cache's tmpfs), in MiB. @default 64 */
  tmpMb?: number;
  /**
   * A folder bound read-write at `/tmp` instead of a fresh tmpfs (skill
   * scripts: a folder of their workspace's quota-bound tmpfs).
   * @default a tmpfs of `tmpMb`
   */
  tmpDir?: string;
  /**
   * bwrap stays in the namespace as its PID 1, reaping, with the program
   * under it, instead of the program being PID 1 (a process less). Its
   * command line names the run (its binds and the program's arguments),
   * so what an early kill from outside leaves behind can still be found
   * by name: bwrap killed in its first milliseconds may leave its child
   * running, not yet set to die with it. Killing that PID 1 ends the whole
   * namespace; a program that is PID 1 itself names only its own
   * arguments (skill scripts: `runConfined`). @default false
   */
  reaper?: boolean;
  /**
   * The sandbox's own Deno cache (`sandbox_processes.ts`): its files are
   * bound read-only into a private tmpfs at its path, the process's
   * `DENO_DIR`. @default none: `DENO_DIR` is the host's cache folder with
   * only `npm` and `remote` in it
   */
  cacheDir?: string;
  /**
   * Whether a grant whose path goes through a link may be mounted from
   * where the link leads now: module code that may write beside a link
   * may have planted it, and a mount shows its target. Called with the
   * real path about to be bound, only when it differs from the grant's
   * path; a grant it refuses is not mounted. @default any target
   */
  admitLink?: (real: string, writable: boolean) => boolean;
  /** Host paths seen at another path inside, after the grants. @default none */
  binds?: ReadonlyArray<{ from: string; to: string; writable?: boolean }>;
  /** Working folder inside. @default "/" */
  cwd?: string;
  /**
   * The host's egress proxy for this process (`runtime/egress/proxy.ts`):
   * its socket is bound where the relay expects it, and `HTTP(S)_PROXY`
   * name the relay ({@link relayEnv}). With `token`, the program runs
   * behind the relay (started first, on the Deno binary, in the namespace:
   * an MCP server, a script); without, the program is a sandbox process
   * whose main runs the relay itself.
   * @default none: no way out of the empty network namespace
   */
  egress?: { socket: string; token?: string };
  /**
   * The system's CA certificates and resolver configuration, read-only
   * ({@link SYSTEM_CONFIG}, plus the files `SSL_CERT_FILE`, `SSL_CERT_DIR`
   * and `NODE_EXTRA_CA_CERTS` in `env` name, when inside those or allowed
   * by the mount rule): a program granted hosts can verify TLS. Nothing
   * else of `/etc`, and never `/etc/ssl/private`.
   * @default false
   */
  systemConfig?: boolean;
  /**
   * Host paths hidden wherever a grant or bind would show them (the host's
   * config, run history and cache): `/dev/null` is bound over each such
   * file and an empty read-only tmpfs over each such folder. @default []
   */
  hidden?: readonly string[];
}

/** A command ready for `Deno.Command` (spawn with `clearEnv: true`). */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** The whole environment. */
  env: Record<string, string>;
  /** Working folder inside the namespace. */
  cwd: string;
}

/**
 * The CA certificates and resolver configuration a confined program sees
 * with {@link ConfineSpec.systemConfig} (those that exist). `/etc/ssl` is
 * bound by its public parts only: its `private` folder holds the host's
 * keys.
 */
export const SYSTEM_CONFIG: readonly string[] = [
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ssl/cert.pem",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/usr/share/ca-certificates",
  "/etc/pki/tls/certs",
  "/etc/pki/ca-trust/extracted",
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
];

// Variables naming CA files a program reads (OpenSSL, Node).
const CA_VARIABLES = ["SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"];

/** The prlimit binary (util-linux), for {@link ConfineSpec.memoryBytes}. */
export const PRLIMIT = "/usr/bin/prlimit";

// The uid and gid the confined process runs as (`nobody`).
const CONFINED_UID = 65534;

// Top-level folders that merged-/usr systems make links (recreated inside so
// the ELF interpreter path /lib64/ld-linux... resolves), or that hold
// binaries an allowed `run` needs.
const TOP_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const SYSTEM_DIRS = ["/usr", ...TOP_DIRS, "/etc/alternatives"];
/**
 * The folders of Deno's cache a sandbox reads: npm packages and remote
 * modules, both only ever loaded from the cache (`--cached-only`).
 */
export const DENO_DIR_PARTS: readonly string[] = ["npm", "remote"];
/** Deno's SQLite caches a confined process reads (see `sandbox_processes.ts`). */
export const CACHE_DATABASES: readonly string[] = [
  "v8_code_cache_v2",
  "dep_analysis_cache_v2",
  "node_analysis_cache_v2",
];
// Where the relay compiles its sources when the program behind it is not
// Deno: the private /tmp, never a failed write to a read-only cache.
const RELAY_DENO_DIR = "/tmp/.skillbox-relay-deno";

// Detection runs a process: once per mode for the whole host.
const detections = new Map<ConfinementMode, Promise<ConfinementStatus>>();

/**
 * Finds out whether processes can be confined, by running the Deno binary
 * inside the very confinement sandboxes get (so a kernel without user
 * namespaces, a missing bwrap or a missing library all show here). Without
 * options the answer is the host's, found once per mode and shared by
 * every caller (the pool, imported MCP servers, skill scripts).
 *
 * @param mode the configured `sandbox.confinement`
 * @param options another bwrap binary (then not cached)
 * @returns whether confinement is active, and the one-line reason
 * @throws {SkillboxError} (rejects) `runtime_error` when `mode` is
 * `"required"` and confinement does not work
 * @example Turned off
 * ```ts
 * import { detectConfinement } from "./confine.ts";
 * import assert from "node:assert/strict";
 * const status = await detectConfinement("off");
 * assert.equal(status.active, false);
 * assert.match(status.reason, /off/);
 * ```
 */
export function detectConfinement(
  mode: ConfinementMode,
  options?: { bwrap?: string },
): Promise<ConfinementStatus> {
  if (options) return detect(mode, options.bwrap);
  return detections.getOrInsertComputed(mode, () => {
    const found = detect(mode);
    // A failure is reported to every caller; never as unhandled.
    found.catch(() => {});
    return found;
  });
}

// The bwrap binary is found on PATH unless named.
async function detect(
  mode: ConfinementMode,
  bwrapPath?: string,
): Promise<ConfinementStatus> {
  if (mode === "off") {
    return {
      mode,
      active: false,
      reason: 'OS confinement is off (sandbox.confinement: "off")',
      layout: null,
    };
  }
  const found = await probe(bwrapPath);
  if (typeof found === "string") {
    if (mode === "required") {
      throw new SkillboxError(
        "runtime_error",
        `Cannot start: sandbox.confinement is "required" but ${found}`,
      );
    }
    return {
      mode,
      active: false,
      reason: `OS confinement is off: ${found}`,
      layout: null,
    };
  }
  return {
    mode,
    active: true,
    reason: `Sandbox processes are confined with ${found.version}`,
    layout: found.layout,
  };
}

async function probe(
  bwrapPath?: string,
): Promise<{ layout: ConfinementLayout; version: string } | string> {
  if (Deno.build.os !== "linux") {
    return `bubblewrap needs Linux, this is ${Deno.build.os}`;
  }
  const bwrap = bwrapPath ??
    locatedRealPath("bwrap", Deno.env.get("PATH") ?? "");
  if (!bwrap) return "bwrap was not found on PATH (install bubblewrap)";
  const version = await commandOutput(bwrap, ["--version"]);
  if (version === null) return `"${bwrap}" does not run`;
  const execPath = await Deno.realPath(Deno.execPath());
  const layout: ConfinementLayout = {
    bwrap,
    execPath,
    libDirs: await libDirs(execPath),
    links: await topLinks(),
    denoDir: await denoDir(execPath),
    systemDirs: await existing(SYSTEM_DIRS),
    ...await closer(),
    ...await Deno.stat(PRLIMIT).then(
      () => ({ maxTasks: MAX_TASKS }),
      () => ({}),
    ),
  };
  const cmd = confineArgs(layout, { grant: {}, args: ["--version"], env: {} });
  const run = await new Deno.Command(cmd.command, {
    args: cmd.args,
    env: cmd.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((err: Error) => err);
  if (run instanceof Error) return `bwrap failed to start: ${run.message}`;
  if (!run.success) {
    const why = new TextDecoder().decode(run.stderr).trim().split("\n")[0];
    return `bwrap cannot confine a process here (${
      why || `exit code ${run.code}`
    }; are unprivileged user namespaces disabled?)`;
  }
  return { layout, version: version.trim() };
}

// A program on PATH, by its real path.
function locatedRealPath(command: string, path: string): string | null {
  const located = locateProgram(command, { path });
  return located === null ? null : realPath(located);
}

/**
 * Runs a command to its end, its stdin empty and its stderr dropped.
 *
 * @param command the program
 * @param args its arguments
 * @param options its whole environment (nothing else of the host's) and
 *   folder @default the host's environment and folder
 * @returns what it printed, or null when it did not start or failed
 * @example
 * ```ts
 * import { commandOutput } from "./confine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await commandOutput("sh", ["-c", "echo $X"], { env: { X: "1" } }), "1\n");
 * assert.equal(await commandOutput("false", []), null);
 * ```
 */
export async function commandOutput(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<string | null> {
  try {
    const out = await new Deno.Command(command, {
      args,
      cwd: options.cwd,
      clearEnv: options.env !== undefined,
      env: options.env,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout) : null;
  } catch {
    return null;
  }
}

/** The folders of the binary's shared libraries, from `ldd`. */
async function libDirs(execPath: string): Promise<string[]> {
  const text = await commandOutput("ldd", [execPath]);
  const files = text === null ? [] : [
    ...text.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g),
  ].map((m) => m[1]!);
  const dirs = new Set<string>();
  for (const file of files) {
    try {
      // Both the folder named (often through a link, like /lib64) and the
      // one the file really is in: the loader follows the whole chain.
      dirs.add(await Deno.realPath(dirname(file)));
      dirs.add(dirname(await Deno.realPath(file)));
    } catch {
      // Listed but absent: the probe run will fail and say so.
    }
  }
  if (text === null) {
    // No ldd: bind the usual library folders.
    for (const dir of await existing(["/lib", "/lib64", "/usr/lib"])) {
      dirs.add(await Deno.realPath(dir));
    }
  }
  return [...dirs].sort();
}

async function topLinks(): Promise<Array<[string, string]>> {
  const links: Array<[string, string]> = [];
  for (const path of TOP_DIRS) {
    const info = await Deno.lstat(path).catch(() => null);
    if (info?.isSymlink) links.push([path, await Deno.readLink(path)]);
  }
  return links;
}

// The bash that closes inherited descriptors, when it runs here.
async function closer(): Promise<{ closer?: string }> {
  const bash = locatedRealPath("bash", "/usr/bin:/bin");
  if (bash === null) return {};
  const run = await commandOutput(bash, [
    "-p",
    "-c",
    CLOSE_INHERITED,
    "/usr/bin/true",
    "1",
    "/",
  ]);
  return run === null ? {} : { closer: bash };
}

/** Real folders (not links) among the paths. */
async function existing(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    if ((await Deno.lstat(path).catch(() => null))?.isDirectory) out.push(path);
  }
  return out;
}

/** Deno's cache folder as the binary itself reports it. */
async function denoDir(execPath: string): Promise<string> {
  const text = await commandOutput(execPath, ["info", "--json"]);
  let dir: string | undefined;
  try {
    dir = text === null ? undefined : JSON.parse(text).denoDir;
  } catch {
    dir = undefined;
  }
  dir ??= Deno.env.get("DENO_DIR") ??
    join(
      Deno.env.get("XDG_CACHE_HOME") ??
        join(Deno.env.get("HOME") ?? "/", ".cache"),
      "deno",
    );
  return await Deno.realPath(dir).catch(() => dir);
}

/**
 * Builds the bwrap command line of one confined process.
 *
 * Mount order matters: later mounts cover earlier ones, so the private
 * `/tmp` comes before the grants (a grant may live under `/tmp`), grants
 * are bound shortest path first with a write grant after a read grant of
 * the same path, and the sandbox cache and the egress socket come last,
 * so that no grant covers them.
 *
 * @param layout where bwrap, Deno, its libraries and cache live
 * @param spec the program, its grant, binds, environment and limits
 * @returns the command, its arguments and whole environment
 * @example A Deno process that may read one folder
 * ```ts
 * import { confineArgs } from "./confine.ts";
 * import assert from "node:assert/strict";
 * const layout = {
 *   bwrap: "/usr/bin/bwrap", execPath: "/opt/deno", libDirs: ["/usr/lib"],
 *   links: [["/lib", "usr/lib"]] as Array<[string, string]>,
 *   denoDir: "/c/deno", systemDirs: ["/usr"],
 * };
 * const data = Deno.realPathSync(Deno.makeTempDirSync());
 * const cmd = confineArgs(layout, {
 *   grant: { read: [data] }, runtimeFiles: ["/app/main.ts"],
 *   args: ["run", "/app/main.ts"], env: { K: "v" },
 * });
 * assert.equal(cmd.command, "/usr/bin/bwrap");
 * assert.ok(cmd.args.includes("--unshare-net"));
 * assert.equal(cmd.args[cmd.args.indexOf(data) - 1], "--ro-bind-try");
 * Deno.removeSync(data);
 * assert.deepEqual(cmd.args.slice(-3), ["/opt/deno", "run", "/app/main.ts"]);
 * assert.equal(cmd.env.DENO_DIR, "/c/deno");
 * ```
 * @example Another program: the system folders, nothing of Deno's
 * ```ts
 * import { confineArgs } from "./confine.ts";
 * import assert from "node:assert/strict";
 * const cmd = confineArgs({ bwrap: "/usr/bin/bwrap", execPath: "/opt/deno",
 *   libDirs: ["/opt/lib"], links: [], denoDir: "/c/deno", systemDirs: ["/usr"] },
 *   { program: "/usr/bin/python3", args: ["a.py"], grant: {}, env: { LANG: "C" } });
 * assert.ok(cmd.args.includes("/usr") && !cmd.args.includes("/opt/deno"));
 * assert.deepEqual(cmd.env, { LANG: "C", HOME: "/tmp", TMPDIR: "/tmp" });
 * ```
 */
export function confineArgs(
  layout: ConfinementLayout,
  spec: ConfineSpec,
): ConfinedCommand {
  const program = spec.program ?? layout.execPath;
  const egress = spec.egress;
  // Behind the relay, Deno runs first and starts the program.
  const relayed = egress?.token !== undefined;
  const deno = relayed || program === layout.execPath;
  // The command the namespace runs (behind the relay, if any): under
  // prlimit when capped.
  const forks = program !== layout.execPath ||
    (spec.grant.run ?? []).length > 0;
  const limits = [
    ...(spec.memoryBytes ?? 0) > 0
      ? [`--as=${Math.floor(spec.memoryBytes!)}`]
      : [],
    ...forks && layout.maxTasks ? [`--nproc=${layout.maxTasks}`] : [],
  ];
  const argv = [
    ...limits.length > 0 ? [PRLIMIT, ...limits, "--"] : [],
    program,
    ...spec.args,
  ];
  // Binaries other than Deno come from the system folders.
  const runs = [...new Set([argv[0]!, program])].filter((p) =>
    p !== layout.execPath
  );
  const grant = runs.length === 0
    ? spec.grant
    : { ...spec.grant, run: [...spec.grant.run ?? [], ...runs] };
  const args = namespaceArgs(spec.tmpMb ?? 64, spec.tmpDir, spec.reaper);
  args.push(...programMounts(layout, { program, grant, deno, spec }));
  // What the closer opens, in order, at descriptors 3, 4, ...
  const opened: string[] = [];
  for (const [path, writable] of grantMounts(grant)) {
    // bwrap follows links in a source: bind the real path, resolved once
    // and admitted, never a path that could lead elsewhere by then (the
    // closer checks it still is that path when it opens it).
    const source = realPath(path);
    if (source === null || !openable(source)) continue;
    if (source !== path && spec.admitLink?.(source, writable) === false) {
      continue;
    }
    if (layout.closer) {
      const fd = String(3 + opened.push(source) - 1);
      args.push(writable ? "--bind-fd" : "--ro-bind-fd", fd, path);
    } else {
      args.push(writable ? "--bind-try" : "--ro-bind-try", source, path);
    }
  }
  const binds: NonNullable<ConfineSpec["binds"]> = [
    ...spec.binds ?? [],
    // Under their own folder: at their host paths they could sit under a
    // bind (a script's /work).
    ...relayed
      ? RELAY_FILES.map((from) => ({ from, to: relayPath(from) }))
      : [],
  ];
  for (const b of binds) {
    args.push(b.writable ? "--bind" : "--ro-bind", b.from, b.to);
  }
  if (spec.systemConfig) args.push(...systemConfigMounts(spec));
  args.push(...hiddenMounts(spec.hidden ?? [], [
    ...grantMounts(grant).map(([path]) => path),
    ...binds.map((b) => b.to),
  ]));
  if (spec.cacheDir) {
    args.push(...cacheMounts(layout.denoDir, spec.cacheDir, spec));
  }
  // Read-only is enough: connecting to a socket is not a write to its mount.
  if (egress) args.push("--ro-bind", egress.socket, RELAY_SOCKET);
  // Nothing else in the root is writable: no memory to fill outside /tmp's
  // bound, no files to plant beside the mounts.
  const cwd = spec.cwd ?? "/";
  args.push("--remount-ro", "/", "--chdir", cwd, "--");
  if (relayed) {
    const main = relayDenoArgs({ token: egress.token! }, argv);
    args.push(layout.execPath, ...main.map((a) => relayPath(a)));
  } else args.push(...argv);
  return {
    command: layout.closer ?? layout.bwrap,
    // -p: bash takes no functions, BASH_ENV or SHELLOPTS from the
    // program's environment, which it runs in on the host.
    args: layout.closer
      ? [
        "-p",
        "-c",
        CLOSE_INHERITED,
        layout.bwrap,
        String(opened.length),
        ...opened,
        ...args,
      ]
      : args,
    env: envOf(layout, spec, program),
    cwd,
  };
}

// The CA and resolver files, after the grants: a grant cannot replace
// them. A CA variable's file (from the program's environment, which the
// operator's entry wrote) is bound when it is one of those, or a path the
// mount rule allows; never a private key folder, never a hidden file.
function systemConfigMounts(spec: ConfineSpec): string[] {
  const named = CA_VARIABLES.map((v) => spec.env[v]).filter((p): p is string =>
    p !== undefined && isAbsolute(p) &&
    !resolve(p).split("/").includes("private") &&
    (SYSTEM_CONFIG.some((c) => within(resolve(p), c)) ||
      mountable(p, { protect: spec.hidden ?? [] }))
  );
  return [...SYSTEM_CONFIG, ...named].flatMap((
    p,
  ) => ["--ro-bind-try", p, p]);
}

// A FIFO or a socket is never mounted from a grant: the closer opens each
// grant, and opening a FIFO waits for a writer (a start that never ends:
// another module that may write there could stop this one's starts); a
// socket cannot be opened at all.
function openable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return !info.isFifo && !info.isSocket;
  } catch {
    return false;
  }
}

/**
 * Covers each hidden path that exists and lies inside a mount (compared by
 * real paths: a mount through a link covers the same files), where the
 * mount shows it: a file with `/dev/null` (which cannot even be opened
 * there: binds are `nodev`), a folder with an empty read-only tmpfs.
 */
function hiddenMounts(
  hidden: readonly string[],
  mounts: readonly string[],
): string[] {
  if (hidden.length === 0) return [];
  const args: string[] = [];
  const roots = mounts.map((m) => [m, realPath(m)] as const);
  const covered = new Set<string>();
  for (const path of hidden) {
    const target = realPath(path);
    if (target === null) continue;
    const isDir = Deno.statSync(target).isDirectory;
    for (const [mount, root] of roots) {
      if (root === null || !within(target, root)) continue;
      const at = join(mount, relative(root, target));
      if (covered.has(at)) continue;
      covered.add(at);
      if (isDir) {
        args.push("--perms", "0555", "--tmpfs", at, "--remount-ro", at);
      } else args.push("--ro-bind", "/dev/null", at);
    }
  }
  return args;
}

// The environment inside: the spec's, HOME and TMPDIR at the private /tmp
// (never a host folder), Deno's cache where it is bound, and the relay's
// proxy variables.
function envOf(
  layout: ConfinementLayout,
  spec: ConfineSpec,
  program: string,
): Record<string, string> {
  const relayed = spec.egress?.token !== undefined;
  const env: Record<string, string> = {
    ...spec.env,
    ...spec.egress ? relayEnv() : {},
    HOME: "/tmp",
    TMPDIR: "/tmp",
  };
  if (program !== layout.execPath && !relayed) return env;
  return {
    ...env,
    DENO_DIR: program === layout.execPath
      ? spec.cacheDir ?? layout.denoDir
      : RELAY_DENO_DIR,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
}

// A relay file's path inside the namespace (other arguments unchanged):
// where it is in the checkout, under RELAY_DIR, so that its relative
// imports still resolve.
function relayPath(path: string): string {
  return RELAY_FILES.includes(path)
    ? join(RELAY_DIR, relative(CHECKOUT, path))
    : path;
}

/**
 * The namespaces and the bare root: its own user (mapped to nobody, no
 * capabilities, no nested user namespaces), PIDs, network (loopback only,
 * down), IPC, hostname and cgroup view; its own `/proc`, a minimal,
 * read-only `/dev` with a `/dev/shm` of `tmpMb` MiB, and a private `/tmp`
 * of `tmpMb` MiB, or `tmpDir` bound there.
 */
function namespaceArgs(
  tmpMb: number,
  tmpDir?: string,
  reaper = false,
): string[] {
  return [
    "--unshare-user",
    "--uid",
    String(CONFINED_UID),
    "--gid",
    String(CONFINED_UID),
    "--disable-userns",
    "--unshare-pid",
    ...reaper ? [] : ["--as-pid-1"],
    // No network of its own, ever: names are resolved and addresses
    // checked by the host's egress proxy, the only way out.
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    // Dies with the host (a SIGKILL of bwrap takes the whole PID namespace
    // down), and in a new session: no TIOCSTI into the host's terminal.
    "--die-with-parent",
    "--new-session",
    "--proc",
    "/proc",
    // bwrap's /dev is a tmpfs the confined user may write, bounded by
    // nothing but half the host's memory: read-only (its device binds stay
    // usable), with a /dev/shm of /tmp's size for shared memory.
    "--dev",
    "/dev",
    "--remount-ro",
    "/dev",
    "--perms",
    "01777",
    "--size",
    String(tmpMb * 1024 * 1024),
    "--tmpfs",
    "/dev/shm",
    ...(tmpDir
      ? ["--bind", tmpDir, "/tmp"]
      : ["--size", String(tmpMb * 1024 * 1024), "--tmpfs", "/tmp"]),
  ];
}

/**
 * What the program itself needs inside, before the grants: the top-level
 * links, the system folders when it runs binaries, and when Deno runs:
 * the binary and its libraries (unless a system folder holds them), the
 * host cache's npm and remote folders when there is no sandbox cache, and
 * the runtime files.
 */
function programMounts(
  layout: ConfinementLayout,
  at: { program: string; grant: Permissions; deno: boolean; spec: ConfineSpec },
): string[] {
  const args: string[] = [];
  for (const [path, target] of layout.links) {
    args.push("--symlink", target, path);
  }
  const system = (at.grant.run ?? []).length > 0 ? layout.systemDirs : [];
  for (const dir of system) args.push("--ro-bind-try", dir, dir);
  const bind = (path: string) => {
    if (!system.some((s) => within(path, s))) {
      args.push("--ro-bind", path, path);
    }
  };
  // A program outside the system folders (an MCP server's own binary).
  if (at.program !== layout.execPath) bind(at.program);
  if (at.deno) {
    for (const dir of layout.libDirs) bind(dir);
    bind(layout.execPath);
    if (!at.spec.cacheDir) {
      for (const part of DENO_DIR_PARTS) {
        const dir = join(layout.denoDir, part);
        args.push("--ro-bind-try", dir, dir);
      }
    }
  }
  for (const file of at.spec.runtimeFiles ?? []) {
    args.push("--ro-bind", file, file);
  }
  return args;
}

/**
 * The confined process's `DENO_DIR`: a private, size-bounded tmpfs at the
 * sandbox cache's path, holding read-only binds of what the host prepared
 * (the host cache's npm and remote folders, the cache databases, the
 * compiled runtime files). Deno saves what it compiles for the process's
 * own modules into the tmpfs: gone with the process, never seen by
 * another, and never a failed write, which Deno retries for 150 ms.
 */
function cacheMounts(
  denoDir: string,
  cacheDir: string,
  spec: ConfineSpec,
): string[] {
  const args = [
    "--size",
    String((spec.tmpMb ?? 64) * 1024 * 1024),
    "--tmpfs",
    cacheDir,
  ];
  for (const part of DENO_DIR_PARTS) {
    args.push("--ro-bind-try", join(denoDir, part), join(cacheDir, part));
  }
  const files = [
    ...CACHE_DATABASES,
    // Where Deno keeps the compiled form of a local file.
    ...(spec.runtimeFiles ?? []).map((f) => join("gen", "file", f + ".js")),
  ];
  for (const file of files) {
    args.push("--ro-bind-try", join(cacheDir, file), join(cacheDir, file));
  }
  return args;
}

/**
 * The grant's paths as mounts, in the order they must be made: shorter
 * paths first (a nested grant covers its parent's mount), a write grant
 * after a read grant of the same path (so it stays writable). A path both
 * read and written is mounted once, read-write; a path inside a mount of
 * the same kind is not mounted again.
 *
 * @param grant a checked grant (absolute paths)
 * @returns `[path, writable]` pairs
 * @example Shorter paths first, a path both read and written mounted writable
 * ```ts
 * import { grantMounts } from "./confine.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   grantMounts({ read: ["/a/b", "/a"], write: ["/a/b/c", "/a"] }),
 *   [["/a", true], ["/a/b", false], ["/a/b/c", true]],
 * );
 * assert.deepEqual(grantMounts({ read: ["/v/bin/python", "/v", "/w"] }),
 *   [["/v", false], ["/w", false]]);
 * ```
 */
export function grantMounts(grant: Permissions): Array<[string, boolean]> {
  const mounts = new Map<string, boolean>();
  for (const path of grant.read ?? []) mounts.set(path, false);
  for (const path of grant.write ?? []) mounts.set(path, true);
  const depth = (path: string) => path.split("/").filter(Boolean).length;
  const sorted = [...mounts].sort(([a], [b]) =>
    depth(a) - depth(b) || compareCodeUnits(a, b)
  );
  // A path inside a mount of the same kind is shown by it already, and
  // binding it again could go through a link inside that mount (a virtual
  // environment's `bin/python`) to a place that is not there.
  return sorted.filter(([path, writable], i) => {
    const parent = sorted.slice(0, i).findLast(([p]) =>
      p !== path && within(path, p)
    );
    return parent === undefined || parent[1] !== writable;
  });
}

// --- the egress relay: a confined process's only way out ---------------

/** The relay's main script (runs a command behind the relay). */
export const RELAY_MAIN: URL = new URL(
  "../../sandbox/process/relay_main.ts",
  import.meta.url,
);

/**
 * The relay's source files (its main and what it imports), bound
 * read-only into a namespace that runs it. A test checks this list against
 * the real module graph.
 */
export const RELAY_FILES: readonly string[] = [
  "../../sandbox/process/relay_main.ts",
  "../../sandbox/process/egress_relay.ts",
  "../../protocol/egress_relay.ts",
].map((p) => fileURLToPath(new URL(p, import.meta.url)));

// Where the relay's files are inside a namespace that runs it in front of
// a program.
const RELAY_DIR = "/run/skillbox/relay";

// The folder holding every relay file: skillbox's own checkout.
const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The environment that sends a process's HTTP clients to the relay (both
 * spellings, as clients differ; `NO_PROXY` emptied, so nothing goes
 * direct).
 *
 * @returns variables to add to the process's environment
 * @example The proxy variables point at the relay
 * ```ts
 * import { relayEnv } from "./confine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relayEnv().HTTPS_PROXY, "http://127.0.0.1:3128");
 * ```
 */
export function relayEnv(): Record<string, string> {
  return {
    HTTP_PROXY: RELAY_PROXY_URL,
    HTTPS_PROXY: RELAY_PROXY_URL,
    http_proxy: RELAY_PROXY_URL,
    https_proxy: RELAY_PROXY_URL,
    NO_PROXY: "",
    no_proxy: "",
  };
}

/**
 * How a Deno child of the host starts (see {@link denoArgs}). The defaults
 * are the strictest; a child relaxes only what it must.
 */
export interface DenoChild {
  /** `run` a script, or `eval` code (which has every permission). @default "run" */
  subcommand?: "run" | "eval";
  /** Deno prints nothing of its own into the child's output. @default true */
  quiet?: boolean;
  /** No lockfile is read or written. @default true */
  noLock?: boolean;
  /** Remote URL imports are refused outright. @default true */
  noRemote?: boolean;
  /**
   * Modules load from the local cache only. Without it `import("npm:x")`
   * makes Deno itself fetch from the registry (no net grant needed): an
   * egress channel. @default true
   */
  cachedOnly?: boolean;
  /** The child starts workers with permissions of their own. @default false */
  workers?: boolean;
  /** V8's heap cap in MiB. @default none */
  heapMb?: number;
  /**
   * No V8 background threads (concurrent GC marking, compilers): about
   * 4 MB less per process, and where many processes share few cores
   * those threads only compete with them. @default false
   */
  singleThreaded?: boolean;
  /** Permission flags, after Deno's own. @default [] */
  permissions?: readonly string[];
}

/**
 * The Deno arguments of a child of the host, up to its script (or code):
 * every Deno child (sandbox processes, the sandbox cache's warm-up, the
 * egress relay, skill scripts) starts from this one list. Always
 * `--no-config`: no deno.json exists inside the confinement, and the host
 * project's (found from the script's folder when unconfined) would change
 * how modules resolve and compile; `--no-prompt` for `run` (a prompt
 * would wait on a stdin that carries frames or the script's input).
 *
 * @param child what the child may do
 * @returns arguments for the Deno binary, the script (or code) to follow
 * @example A sandbox process: workers, a heap cap, cached modules only
 * ```ts
 * import { denoArgs } from "./confine.ts";
 * import assert from "node:assert/strict";
 * const args = denoArgs({ workers: true, heapMb: 64, permissions: ["--allow-read=/s"] });
 * assert.equal(args[0], "run");
 * assert.ok(args.includes("--cached-only") && args.includes("--no-remote"));
 * assert.ok(args.includes("--v8-flags=--max-old-space-size=64"));
 * assert.equal(args.at(-1), "--allow-read=/s");
 * ```
 */
export function denoArgs(child: DenoChild): string[] {
  const subcommand = child.subcommand ?? "run";
  const v8 = [
    ...child.heapMb === undefined
      ? []
      : [`--max-old-space-size=${child.heapMb}`],
    ...child.singleThreaded ? ["--single-threaded"] : [],
  ];
  return [
    subcommand,
    ...child.quiet === false ? [] : ["--quiet"],
    ...subcommand === "run" ? ["--no-prompt"] : [],
    ...child.noLock === false ? [] : ["--no-lock"],
    "--no-config",
    ...child.noRemote === false ? [] : ["--no-remote"],
    ...child.cachedOnly === false ? [] : ["--cached-only"],
    ...child.workers ? ["--unstable-worker-options"] : [],
    ...v8.length > 0 ? [`--v8-flags=${v8.join(",")}`] : [],
    ...child.permissions ?? [],
  ];
}

/**
 * The permission flags that let a process connect to a Unix socket: Deno
 * 2.9 checks a connect as net access to `unix:<path>` and as read and
 * write of the path. Only those its other flags do not already give: Deno
 * merges repeated list flags, but a list after a bare flag (`--allow-read`
 * then `--allow-read=x`) narrows it to the list, so a kind the process
 * already has bare is left out.
 *
 * @param path the socket
 * @param existing the process's other Deno arguments
 * @param hosts more `--allow-net` entries (a port to listen on) @default []
 * @returns flags to add before the main script
 * @example A kind the process already has bare is left out
 * ```ts
 * import { socketFlags } from "./confine.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(socketFlags("/c.sock", ["--allow-read"]),
 *   ["--allow-write=/c.sock", "--allow-net=unix:/c.sock"]);
 * ```
 */
export function socketFlags(
  path: string,
  existing: readonly string[],
  hosts: readonly string[] = [],
): string[] {
  return [
    `--allow-read=${path}`,
    `--allow-write=${path}`,
    `--allow-net=${[...hosts, `unix:${path}`].join(",")}`,
  ].filter((flag) => !existing.includes(flag.slice(0, flag.indexOf("="))));
}

/**
 * The Deno permission flags the relay itself needs: listen on its port,
 * and open the bound socket ({@link socketFlags}). They go to the process
 * (main thread) only; workers get their own permissions.
 *
 * @param existing the process's other Deno arguments @default []
 * @returns flags to add before the main script
 * @example The relay's own permissions, without narrowing a bare flag
 * ```ts
 * import { relayFlags } from "./confine.ts";
 * import assert from "node:assert/strict";
 * assert.match(relayFlags().at(-1)!, /^--allow-net=127.0.0.1:3128,unix:/);
 * assert.equal(relayFlags(["--allow-net", "--allow-read"]).length, 1);
 * ```
 */
export function relayFlags(existing: readonly string[] = []): string[] {
  return socketFlags(RELAY_SOCKET, existing, [`127.0.0.1:${RELAY_PORT}`]);
}

/**
 * The Deno arguments that run `argv` behind the relay (after the Deno
 * binary): the relay's permissions, `--allow-run` of the command only.
 *
 * @param proxy the open proxy (its token)
 * @param argv the command (first item an absolute path) and its arguments
 * @returns arguments for the Deno binary
 * @throws {TypeError} when `argv` is empty
 * @example The relay may run only the command it wraps
 * ```ts
 * import { relayDenoArgs } from "./confine.ts";
 * import assert from "node:assert/strict";
 * const args = relayDenoArgs({ token: "ab" }, ["/usr/bin/python3", "s.py"]);
 * assert.ok(args.includes("--allow-run=/usr/bin/python3"));
 * assert.deepEqual(args.slice(-3), ["--", "/usr/bin/python3", "s.py"]);
 * ```
 */
export function relayDenoArgs(
  proxy: { token: string },
  argv: readonly string[],
): string[] {
  const [command, ...args] = argv;
  if (command === undefined) throw new TypeError("The command is empty");
  return [
    // Host code that fetches nothing: it has no network of its own.
    ...denoArgs({
      cachedOnly: false,
      permissions: [...relayFlags(), `--allow-run=${command}`],
    }),
    fileURLToPath(RELAY_MAIN),
    RELAY_TOKEN_ARG + proxy.token,
    "--",
    command,
    ...args,
  ];
}
