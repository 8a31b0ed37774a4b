/**
 * How a sandbox (or discovery) OS process is started and how its death is
 * told: its command line (the grant as Deno permission flags), its
 * environment and its working folder, in one place, so that wrapping the
 * process (in a container or a namespace) means wrapping this one function;
 * and V8's heap-limit abort told from any other death.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { Permissions } from "../../protocol/permissions.ts";
import { readBootstrap } from "./bootstrap_text.ts";
import { controlArg } from "../../protocol/sandbox/control.ts";
import type { SandboxOutcome } from "./types.ts";
import { addedFlags, denoArgs } from "../confine/confine.ts";

/** What {@link sandboxCommand} needs. */
export interface SandboxCommandOptions {
  /** The grant's permission flags (see `grantToFlags`). */
  flags: string[];
  /** The grant (its `env` names are passed through, its `run` adds PATH). */
  grant: Permissions;
  /** Heap cap in MiB. */
  memoryMb: number;
  /** Working folder. */
  cwd: string;
  /** The script the process runs. @default the sandbox process main */
  main?: URL;
  /**
   * The host's control socket for this process (`ControlSocket` in
   * `sandbox_process.ts`): the process may connect to it, is told its path,
   * and has it bound in when confined. @default none: frames come on stdin
   */
  controlSocket?: string;
}

/** A command to spawn: program, arguments, environment, folder. */
export interface SandboxCommand {
  program: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Called once the process has exited (set by confinement). */
  release?: () => void;
  /** Unix sockets it connects to, bound in at the same path when confined. */
  sockets?: string[];
}

/** The main script of a call sandbox process. */
export const SANDBOX_MAIN: URL = new URL(
  "../../sandbox/process/main.ts",
  import.meta.url,
);
const MAIN = SANDBOX_MAIN;

// Environment a sandbox process needs to find the deno cache and npm; none
// of it is readable by skill code unless granted by name.
const PASS_ENV = [
  "HOME",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "TMPDIR",
  "NPM_CONFIG_REGISTRY",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
];

/**
 * The command that starts one sandbox process for a grant.
 *
 * @param options flags, grant, heap cap and folder
 * @returns the program, its arguments, a clean environment, and the folder
 * @example No network import, the grant's flags last before the script
 * ```ts
 * import { sandboxCommand } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const cmd = sandboxCommand({ flags: ["--allow-read=/s"], grant: {}, memoryMb: 64, cwd: "/" });
 * assert.ok(cmd.args.includes("--no-remote"));
 * assert.equal(cmd.args.at(-2), "--allow-read=/s");
 * assert.equal(cmd.env.PATH, undefined);
 * ```
 */
export function sandboxCommand(options: SandboxCommandOptions): SandboxCommand {
  const url = options.main ?? MAIN;
  const main = url.protocol === "file:" ? fileURLToPath(url) : url.href;
  const control = options.controlSocket;
  const flags = control === undefined
    ? options.flags
    : [...options.flags, ...socketFlags(control, options.flags)];
  return {
    program: Deno.execPath(),
    args: [
      ...denoArgs({
        workers: true,
        heapMb: options.memoryMb,
        singleThreaded: true,
        permissions: flags,
      }),
      main,
      ...(control === undefined ? [] : [controlArg(control)]),
    ],
    env: sandboxEnv(options.grant),
    cwd: options.cwd,
    ...(control === undefined ? {} : { sockets: [control] }),
  };
}

/**
 * The flags that let a process connect to one Unix socket: Deno 2.9 checks
 * a connect as net access to `unix:<path>` and as read and write of the
 * path.
 *
 * @param path the socket
 * @param existing the process's other flags
 * @returns the flags to add (see `addedFlags` in `confine.ts`)
 * @example
 * ```ts
 * import { socketFlags } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(socketFlags("/s/c.sock", ["--allow-read"]), [
 *   "--allow-write=/s/c.sock", "--allow-net=unix:/s/c.sock",
 * ]);
 * ```
 */
export function socketFlags(
  path: string,
  existing: readonly string[],
): string[] {
  return addedFlags([
    `--allow-read=${path}`,
    `--allow-write=${path}`,
    `--allow-net=unix:${path}`,
  ], existing);
}

/**
 * The environment of a sandbox process: what Deno needs to find its cache,
 * plus the variables the grant names (and PATH when it may run binaries).
 *
 * @param grant the process's grant
 * @returns a clean environment
 * @example A clean environment
 * ```ts
 * import { sandboxEnv } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sandboxEnv({}).NO_COLOR, "1");
 * ```
 */
