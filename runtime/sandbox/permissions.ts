/**
 * Permissions: resolve what a definition asks for (relative to its module's
 * folder) into absolute paths, check it against the host policy, and map a
 * grant to sandbox process flags and a Worker's `deno.permissions`.
 *
 * @module
 */

import { dirname, isAbsolute, resolve, sep } from "node:path";
import {
  PERMISSION_KINDS,
  type Permissions,
} from "../../protocol/permissions.ts";
import type { WorkerPermissions } from "../../protocol/sandbox/pipe.ts";
import { deniedByTree, type DeniedTree } from "./denied_trees.ts";

/**
 * The most the host may grant (from `skillbox.jsonc`). Every list is empty by
 * default: a module may then only read its own folder.
 */
export interface Policy {
  /** Absolute paths a grant may read inside. @default [] */
  read?: string[];
  /** Absolute paths a grant may write inside. @default [] */
  write?: string[];
  /** Hosts (`name`, `name:port`, or `"*"` for any). @default [] */
  net?: string[];
  /** Environment variable names (or `"*"`). @default [] */
  env?: string[];
  /** Exact binaries that may be run (names or absolute paths). @default [] */
  run?: string[];
  /** System information keys (or `"*"`). @default [] */
  sys?: string[];
  /** Exact dynamic libraries that may be loaded. @default [] */
  ffi?: string[];
  /**
   * Paths never granted, and never granted a parent of: the host's source,
   * its config, the deno cache. Also passed as `--deny-read`/`--deny-write`.
   * @default []
   */
  deny?: string[];
  /**
   * Folders denied as a whole except for the folders inside them that are
   * served (the project root except its skills folders): a grant inside
   * one, or of a parent, is refused, so anything added to the tree later
   * is denied without anyone listing it.
   * @default []
   */
  deniedTrees?: DeniedTree[];
  /**
   * Folders holding many drop-in files side by side (a skills root). A module
   * directly inside one may read only its own file and local imports, not
   * the whole folder (which holds other modules).
   * @default []
   */
  sharedFolders?: string[];
}

/** The outcome of checking a request against a {@link Policy}. */
export type GrantCheck =
  | { ok: true; grant: Permissions }
  | {
    ok: false;
    /** The permission that was refused (`"net"`, `"read"`, ...). */
    permission: keyof Permissions;
    /** The refused entry. */
    value: string;
    /** A sentence naming both. */
    reason: string;
  };

const KEYS = PERMISSION_KINDS;

// Kinds whose policy may say `"*"` (any host, variable or key). Deno takes
// no `*` in a list (`--allow-net=*` and `--allow-sys=*` refuse to start), so
// a grant holding `"*"` (possible only when the policy holds it, see
// checkGrant) becomes the unrestricted permission.
const WILDCARD_KINDS: ReadonlySet<string> = new Set(["net", "env", "sys"]);

function unrestricted(key: string, list: string[]): boolean {
  return WILDCARD_KINDS.has(key) && list.includes("*");
}

/**
 * The paths a module may always read: its folder, or, for a file directly in
 * a shared folder, the file and its local imports.
 *
 * @param modulePath absolute path of the module
 * @param options the policy and the module's local import files
 * @returns absolute paths
 * @example A module's folder, or the file itself in a shared folder
 * ```ts
 * import { ownReadPaths } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(ownReadPaths("/s/echo/mod.ts"), ["/s/echo"]);
 * assert.deepEqual(
 *   ownReadPaths("/s/add.ts", { policy: { sharedFolders: ["/s"] } }),
 *   ["/s/add.ts"],
 * );
 * ```
 */
export function ownReadPaths(
  modulePath: string,
  options: { policy?: Policy; localFiles?: string[] } = {},
): string[] {
  const dir = dirname(modulePath);
  const shared = (options.policy?.sharedFolders ?? []).map((p) => resolve(p));
  if (!shared.includes(dir)) return [dir];
  return [...new Set([modulePath, ...(options.localFiles ?? [])])];
}

/**
 * Resolves a definition's permissions against its module's folder: relative
 * paths in `read`, `write`, `ffi` (and `run` entries with a slash) become
 * absolute; lists are de-duplicated.
 *
 * @param permissions what the definition declares
 * @param moduleDir the module's folder
 * @returns the same permissions with absolute paths
 * @example Relative paths resolved against the module's folder
 * ```ts
 * import { resolvePermissionPaths } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * const p = resolvePermissionPaths({ read: ["data"], run: ["git"] }, "/s/x");
 * assert.deepEqual(p, { read: ["/s/x/data"], run: ["git"] });
 * ```
 */
export function resolvePermissionPaths(
  permissions: Permissions,
  moduleDir: string,
): Permissions {
  const out: Permissions = {};
  for (const key of KEYS) {
    const list = permissions[key];
    if (!Array.isArray(list)) continue;
    const pathLike = key === "read" || key === "write" || key === "ffi";
    out[key] = [
      ...new Set(
        list.map(String).map((v) =>
          pathLike || (key === "run" && v.includes("/"))
            ? resolve(moduleDir, v)
            : v
        ),
      ),
    ];
  }
  return out;
}

