/**
 * Runs one skill script under OS confinement: the bwrap command line comes
 * from `confineArgs` (`runtime/confine/confine.ts`, the one builder sandbox
 * processes and imported MCP servers use), with the interpreter as the
 * program. Its own user namespace as `nobody` (65534) with no
 * capabilities, its own PID, network, IPC and UTS namespaces, a read-only
 * root holding only the system folders (for a system interpreter) or the
 * Deno binary and its libraries, the given binds, a private `/tmp`, an
 * empty environment plus the given variables. `prlimit --as` inside caps
 * its memory. `/work` and `/tmp` are a quota-bound tmpfs set up by a keeper
 * around bwrap (see `workspace_mount.ts`): at the timeout the keeper ends
 * bwrap (`--die-with-parent` takes the namespace's pid 1 with it and the
 * kernel ends the whole PID namespace), and either way it sends the
 * workspace's files back (bounded) before the tmpfs goes. With `egress`,
 * the script runs behind the egress relay in its namespace (still with no
 * network of its own).
 *
 * @module
 */

import { confineArgs, type ConfinementLayout } from "../../confine/confine.ts";
import { killProcessesNaming } from "../../confine/kill_tree.ts";
import {
  keeperCommand,
  type KeeperRun,
  markerSplitter,
} from "./workspace_mount.ts";
import { type KeeperReport, KeeperStream } from "./workspace_files.ts";

/** One bind: a host path seen at `to` inside. */
export interface Bind {
  from: string;
  to: string;
  /** @default false */
  writable?: boolean;
}

/** What {@link runConfined} runs. */
export interface ConfinedSpec {
  /** Where bwrap, Deno and the system folders live (active confinement). */
  layout: ConfinementLayout;
  /** The command inside (first item: the program's absolute real path). */
  argv: readonly string[];
  /** Host paths seen inside at another path. */
  binds: readonly Bind[];
  /** The environment inside, besides `HOME`/`TMPDIR` (the private /tmp). */
  env: Readonly<Record<string, string>>;
  /** Working directory inside. */
  cwd: string;
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number;
  /** Address-space cap in bytes; 0: none (Deno caps its heap itself). */
  memoryBytes: number;
  /** Bytes written to stdin, then closed. */
  stdin?: Uint8Array;
  /** Kills the run when aborted. */
  signal?: AbortSignal;
  /**
   * The host's egress proxy for this run (its socket and token): the
   * script runs behind the relay. @default none: no network at all
   */
  egress?: { socket: string; token: string };
  /** Each chunk of stdout/stderr as it arrives. */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
  /**
   * `/work` and `/tmp` as a tmpfs of this quota, the inputs copied in from
   * `dirs.inputs`; the files left in `/work` come back within `caps`, after
   * the run's `marker` on the keeper's stdout (see `workspace_mount.ts`).
   */
  workspace: KeeperRun;
}

/** How a confined run ended. */
export interface ConfinedExit {
  /** The exit code (128 + signal when killed by one). */
  code: number;
  /** True when the timeout killed it. */
  timedOut: boolean;
  /**
   * The workspace's keeper's report, or null when the workspace could not
   * be set up (`code` is then 125, stderr says why).
   */
  workspace: KeeperReport | null;
}

// How long the keeper gets to end bwrap at the timeout before it is killed
// too (it is ours and ends it at once; this is only a backstop).
const KEEPER_GRACE_MS = 5_000;

