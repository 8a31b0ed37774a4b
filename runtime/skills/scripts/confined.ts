/**
 * Runs one command under OS confinement with bubblewrap: only the binds it
 * is given, a private /tmp, /proc and /dev, new pid, network, IPC and UTS
 * namespaces, no capabilities, an empty environment plus the given
 * variables, an address-space cap (`prlimit --as`) and a wall-clock timeout
 * that kills the whole tree (SIGKILL to bwrap; `--die-with-parent` takes the
 * sandbox's pid 1 with it, and the kernel ends the pid namespace).
 *
 * This is the one seam scripts are confined through; it stands in for the
 * pool's confiner until that lands on main.
 *
 * @module
 */

/** The bwrap binary. */
export const BWRAP = "/usr/bin/bwrap";
/** The prlimit binary (util-linux), for the memory cap. */
export const PRLIMIT = "/usr/bin/prlimit";

/** One bind: a host path seen at `to` inside. */
export interface Bind {
  from: string;
  to: string;
}

/** What {@link runConfined} runs. */
export interface ConfinedSpec {
  /** The command inside the confinement (first item: absolute path). */
  argv: readonly string[];
  /** Read-only binds. */
  readOnly: readonly Bind[];
  /** Read-write binds. */
  readWrite: readonly Bind[];
  /** The whole environment inside. */
  env: Readonly<Record<string, string>>;
  /** Working directory inside. */
  cwd: string;
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number;
  /** Address-space cap in bytes. */
  memoryBytes: number;
  /** Bytes written to stdin, then closed. */
  stdin?: Uint8Array;
  /** Kills the run when aborted. */
  signal?: AbortSignal;
  /** Each chunk of stdout/stderr as it arrives. */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/** How a confined run ended. */
export interface ConfinedExit {
  /** The exit code (128 + signal when killed by one). */
  code: number;
  /** True when the timeout killed it. */
  timedOut: boolean;
  /** True when the signal aborted it. */
  aborted: boolean;
}

// The host's system folders a program needs, read-only: /usr, and /bin,
// /lib, /lib64, /sbin as the host has them (symlinks into /usr, or folders).
async function systemBinds(): Promise<string[]> {
  const out = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["/bin", "/sbin", "/lib", "/lib64"]) {
    const info = await Deno.lstat(dir).catch(() => null);
    if (info === null) continue;
    if (info.isSymlink) out.push("--symlink", await Deno.readLink(dir), dir);
    else out.push("--ro-bind", dir, dir);
  }
  return out;
}

/**
 * The bwrap argument list for a spec (without the command).
 *
 * @param spec the run
 * @returns arguments for `bwrap`
 * @example
 * ```ts
 * import { bwrapArgs } from "./confined.ts";
 * import assert from "node:assert/strict";
 * const args = await bwrapArgs({
 *   argv: ["/usr/bin/true"], readOnly: [{ from: "/s", to: "/skill" }],
 *   readWrite: [{ from: "/w", to: "/work" }], env: { A: "1" }, cwd: "/work",
 *   timeoutMs: 1000, memoryBytes: 1 << 28,
 * });
 * assert.ok(args.includes("--unshare-net") && args.includes("--clearenv"));
 * assert.equal(args[args.indexOf("--bind") + 2], "/work");
 * ```
 */
export async function bwrapArgs(spec: ConfinedSpec): Promise<string[]> {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    "--clearenv",
    ...await systemBinds(),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
  ];
  for (const b of spec.readOnly) args.push("--ro-bind", b.from, b.to);
  for (const b of spec.readWrite) args.push("--bind", b.from, b.to);
  for (const [k, v] of Object.entries(spec.env)) args.push("--setenv", k, v);
  args.push("--chdir", spec.cwd);
  return args;
}

/**
 * Runs a command confined, streaming its output, until it exits, times out
 * or is aborted.
 *
 * @param spec the command, binds, environment and limits
 * @returns how it ended
 * @example
 * ```ts
 * import { runConfined } from "./confined.ts";
 * import assert from "node:assert/strict";
 * let out = "";
 * const exit = await runConfined({
 *   argv: ["/bin/sh", "-c", "echo $GREETING"], readOnly: [], readWrite: [],
 *   env: { GREETING: "hi" }, cwd: "/tmp", timeoutMs: 10_000, memoryBytes: 1 << 28,
 *   onOutput: (_s, t) => out += t,
 * });
 * assert.equal(exit.code, 0);
 * assert.equal(out, "hi\n");
 * ```
 */
export async function runConfined(spec: ConfinedSpec): Promise<ConfinedExit> {
  const args = [
    `--as=${Math.floor(spec.memoryBytes)}`,
    "--",
    BWRAP,
    ...await bwrapArgs(spec),
    "--",
    ...spec.argv,
  ];
  const child = new Deno.Command(PRLIMIT, {
    args,
    env: {},
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  let aborted = false;
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, Math.max(0, spec.timeoutMs));
  const onAbort = () => {
    aborted = true;
    kill();
  };
  spec.signal?.addEventListener("abort", onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();
  const feed = (async () => {
    const writer = child.stdin.getWriter();
    try {
      if (spec.stdin) await writer.write(spec.stdin);
      await writer.close();
    } catch { /* the script closed its stdin */ }
  })();
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pump = async (
    reader: ReadableStreamDefaultReader<Uint8Array>,
    name: "stdout" | "stderr",
  ) => {
    const decoder = new TextDecoder();
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      const text = decoder.decode(value, { stream: true });
      if (text) spec.onOutput?.(name, text);
    }
  };
  const pumps = Promise.all([
    pump(readers[0]!, "stdout"),
    pump(readers[1]!, "stderr"),
  ]);
  try {
    const status = await child.status;
    // A killed run's output ends with it, even if something it started
    // still held the pipes open.
    if (timedOut || aborted) {
      await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
    }
    await Promise.all([pumps, feed]);
    const code = status.signal !== null
      ? 128 + signalNumber(status.signal)
      : status.code;
    return { code, timedOut, aborted };
  } finally {
    clearTimeout(timer);
    spec.signal?.removeEventListener("abort", onAbort);
  }
}

function signalNumber(signal: Deno.Signal): number {
  return signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : 1;
}
