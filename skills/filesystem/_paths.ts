/**
 * Confinement to the configured `root`: every path an agent passes is
 * resolved against it, `..` cannot climb out, and symlinks are followed with
 * `Deno.realPath` so a link cannot point outside. This is defense in depth:
 * the sandbox grants only `root`, but Deno checks permissions on the path as
 * given, not on where a symlink leads.
 *
 * POSIX paths only (the sandbox runs on Linux and macOS).
 *
 * @module
 */

// `resolve` of an absolute path normalizes it lexically: collapses `//`, `.`
// and `..` (never above `/`) and drops a trailing slash.
import { dirname, relative, resolve as normalize } from "node:path/posix";

/** The filesystem toolkit's configuration with defaults applied. */
export interface FsConfig {
  /** Absolute, normalized root directory. */
  root: string;
  writable: boolean;
}

/**
 * Reads the toolkit config from `ctx.config`.
 *
 * @param config `ctx.config`
 * @returns the config with defaults
 * @throws {Error} when `root` is missing or not absolute
 */
export function fsConfig(config: Record<string, unknown>): FsConfig {
  const root = config.root;
  if (typeof root !== "string" || root === "") {
    throw new Error(
      'The filesystem toolkit is not configured: set "root" to an absolute directory',
    );
  }
  if (!root.startsWith("/")) {
    throw new Error(
      `The filesystem toolkit is misconfigured: "root" must be an absolute path, got "${root}"`,
    );
  }
  return { root: normalize(root), writable: config.writable === true };
}

/** Whether `path` is `base` or inside it (both normalized). */
function isInside(base: string, path: string): boolean {
  return path === base || base === "/" || path.startsWith(base + "/");
}

/** A path inside the root. */
export interface RootPath {
  /** Absolute path under root, as given (not symlink-resolved). */
  abs: string;
  /** Path relative to root (`.` for the root itself), for results. */
  rel: string;
}

/**
 * Resolves an agent-given path (relative to root, or absolute inside it)
 * and checks it stays inside root, lexically and through symlinks. The
 * path itself need not exist (for writes); its nearest existing ancestor
 * must resolve inside root, and a dangling symlink is refused because
 * writing through it would create a file wherever it points.
 *
 * @param cfg the toolkit config
 * @param path the path the agent gave
 * @returns the absolute and root-relative path
 * @throws {Error} when the path leaves root
 */
export async function resolveInRoot(
  cfg: FsConfig,
  path: string,
): Promise<RootPath> {
  if (typeof path !== "string") throw new TypeError("A path must be a string");
  if (path.includes("\0")) throw new Error("A path cannot contain NUL bytes");
  const raw = path.startsWith("/") ? path : `${cfg.root}/${path}`;
  // Reject a climb even when it comes back (`a/../../root/x`) so the rule is
  // simple to state: no path component may step above root.
  if (!staysInside(cfg.root, raw)) {
    throw new Error(`Path "${path}" is outside the root "${cfg.root}"`);
  }
  const abs = normalize(raw);
  const realRoot = await realRootOf(cfg);
  let probe = abs;
  for (;;) {
    try {
      const real = await Deno.realPath(probe);
      if (!isInside(realRoot, normalize(real))) {
        throw new Error(
          `Path "${path}" resolves outside the root through a symlink`,
        );
      }
      break;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      const link = await Deno.lstat(probe).catch(() => null);
      if (link?.isSymlink) {
        throw new Error(`Path "${path}" goes through a dangling symlink`);
      }
      if (probe === cfg.root) {
        throw new Error(`The root "${cfg.root}" does not exist`);
      }
      probe = dirname(probe);
    }
  }
  // `relative` names the root itself "", results name it ".".
  return { abs, rel: relative(cfg.root, abs) || "." };
}

/**
 * Checks that an entry found while walking (already under root lexically)
 * does not lead outside root through a symlink.
 *
 * @param cfg the toolkit config
 * @param abs an absolute path under root
 * @returns true when its real path is inside root
 */
export async function realInside(cfg: FsConfig, abs: string): Promise<boolean> {
  try {
    return isInside(
      await realRootOf(cfg),
      normalize(await Deno.realPath(abs)),
    );
  } catch {
    return false;
  }
}

/**
 * Checks that a file opened at `abs` is the one at the real location of
 * `abs`, inside root. Deno resolves a path's symlinks before it opens it
 * (O_NOFOLLOW does not help), so a symlink swapped in after
 * {@link resolveInRoot}'s check is followed: the open file is compared with
 * what is there now.
 *
 * @param cfg the toolkit config
 * @param abs the path it was opened at
 * @param opened the open file's stat
 * @returns true when it is the file inside root
 */
export async function openedInside(
  cfg: FsConfig,
  abs: string,
  opened: { ino: number | null; dev: number },
): Promise<boolean> {
  try {
    const real = await Deno.realPath(abs);
    const there = await Deno.lstat(real);
    return opened.ino === there.ino && opened.dev === there.dev &&
      await realInside(cfg, real);
  } catch {
    return false;
  }
}

/** Whether an absolute `path` ends inside root, never leaving it once in. */
function staysInside(root: string, path: string): boolean {
  // Walk the path component by component; at no point may the current
  // directory be outside root once we have entered it. The walk resolves
  // `.`, `..` and `//` as `normalize` does, so its end is the path itself.
  const stack: string[] = [];
  let entered = false;
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") stack.pop();
    else stack.push(part);
    if (isInside(root, "/" + stack.join("/"))) entered = true;
    else if (entered) return false;
  }
  return isInside(root, "/" + stack.join("/"));
}

async function realRootOf(cfg: FsConfig): Promise<string> {
  try {
    return normalize(await Deno.realPath(cfg.root));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new Error(`The root "${cfg.root}" does not exist`);
    }
    throw err;
  }
}