/**
 * The command line of a confined script: bwrap, under the keeper of its
 * workspace.
 *
 * @param spec the run
 * @returns the program, its arguments and whole environment
 * @example A Python script sees /usr, the skill and its workspace
 * ```ts
 * import { scriptCommand } from "./script_process.ts";
 * import { DEFAULT_WORKSPACE_QUOTA, workspaceDirs } from "./workspace_mount.ts";
 * import { DEFAULT_COLLECT_CAPS } from "./workspace_files.ts";
 * import assert from "node:assert/strict";
 * const cmd = scriptCommand({
 *   layout: { bwrap: "/usr/bin/bwrap", execPath: "/opt/deno", libDirs: ["/opt/lib"],
 *     links: [], denoDir: "/c/deno", systemDirs: ["/usr"] },
 *   argv: ["/usr/bin/python3", "/skill/a.py"], env: { LANG: "C.UTF-8" },
 *   binds: [{ from: "/s", to: "/skill" }], cwd: "/work", timeoutMs: 1000, memoryBytes: 1 << 28,
 *   workspace: { dirs: workspaceDirs("/w"), quota: DEFAULT_WORKSPACE_QUOTA,
 *     caps: DEFAULT_COLLECT_CAPS, marker: "m" },
 * });
 * assert.equal(cmd.program, "/usr/bin/unshare"); // the keeper, around bwrap
 * assert.ok(cmd.args.includes("/usr/bin/bwrap"));
 * assert.deepEqual(cmd.args.slice(-5),
 *   ["/usr/bin/prlimit", "--as=268435456", "--", "/usr/bin/python3", "/skill/a.py"]);
 * assert.ok(cmd.args.includes("--unshare-user") && cmd.args.includes("--unshare-net"));
 * assert.equal(cmd.args[cmd.args.indexOf("/w/ns/work") - 1], "--bind");
 * assert.ok(!cmd.args.includes("/opt/deno") && !cmd.args.includes("/c/deno/npm"));
 * assert.deepEqual(cmd.env, { LANG: "C.UTF-8", HOME: "/tmp", TMPDIR: "/tmp" });
 * ```
 * @example Behind the relay
 * ```ts
 * import { scriptCommand } from "./script_process.ts";
 * import { DEFAULT_WORKSPACE_QUOTA, workspaceDirs } from "./workspace_mount.ts";
 * import { DEFAULT_COLLECT_CAPS } from "./workspace_files.ts";
 * import assert from "node:assert/strict";
 * const cmd = scriptCommand({
 *   layout: { bwrap: "/usr/bin/bwrap", execPath: "/opt/deno", libDirs: [],
 *     links: [], denoDir: "/c/deno", systemDirs: ["/usr"] },
 *   argv: ["/usr/bin/python3", "/skill/a.py"], env: {}, binds: [], cwd: "/work",
 *   timeoutMs: 1000, memoryBytes: 1 << 28, egress: { socket: "/h/e.sock", token: "ab" },
 *   workspace: { dirs: workspaceDirs("/w"), quota: DEFAULT_WORKSPACE_QUOTA,
 *     caps: DEFAULT_COLLECT_CAPS, marker: "m" },
 * });
 * assert.equal(cmd.env.HTTPS_PROXY, "http://127.0.0.1:3128");
 * assert.deepEqual(cmd.args.slice(-5),
 *   ["/usr/bin/prlimit", "--as=268435456", "--", "/usr/bin/python3", "/skill/a.py"]);
 * assert.ok(cmd.args.includes("/run/skillbox/relay/sandbox/process/relay_main.ts"));
 * ```
 */
export function scriptCommand(
  spec: Omit<ConfinedSpec, "onOutput" | "signal" | "stdin">,
): { program: string; args: string[]; env: Record<string, string> } {
  const dirs = spec.workspace.dirs;
  const confined = confineArgs(spec.layout, {
    program: spec.argv[0],
    args: spec.argv.slice(1),
    memoryBytes: spec.memoryBytes,
    grant: {},
    env: spec.env,
    binds: [
      ...spec.binds,
      { from: dirs.work, to: "/work", writable: true },
    ],
    tmpDir: dirs.tmp,
    // bwrap's command line names the run's folder: an early kill's
    // leftovers are found by it (`runConfined`).
    reaper: true,
    cwd: spec.cwd,
    egress: spec.egress,
  });
  const run = keeperCommand(
    { program: confined.command, args: confined.args },
    spec.workspace,
  );
  return { ...run, env: confined.env };
}

