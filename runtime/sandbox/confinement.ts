/**
 * OS confinement of sandbox processes with bubblewrap: finds out whether it
 * works on this machine (once per host), and where the pieces a confined
 * Deno needs live. `confinement_args.ts` builds each process's command line.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { ConfinementLayout } from "./confinement_args.ts";
import { confineArgs } from "./confinement_args.ts";
import type { Permissions } from "../../protocol/permissions.ts";

/**
 * `"auto"`: confine when it works, else say why and run with Deno's
 * permissions alone; `"required"`: refuse to start without it; `"off"`.
 */
export type ConfinementMode = "auto" | "required" | "off";

/** What {@link detectConfinement} found. */
export interface ConfinementStatus {
  mode: ConfinementMode;
  /** Whether sandbox processes run confined. */
  active: boolean;
  /** One line for the banner: what is used, or why confinement is off. */
  reason: string;
  /** Where the binary, libraries and cache live; null when not active. */
  layout: ConfinementLayout | null;
}

/** Options for {@link detectConfinement}. */
export interface DetectOptions {
  /** The bwrap binary. @default "bwrap" found on PATH */
  bwrap?: string;
  /** The Deno binary confined processes run. @default Deno.execPath() */
  execPath?: string;
}

// Top-level folders that merged-/usr systems make links (recreated inside so
// the ELF interpreter path /lib64/ld-linux... resolves), or that hold
// binaries an allowed `run` needs.
const TOP_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const SYSTEM_DIRS = ["/usr", ...TOP_DIRS, "/etc/alternatives"];

/**
 * Finds out whether sandbox processes can be confined, by running the Deno
 * binary inside the very confinement sandboxes get (so a kernel without
 * user namespaces, a missing bwrap or a missing library all show here).
 *
 * @param mode the configured `sandbox.confinement`
 * @param options the bwrap and Deno binaries
 * @returns whether confinement is active, and the one-line reason
 * @throws {SkillboxError} `runtime_error` when `mode` is `"required"` and
 * confinement does not work
 * @example Turned off
 * ```ts
 * import { detectConfinement } from "./confinement.ts";
 * import assert from "node:assert/strict";
 * const status = await detectConfinement("off");
 * assert.equal(status.active, false);
 * assert.match(status.reason, /off/);
 * ```
 */
export async function detectConfinement(
  mode: ConfinementMode,
  options: DetectOptions = {},
): Promise<ConfinementStatus> {
  if (mode === "off") {
    return {
      mode,
      active: false,
      reason: 'OS confinement is off (sandbox.confinement: "off")',
      layout: null,
    };
  }
  const found = await probe(options);
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
  options: DetectOptions,
): Promise<{ layout: ConfinementLayout; version: string } | string> {
  if (Deno.build.os !== "linux") {
    return `bubblewrap needs Linux, this is ${Deno.build.os}`;
  }
  const bwrap = options.bwrap ?? await which("bwrap");
  if (!bwrap) return "bwrap was not found on PATH (install bubblewrap)";
  const version = await output(bwrap, ["--version"]);
  if (version === null) return `"${bwrap}" does not run`;
  const execPath = await Deno.realPath(options.execPath ?? Deno.execPath());
  const layout: ConfinementLayout = {
    bwrap,
    execPath,
    libDirs: await libDirs(execPath),
    links: await topLinks(),
    denoDir: await denoDir(execPath),
    systemDirs: await existing(SYSTEM_DIRS),
  };
  const cmd = confineArgs(layout, {
    grant: {},
    runtimeFiles: [],
    denoArgs: ["--version"],
    env: {},
  });
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

async function which(name: string): Promise<string | null> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const path = join(dir, name);
      const info = await Deno.stat(path);
      if (info.isFile) return path;
    } catch {
      // Not here.
    }
  }
  return null;
}

async function output(command: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(command, {
      args,
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
  const text = await output("ldd", [execPath]);
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
    try {
      if ((await Deno.lstat(path)).isSymlink) {
        links.push([path, await Deno.readLink(path)]);
      }
    } catch {
      // Absent on this system.
    }
  }
  return links;
}

/** Real folders (not links) among the paths. */
async function existing(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    try {
      if ((await Deno.lstat(path)).isDirectory) out.push(path);
    } catch {
      // Absent.
    }
  }
  return out;
}

/** Deno's cache folder as the binary itself reports it. */
async function denoDir(execPath: string): Promise<string> {
  const text = await output(execPath, ["info", "--json"]);
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
  try {
    return await Deno.realPath(dir);
  } catch {
    return dir;
  }
}

/** A process to start: program, arguments, environment, folder. */
export interface ProcessCommand {
  program: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Called once the process has exited (frees what was opened for it). */
  release?: () => void;
  /** Unix sockets it connects to (its control socket): bound in as they are. */
  sockets?: string[];
}

/**
 * Wraps the command of a sandbox process in its confinement: the same Deno
 * arguments run inside bwrap, with only the granted variables (and `PATH`
 * for a `run` grant) left in the environment.
 *
 * @param command the unconfined command (`program` is the Deno binary)
 * @param options the layout, the grant, and the runtime's own files
 * @returns the confined command
 * @example A command wrapped in bwrap, with the environment its grant names
 * ```ts
 * import { confineCommand } from "./confinement.ts";
 * import assert from "node:assert/strict";
 * const cmd = confineCommand(
 *   { program: "/opt/deno", args: ["run", "/app/main.ts"], env: { HOME: "/root", K: "v" }, cwd: "/app" },
 *   {
 *     layout: { bwrap: "/usr/bin/bwrap", execPath: "/opt/deno", libDirs: [], links: [], denoDir: "/c", systemDirs: [] },
 *     grant: { env: ["K"] },
 *     runtimeFiles: ["/app/main.ts"],
 *   },
 * );
 * assert.equal(cmd.program, "/usr/bin/bwrap");
 * assert.equal(cmd.env.K, "v");
 * assert.equal(cmd.env.HOME, "/tmp");
 * assert.deepEqual(cmd.args.slice(-3), ["/opt/deno", "run", "/app/main.ts"]);
 * ```
 */
export function confineCommand(
  command: ProcessCommand,
  options: {
    layout: ConfinementLayout;
    grant: Permissions;
    runtimeFiles: string[];
    /** The sandbox's read-only Deno cache (`confinement_cache.ts`). */
    cacheDir?: string;
    /** The host's egress proxy socket for this process. */
    egressSocket?: string;
  },
): ProcessCommand {
  const keep = new Set(options.grant.env ?? []);
  if ((options.grant.run ?? []).length > 0) keep.add("PATH");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(command.env)) {
    if (keep.has(k)) env[k] = v;
  }
  const confined = confineArgs(options.layout, {
    grant: options.grant,
    runtimeFiles: options.runtimeFiles,
    denoArgs: command.args,
    env,
    cacheDir: options.cacheDir,
    egressSocket: options.egressSocket,
    // Read-only is enough: connecting to a socket is not a write to its
    // mount.
    binds: (command.sockets ?? []).map((path) => ({ from: path, to: path })),
  });
  return {
    program: confined.command,
    args: confined.args,
    env: confined.env,
    cwd: confined.cwd,
  };
}
