/**
 * The bubblewrap command line that confines one sandbox process: its own
 * user, PID, network (nothing in it but loopback: a grant with hosts
 * reaches them through the host's egress proxy, whose socket is bound in),
 * IPC and UTS namespaces, and a mount namespace in which
 * only what the process needs exists (the Deno binary and its libraries,
 * Deno's module cache read-only, the sandbox runtime's own files read-only,
 * each read grant read-only, each write grant read-write, a private `/tmp`,
 * `/proc` of its own PID namespace and a minimal `/dev`). Pure: the layout
 * of the machine comes in as data (see `confinement.ts`).
 *
 * @module
 */

import { dirname, join } from "node:path";
import type { Permissions } from "../../protocol/permissions.ts";
import { relayBind } from "../egress/relay_command.ts";

/** Where the pieces a confined Deno needs live on this machine. */
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
   * System folders bound read-only when the grant runs binaries (`run`), so
   * that an allowed binary and what it loads exist: `/usr` and friends.
   */
  systemDirs: string[];
}

/** What one confined process gets. */
export interface ConfineSpec {
  /** The checked grant (absolute paths). */
  grant: Permissions;
  /** Files of the sandbox runtime itself (process main and its imports). */
  runtimeFiles: string[];
  /** The arguments after the Deno binary (`run`, flags, main). */
  denoArgs: string[];
  /** The environment the process may see (already reduced to the grant). */
  env: Record<string, string>;
  /** Size of the private `/tmp`, in MiB. @default 64 */
  tmpMb?: number;
  /**
   * A folder bound read-write at `/tmp` instead of a fresh tmpfs (skill
   * scripts: a folder of their workspace's tmpfs, under its quota; see
   * `runtime/skills/scripts/workspace_mount.ts`). @default a tmpfs of `tmpMb`
   */
  tmpDir?: string;
  /**
   * The sandbox's own Deno cache (see `confinement_cache.ts`): its files
   * are bound read-only into a private tmpfs at its path, the process's
   * `DENO_DIR`. @default none: `DENO_DIR` is the host's cache folder with
   * only `npm` and `remote` in it
   */
  cacheDir?: string;
  /**
   * Host paths mounted at another path inside, after the grants (skill
   * scripts: the skill's folder at `/skill`, the run's workspace at
   * `/work`). @default none
   */
  binds?: Array<{ from: string; to: string; writable?: boolean }>;
  /** Working folder inside. @default "/" */
  cwd?: string;
  /**
   * The host's egress proxy socket for this process (see
   * `runtime/egress/proxy.ts`), bound in where its relay expects it.
   * @default none: no way out of the empty network namespace
   */
  egressSocket?: string;
}

/** A command ready for `Deno.Command`. */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** The whole environment (spawn with `clearEnv: true`). */
  env: Record<string, string>;
  /** Working folder inside the namespace. */
  cwd: string;
}

/** The uid and gid the confined process runs as (`nobody`). */
export const CONFINED_UID = 65534;

// The folders of Deno's cache a sandbox reads: npm packages and remote
// modules, both only ever loaded from the cache (`--cached-only`).
const DENO_DIR_PARTS = ["npm", "remote"];

/**
 * Builds the bwrap command line for a sandbox process.
 *
 * Mount order matters: later mounts cover earlier ones, so the private
 * `/tmp` comes before the grants (a grant may live under `/tmp`), and grants
 * are bound shortest path first with a write grant after a read grant of
 * the same path.
 *
 * @param layout where the binary, its libraries and the cache live
 * @param spec the grant, runtime files, Deno arguments and environment
 * @returns the command, its arguments and environment
 * @example Confine a process that may read one folder
 * ```ts
 * import { confineArgs } from "./confinement_args.ts";
 * import assert from "node:assert/strict";
 * const cmd = confineArgs({
 *   bwrap: "/usr/bin/bwrap", execPath: "/opt/deno", libDirs: ["/usr/lib"],
 *   links: [["/lib", "usr/lib"]], denoDir: "/c/deno", systemDirs: ["/usr"],
 * }, {
 *   grant: { read: ["/srv/data"] }, runtimeFiles: ["/app/main.ts"],
 *   denoArgs: ["run", "/app/main.ts"], env: { NO_COLOR: "1" },
 * });
 * assert.equal(cmd.command, "/usr/bin/bwrap");
 * assert.ok(cmd.args.includes("--unshare-net"));
 * const at = cmd.args.indexOf("/srv/data");
 * assert.equal(cmd.args[at - 1], "--ro-bind-try");
 * assert.deepEqual(cmd.args.slice(-3), ["/opt/deno", "run", "/app/main.ts"]);
 * assert.equal(cmd.env.DENO_DIR, "/c/deno");
 * ```
 */