/**
 * Runs a command confined, streaming its output, until it exits, times out
 * or is aborted.
 *
 * @param spec the command, binds, environment and limits
 * @returns how it ended
 * @example A shell script runs as nobody with its variable
 * ```ts
 * import { runConfined } from "./script_process.ts";
 * import { detectConfinement } from "../../confine/confine.ts";
 * import { DEFAULT_WORKSPACE_QUOTA, newMarker, workspaceDirs } from "./workspace_mount.ts";
 * import { DEFAULT_COLLECT_CAPS } from "./workspace_files.ts";
 * import assert from "node:assert/strict";
 * const { layout } = await detectConfinement("auto");
 * if (layout) {
 *   const dirs = workspaceDirs(await Deno.makeTempDir());
 *   await Deno.mkdir(dirs.mount); // where the keeper mounts its tmpfs
 *   let out = "";
 *   const exit = await runConfined({
 *     layout, argv: ["/usr/bin/sh", "-c", "echo $GREETING $(id -u)"], binds: [],
 *     env: { GREETING: "hi" }, cwd: "/work", timeoutMs: 10_000, memoryBytes: 1 << 28,
 *     workspace: { dirs, quota: DEFAULT_WORKSPACE_QUOTA, caps: DEFAULT_COLLECT_CAPS,
 *       marker: newMarker() },
 *     onOutput: (_s, t) => out += t,
 *   });
 *   await Deno.remove(dirs.dir, { recursive: true });
 *   assert.equal(exit.code, 0);
 *   assert.equal(out, "hi 65534\n");
 *   assert.deepEqual(exit.workspace?.files.files, []);
 * }
 * ```
 */
export async function runConfined(spec: ConfinedSpec): Promise<ConfinedExit> {
  const cmd = scriptCommand(spec);
  const child = new Deno.Command(cmd.program, {
    args: cmd.args,
    env: cmd.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  let killed = false;
  let reaped = false;
  const kill = () => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    // Reaped already, and the output still open: something it started holds
    // the pipes (bwrap killed by another in its first milliseconds leaves
    // its child running). The timeout's or the caller's kill ends the wait.
    if (reaped) endOutput();
  };
  // Its own timer, not `startDeadline` (deadline.ts): the timeout and the
  // caller's abort act differently and both may come (an abort during the
  // keeper's grace kills at once), where a deadline's one signal keeps
  // only the first.
  let backstop: ReturnType<typeof setTimeout> | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    // The keeper ends bwrap and still hands the workspace over.
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    backstop = setTimeout(kill, KEEPER_GRACE_MS);
  }, Math.max(0, spec.timeoutMs));
  spec.signal?.addEventListener("abort", kill, { once: true });
  if (spec.signal?.aborted) kill();
  const feed = (async () => {
    const writer = child.stdin.getWriter();
    try {
      if (spec.stdin) await writer.write(spec.stdin);
      await writer.close();
    } catch { /* the script closed its stdin */ }
  })();
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const endOutput = () =>
    Promise.all(readers.map((r) => r.cancel().catch(() => {})));
  const split = markerSplitter(spec.workspace.marker);
  const stream = new KeeperStream(spec.workspace.caps);
  const pump = async (
    reader: ReadableStreamDefaultReader<Uint8Array>,
    name: "stdout" | "stderr",
  ) => {
    const decoder = new TextDecoder();
    const emit = (bytes: Uint8Array, last = false) => {
      const text = decoder.decode(bytes, { stream: !last });
      if (text) spec.onOutput?.(name, text);
    };
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (name === "stdout") {
        const parts = split.push(value);
        emit(parts.script);
        stream.push(parts.keeper);
      } else emit(value);
    }
    emit(name === "stdout" ? split.end() : new Uint8Array(0), true);
  };
  const pumps = Promise.all([
    pump(readers[0]!, "stdout"),
    pump(readers[1]!, "stderr"),
  ]);
  try {
    const status = await child.status;
    reaped = true;
    // A keeper ended by a signal (the kill above, or another's) takes bwrap
    // with it, but in bwrap's first milliseconds what it started may live
    // on, not yet set to die with it, holding the output open. Everything
    // of the run names its folder; killing bwrap's PID 1 ends the rest.
    if (status.signal !== null) {
      await killProcessesNaming(spec.workspace.dirs.dir);
    }
    // A killed run's output ends with it, even if something it started
    // still held the pipes open. (A keeper ended by its timeout still
    // sends the workspace back, and ends its pipes as it exits.)
    if (killed) await endOutput();
    await Promise.all([pumps, feed]);
    const report = stream.end();
    return {
      // Deno reports a run ended by a signal as the shell does: 128 + its number.
      code: report?.code ?? status.code,
      timedOut,
      workspace: report,
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(backstop);
    spec.signal?.removeEventListener("abort", kill);
  }
}
