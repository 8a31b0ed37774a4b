/**
 * Which host paths a confined process may ever see, whoever names them (an
 * MCP server entry's `args`, `read`, `write` or `cwd`, or what is found of
 * its installation). A path is checked as written (normalized, `..`
 * resolved) and as its real path (symlinks followed), so a link or a `..`
 * cannot reach what the plain path may not. `~` is never expanded: a path
 * starting with it is refused, with the reason.
 *
 * Never mounted:
 * - `/` itself, and the top-level folders that hold everyone's files or the
 *   whole system as a whole: `/home`, `/root`, `/tmp`, `/var`, `/mnt`,
 *   `/media`, `/opt`, `/srv`, `/usr` (their subfolders may be);
 * - anything at or under `/proc`, `/sys`, `/dev`, `/boot`, `/run`, `/etc`
 *   (the CA certificates and resolver files a server needs are added by
 *   the confinement itself, and nothing else of `/etc`) and `/var/run`;
 * - the user's home folder itself and every folder above it, and every
 *   `/home/<user>` as a whole (also where `/home` is a link);
 * - any path through a credential store: `.ssh`, `.gnupg`, `.aws`,
 *   `.azure`, `.kube`, `.docker`, `.password-store`, `.netrc`, `.npmrc`,
 *   `.pypirc`, `.git-credentials`, `.config/gcloud`, `.config/gh`;
 * - a host file the caller protects (the host's config, run history,
 *   cache) or a folder inside one. A mount that merely contains one is
 *   allowed: the confinement hides the protected path inside it.
 *
 * @module
 */

import { dirname, isAbsolute, resolve, sep } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";

/** Top-level folders never mounted as a whole. */
export const NEVER_WHOLE: readonly string[] = [
  "/",
  "/home",
  "/root",
  "/tmp",
  "/var",
  "/mnt",
  "/media",
  "/opt",
  "/srv",
  "/usr",
];

/** Folders never mounted, nor anything under them. */
export const NEVER_UNDER: readonly string[] = [
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/run",
  "/etc",
  "/var/run",
];

/** Path segments that hold credentials: never mounted, nor anything under them. */
export const CREDENTIAL_NAMES: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".password-store",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".config/gcloud",
  ".config/gh",
];

/** What {@link mountRefusal} checks a path against. */
export interface MountRuleOptions {
  /** The user's home folder. @default the `HOME` variable, if set */
  home?: string;
  /** Host paths never mounted (nor folders inside them). @default [] */
  protect?: readonly string[];
  /**
   * The folder holding users' homes: each folder in it is a home, never
   * mounted as a whole. @default "/home"
   */
  homes?: string;
}

/**
 * Why a host path may never be mounted into a confinement, or null when it
 * may.
 *
 * @param path an absolute path (normalized here)
 * @param options the home folder and protected host paths
 * @returns the reason, or null
 * @example The root, a host secret, a home and a credential store are refused
 * ```ts
 * import { mountRefusal } from "./mount_rule.ts";
 * import assert from "node:assert/strict";
 * const options = { home: "/home/ann", protect: ["/srv/app/skillbox.jsonc"] };
 * assert.match(mountRefusal("/", options)!, /never mounted/);
 * assert.match(mountRefusal("/etc/shadow", options)!, /under "\/etc"/);
 * assert.match(mountRefusal("/home/ann", options)!, /home folder/);
 * assert.match(mountRefusal("/home/ann/.ssh/id_ed25519", options)!, /credential/);
 * assert.match(mountRefusal("/srv/app/skillbox.jsonc", options)!, /host's own/);
 * assert.equal(mountRefusal("/home/ann/projects/data", options), null);
 * assert.equal(mountRefusal("/srv/app", options), null);
 * ```
 */
export function mountRefusal(
  path: string,
  options: MountRuleOptions = {},
): string | null {
  if (path.startsWith("~")) {
    return `"${path}" is not expanded (write the absolute path)`;
  }
  if (!isAbsolute(path)) return `"${path}" is not an absolute path`;
  const p = resolve(path);
  if (NEVER_WHOLE.includes(p)) {
    return `"${p}" is never mounted as a whole (name a folder inside it)`;
  }
  for (const root of NEVER_UNDER) {
    if (within(p, root)) return `"${p}" is under "${root}", never mounted`;
  }
  if (dirname(p) === resolve(options.homes ?? "/home")) {
    return `"${p}" is a home folder, never mounted as a whole`;
  }
  const home = options.home ?? Deno.env.get("HOME");
  if (home && isAbsolute(home) && within(resolve(home), p)) {
    return `"${p}" is the home folder or holds it, never mounted as a whole`;
  }
  // Whole segments only (`.sshd` is no `.ssh`): each name between slashes.
  const store = CREDENTIAL_NAMES.find((name) => `${p}/`.includes(`/${name}/`));
  if (store !== undefined) {
    return `"${p}" is in a credential store ("${store}"), never mounted`;
  }
  for (const file of options.protect ?? []) {
    if (within(p, resolve(file))) {
      return `"${p}" is one of the host's own files ("${file}"), never mounted`;
    }
  }
  return null;
}