function within(path: string, root: string): boolean {
  return path === root ||
    path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function netAllowed(entry: string, policy: string[]): boolean {
  if (policy.includes("*") || policy.includes(entry)) return true;
  const host = entry.replace(/:\d+$/, "");
  return host !== entry && policy.includes(host);
}

/**
 * Checks a request against the policy and returns the grant (the request
 * plus the module's own read paths) or the first refused entry.
 *
 * @param requested absolute permissions (see {@link resolvePermissionPaths})
 * @param options the module path, the policy, and its local import files
 * @returns the grant, or which permission was refused and why
 * @example Refuse a host the policy does not name
 * ```ts
 * import { checkGrant } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * const r = checkGrant({ net: ["evil.example"] }, { modulePath: "/s/x/mod.ts" });
 * assert.equal(r.ok, false);
 * if (!r.ok) assert.equal(r.permission, "net");
 * ```
 */
export function checkGrant(
  requested: Permissions,
  options: { modulePath: string; policy?: Policy; localFiles?: string[] },
): GrantCheck {
  const policy = options.policy ?? {};
  const deny = (policy.deny ?? []).map((p) => resolve(p));
  const trees = policy.deniedTrees ?? [];
  const own = ownReadPaths(options.modulePath, options);
  const refuse = (
    permission: keyof Permissions,
    value: string,
  ): GrantCheck => ({
    ok: false,
    permission,
    value,
    reason: `Permission "${permission}" for "${value}" exceeds the host policy`,
  });
  const grant: Permissions = {};
  for (const key of KEYS) {
    const list = key === "read"
      ? [...new Set([...own, ...(requested.read ?? [])])]
      : requested[key] ?? [];
    for (const value of list) {
      if (value.includes(",")) return refuse(key, value);
      if (key === "read" || key === "write") {
        if (!isAbsolute(value)) return refuse(key, value);
        if (deny.some((d) => within(value, d) || within(d, value))) {
          return refuse(key, value);
        }
        if (deniedByTree(value, trees)) return refuse(key, value);
        const roots = (policy[key] ?? []).map((p) => resolve(p));
        const ownOk = key === "read" && own.some((o) => within(value, o));
        if (!ownOk && !roots.some((r) => within(value, r))) {
          return refuse(key, value);
        }
      } else if (key === "net") {
        if (!netAllowed(value, policy.net ?? [])) return refuse(key, value);
      } else if (key === "env" || key === "sys") {
        const allowed = policy[key] ?? [];
        if (!allowed.includes("*") && !allowed.includes(value)) {
          return refuse(key, value);
        }
      } else if (!(policy[key] ?? []).includes(value)) {
        // run and ffi: only what the policy names exactly.
        return refuse(key, value);
      }
    }
    if (list.length > 0) grant[key] = [...list].sort();
  }
  return { ok: true, grant };
}

/**
 * Merges two sets of permissions: each kind's lists joined, duplicates
 * dropped, empty kinds left out.
 *
 * @param a one set (absolute paths)
 * @param b the other
 * @returns the union
 * @example The union of two grants
 * ```ts
 * import { mergePermissions } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   mergePermissions({ read: ["/a"], net: ["x.io"] }, { read: ["/a", "/b"] }),
 *   { read: ["/a", "/b"], net: ["x.io"] },
 * );
 * ```
 */
export function mergePermissions(
  a: Permissions,
  b: Permissions,
): Permissions {
  const out: Permissions = {};
  for (const key of KEYS) {
    const list = [...new Set([...(a[key] ?? []), ...(b[key] ?? [])])];
    if (list.length > 0) out[key] = list;
  }
  return out;
}

/**
 * Maps a grant to `deno run` permission flags for a sandbox process.
 *
 * @param grant a checked grant (absolute paths)
 * @param deny paths to pass as `--deny-read`/`--deny-write`
 * @returns the flags, never `--allow-all`; a `"*"` in `net`, `env` or
 * `sys` gives that permission unrestricted (`--allow-net`)
 * @example A grant as Deno flags
 * ```ts
 * import { grantToFlags } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(grantToFlags({ read: ["/a", "/b"], net: ["x.io"] }), [
 *   "--allow-read=/a,/b",
 *   "--allow-net=x.io",
 * ]);
 * ```
 */
export function grantToFlags(
  grant: Permissions,
  deny: string[] = [],
): string[] {
  const flags: string[] = [];
  for (const key of KEYS) {
    const list = grant[key];
    if (!list || list.length === 0) continue;
    flags.push(
      unrestricted(key, list)
        ? `--allow-${key}`
        : `--allow-${key}=${list.join(",")}`,
    );
  }
  if (deny.length > 0) {
    flags.push(`--deny-read=${deny.join(",")}`);
    flags.push(`--deny-write=${deny.join(",")}`);
  }
  return flags;
}

/**
 * Maps a grant to a Worker's `deno.permissions`: exactly the grant, nothing
 * inherited (`false` for every permission not granted, no remote imports;
 * `true` for a `"*"` in `net`, `env` or `sys`).
 *
 * @param grant a checked grant (absolute paths)
 * @returns the worker permissions object
 * @example A grant as a worker's permissions, nothing else allowed
 * ```ts
 * import { grantToWorkerPermissions } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * const p = grantToWorkerPermissions({ read: ["/a"] });
 * assert.deepEqual(p.read, ["/a"]);
 * assert.equal(p.net, false);
 * ```
 */
export function grantToWorkerPermissions(
  grant: Permissions,
): WorkerPermissions {
  const out = { import: false } as WorkerPermissions;
  for (const key of KEYS) {
    const list = grant[key];
    out[key] = !list || list.length === 0
      ? false
      : unrestricted(key, list)
      ? true
      : [...list];
  }
  return out;
}

/**
 * A stable key for a grant: equal grants share a sandbox process.
 *
 * @param grant a checked grant
 * @returns a canonical JSON string
 * @example The same key whatever the order
 * ```ts
 * import { grantKey } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * assert.equal(grantKey({ read: ["/b", "/a"] }), grantKey({ read: ["/a", "/b"] }));
 * ```
 */
export function grantKey(grant: Permissions): string {
  const out: Record<string, string[]> = {};
  for (const key of KEYS) {
    const list = grant[key];
    if (list && list.length > 0) out[key] = [...new Set(list)].sort();
  }
  return JSON.stringify(out);
}