export function confineArgs(
  layout: ConfinementLayout,
  spec: ConfineSpec,
): ConfinedCommand {
  const args = namespaceArgs(spec.tmpMb ?? 64, spec.tmpDir);
  args.push(...denoMounts(layout, spec));
  for (const [path, writable] of grantMounts(spec.grant)) {
    args.push(writable ? "--bind-try" : "--ro-bind-try", path, path);
  }
  for (const b of spec.binds ?? []) {
    args.push(b.writable ? "--bind" : "--ro-bind", b.from, b.to);
  }
  // After the grants, so that no grant covers Deno's cache.
  if (spec.cacheDir) {
    args.push(...cacheMounts(layout.denoDir, spec.cacheDir, spec));
  }
  // Last, so that no grant's mount covers it.
  if (spec.egressSocket) args.push(...relayBind(spec.egressSocket));
  // Nothing else in the root is writable: no memory to fill outside /tmp's
  // bound, no files to plant beside the mounts.
  args.push("--remount-ro", "/", "--chdir", spec.cwd ?? "/", "--");
  args.push(layout.execPath, ...spec.denoArgs);
  return {
    command: layout.bwrap,
    args,
    env: {
      ...spec.env,
      // Deno finds its cache where it is bound; HOME and TMPDIR point at the
      // private /tmp, never at a host folder.
      DENO_DIR: spec.cacheDir ?? layout.denoDir,
      HOME: "/tmp",
      TMPDIR: "/tmp",
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    },
    cwd: spec.cwd ?? "/",
  };
}

/**
 * The namespaces and the bare root: its own user (mapped to nobody, no
 * capabilities, no nested user namespaces), PIDs, network (loopback only,
 * down), IPC, hostname and cgroup view; its own `/proc`, a minimal `/dev`
 * and a private `/tmp` of `tmpMb` MiB, or `tmpDir` bound there (first: a
 * grant may live under it).
 */
function namespaceArgs(tmpMb: number, tmpDir?: string): string[] {
  return [
    "--unshare-user",
    "--uid",
    String(CONFINED_UID),
    "--gid",
    String(CONFINED_UID),
    "--disable-userns",
    "--unshare-pid",
    "--as-pid-1",
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
    "--dev",
    "/dev",
    ...(tmpDir
      ? ["--bind", tmpDir, "/tmp"]
      : ["--size", String(tmpMb * 1024 * 1024), "--tmpfs", "/tmp"]),
  ];
}

/**
 * What Deno itself needs inside, before the grants: the top-level links,
 * the system folders when the grant runs binaries, the binary and its
 * libraries (unless a system folder holds them already), the host cache's
 * npm and remote folders when there is no sandbox cache, and the sandbox
 * runtime's own files.
 */
function denoMounts(layout: ConfinementLayout, spec: ConfineSpec): string[] {
  const args: string[] = [];
  for (const [path, target] of layout.links) {
    args.push("--symlink", target, path);
  }
  const runs = (spec.grant.run ?? []).length > 0;
  const system = runs ? layout.systemDirs : [];
  for (const dir of system) args.push("--ro-bind-try", dir, dir);
  for (const dir of layout.libDirs) {
    if (!system.some((s) => inside(dir, s))) args.push("--ro-bind", dir, dir);
  }
  if (!system.some((s) => inside(layout.execPath, s))) {
    args.push("--ro-bind", layout.execPath, layout.execPath);
  }
  if (!spec.cacheDir) {
    for (const part of DENO_DIR_PARTS) {
      const dir = join(layout.denoDir, part);
      args.push("--ro-bind-try", dir, dir);
    }
  }
  for (const file of spec.runtimeFiles) args.push("--ro-bind", file, file);
  return args;
}

// Deno's cache databases a confined process reads (see confinement_cache.ts).
const CACHE_DATABASES = [
  "v8_code_cache_v2",
  "dep_analysis_cache_v2",
  "node_analysis_cache_v2",
];

/**
 * The confined process's `DENO_DIR`: a private, size-bounded tmpfs at the
 * sandbox cache's path, holding read-only binds of what the host prepared
 * (the host cache's npm and remote folders, the cache databases, the
 * compiled sandbox runtime files). Deno saves what it compiles for the
 * process's own modules into the tmpfs: gone with the process, never seen
 * by another, and never a failed write, which Deno retries for 150 ms.
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
    ...spec.runtimeFiles.map((f) => join("gen", "file", f + ".js")),
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
 * read and written is mounted once, read-write.
 *
 * @param grant a checked grant (absolute paths)
 * @returns `[path, writable]` pairs
 * @example Shorter paths first, a path both read and written mounted writable
 * ```ts
 * import { grantMounts } from "./confinement_args.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   grantMounts({ read: ["/a/b", "/a"], write: ["/a/b/c", "/a"] }),
 *   [["/a", true], ["/a/b", false], ["/a/b/c", true]],
 * );
 * ```
 */
export function grantMounts(grant: Permissions): Array<[string, boolean]> {
  const mounts = new Map<string, boolean>();
  for (const path of grant.read ?? []) mounts.set(path, false);
  for (const path of grant.write ?? []) mounts.set(path, true);
  return [...mounts].sort(([a], [b]) => depth(a) - depth(b) || cmp(a, b));
}

function depth(path: string): number {
  return path.split("/").filter(Boolean).length;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function inside(path: string, root: string): boolean {
  return path === root || dirname(path) === root ||
    path.startsWith(root.endsWith("/") ? root : root + "/");
}