/**
 * Checks a path someone named for a confinement, as written and as its
 * real path (when it exists).
 *
 * @param path the path (relative to `options.cwd`)
 * @param options the rule's options, the folder a relative path is in, and
 * what named it (for the message)
 * @returns the absolute, normalized path (symlinks kept: it is mounted at
 * the path its user knows)
 * @throws {SkillboxError} `runtime_error` naming the path and the rule
 * @example A `..` path and a link that leave an allowed folder are refused
 * ```ts
 * import { checkMount } from "./mount_rule.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkMount("/srv/data/../../etc", { by: "args", home: "/h" }),
 *   /Cannot mount "\/srv\/data\/..\/..\/etc" named in "args": "\/etc" is under "\/etc"/,
 * );
 * const dir = Deno.makeTempDirSync();
 * Deno.symlinkSync("/proc", dir + "/link");
 * assert.throws(() => checkMount(dir + "/link", { by: "read", home: "/h" }), /\/proc/);
 * assert.equal(checkMount("data", { by: "args", cwd: "/srv/app", home: "/h" }), "/srv/app/data");
 * ```
 */
export function checkMount(
  path: string,
  options: MountRuleOptions & { by: string; cwd?: string },
): string {
  if (path.startsWith("~")) {
    throw new SkillboxError(
      "runtime_error",
      `Cannot mount "${path}" named in "${options.by}": "~" is not expanded (write the absolute path)`,
    );
  }
  const absolute = resolve(options.cwd ?? "/", path);
  const real = realPath(absolute);
  // The homes, the home and the host's files are known by their real paths
  // too: through a link (/home -> /var/home) they still guard the real ones.
  const home = options.home ?? Deno.env.get("HOME");
  const homes = options.homes ?? "/home";
  const realRule = {
    home: home && isAbsolute(home) ? realPath(home) ?? home : home,
    protect: options.protect?.map((file) => realPath(file) ?? file),
    homes: realPath(homes) ?? homes,
  };
  for (const candidate of real === null ? [absolute] : [absolute, real]) {
    const why = mountRefusal(candidate, options) ??
      mountRefusal(candidate, realRule);
    if (why !== null) {
      throw new SkillboxError(
        "runtime_error",
        `Cannot mount "${path}" named in "${options.by}": ${why}`,
      );
    }
  }
  return absolute;
}

/**
 * The real path (links resolved) of what exists.
 *
 * @param path a path
 * @returns its real path, or null when it is absent (or may not be looked at)
 * @example
 * ```ts
 * import { realPath } from "./mount_rule.ts";
 * import assert from "node:assert/strict";
 * assert.equal(realPath("/surely/not/here"), null);
 * assert.equal(realPath("/"), "/");
 * ```
 */
export function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/**
 * Whether a path may be mounted (as written and as its real path), for
 * paths found rather than named: those refused are left out, not an error.
 *
 * @param path an absolute path
 * @param options the rule's options
 * @returns true when it may be mounted
 * @example
 * ```ts
 * import { mountable } from "./mount_rule.ts";
 * import assert from "node:assert/strict";
 * assert.equal(mountable("/", {}), false);
 * assert.equal(mountable("/usr/lib/node_modules/npm", {}), true);
 * ```
 */
export function mountable(path: string, options: MountRuleOptions): boolean {
  try {
    checkMount(path, { ...options, by: "" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether an absolute, normalized path is `root` or below it: a plain
 * prefix is not enough (`/srv/data2` is not under `/srv/data`). The one
 * check every grant, denied tree and mount rule uses.
 *
 * @param path the path asked about
 * @param root the folder it may be in
 * @returns true when `path` is `root` or inside it
 * @example
 * ```ts
 * import { within } from "./mount_rule.ts";
 * import assert from "node:assert/strict";
 * assert.equal(within("/srv/data/a.txt", "/srv/data"), true);
 * assert.equal(within("/srv/data2", "/srv/data"), false);
 * assert.equal(within("/etc/passwd", "/"), true);
 * ```
 */
export function within(path: string, root: string): boolean {
  return path === root ||
    path.startsWith(root.endsWith(sep) ? root : root + sep);
}