export function sandboxEnv(grant: Permissions): Record<string, string> {
  const env: Record<string, string> = {
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
  // Binaries named without a path are found through PATH.
  const path = (grant.run ?? []).length > 0 ? ["PATH"] : [];
  for (const name of [...PASS_ENV, ...path, ...(grant.env ?? [])]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

let bootstrapSource: Promise<string> | null = null;

/**
 * The worker bootstrap as JavaScript, made once per host: its TypeScript
 * source with the types stripped (it uses only erasable syntax) and its one
 * import, the shared `describe`, inlined (`bootstrap_text.ts`). Workers
 * start it from a `blob:` URL (so they need no read access to skillbox's
 * files); as JavaScript it is not compiled again in every process, and Deno
 * writes no compiled copy of it into its cache: a `blob:` URL is new in
 * every process, so that copy was never read again, and in a confined
 * process (read-only cache) Deno retried the write for 150 ms.
 *
 * @returns JavaScript source
 * @example The bootstrap as JavaScript
 * ```ts
 * import { loadBootstrap } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const js = await loadBootstrap();
 * assert.match(js, /hardening/);
 * assert.doesNotMatch(js, /import type/);
 * ```
 */
export function loadBootstrap(): Promise<string> {
  // With `describe.ts` inlined (see bootstrap_text.ts).
  bootstrapSource ??= readBootstrap();
  return bootstrapSource;
}

/**
 * Spawns a sandbox command with piped stdio and a clean environment.
 * Never started: what confinement opened for it (its egress proxy's
 * listener and socket) is closed now, as its exit would have.
 *
 * @param command what to spawn
 * @returns the child
 * @throws {Error} when it cannot be spawned (after `release`)
 * @example A command that cannot start
 * ```ts
 * import { spawnSandbox } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * let released = false;
 * assert.throws(() => spawnSandbox({ program: "/nonexistent/deno", args: [],
 *   env: {}, cwd: "/", release: () => released = true }));
 * assert.ok(released);
 * ```
 */
export function spawnSandbox(command: SandboxCommand): Deno.ChildProcess {
  try {
    return new Deno.Command(command.program, {
      args: command.args,
      cwd: command.cwd,
      clearEnv: true,
      env: command.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    command.release?.();
    throw err;
  }
}

/**
 * Whether a process's exit was V8's heap-limit abort. That abort is a
 * SIGTRAP (exit code 133 through a shell); the stderr check tells it from a
 * debugger trap, and the signal keeps code printing "out of memory" from
 * faking one.
 *
 * @param status how the process exited
 * @param stderrTail the end of what it wrote to stderr
 * @returns true when it ran out of memory
 * @example A heap-limit trap, and an exit that only says so
 * ```ts
 * import { ranOutOfMemory } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const trap = { success: false, code: 133, signal: "SIGTRAP" as const };
 * assert.equal(ranOutOfMemory(trap, "Fatal JavaScript out of memory"), true);
 * const exit = { success: false, code: 1, signal: null };
 * assert.equal(ranOutOfMemory(exit, "out of memory"), false);
 * ```
 */
export function ranOutOfMemory(
  status: Deno.CommandStatus,
  stderrTail: string,
): boolean {
  return (status.signal === "SIGTRAP" || status.code === 133) &&
    /out of memory|heap limit/i.test(stderrTail);
}

/**
 * The outcome of the operations a sandbox process's death cut short.
 *
 * @param status how the process exited
 * @param stderrTail the end of what it wrote to stderr
 * @returns `out_of_memory`, or a retryable `sandbox_crash`
 * @example A crash is retryable
 * ```ts
 * import { exitOutcome } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const crash = exitOutcome({ success: false, code: 1, signal: null }, "");
 * assert.equal(crash.code, "sandbox_crash");
 * assert.equal(crash.retryable, true);
 * ```
 */
export function exitOutcome(
  status: Deno.CommandStatus,
  stderrTail: string,
): SandboxOutcome & { ok: false } {
  return ranOutOfMemory(status, stderrTail)
    ? {
      ok: false,
      code: "out_of_memory",
      message: "Sandbox process ran out of memory",
      retryable: false,
    }
    : {
      ok: false,
      code: "sandbox_crash",
      message: `Sandbox process exited with code ${status.code}`,
      retryable: true,
    };
}
