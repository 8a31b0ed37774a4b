/**
 * What an operation may touch: the host policy (the most it may grant), a
 * definition's permissions resolved against its module's folder and
 * checked against that policy, the module's own reads added to a call's
 * grant, checked grants cached per module version (and configuration),
 * and a grant mapped to a sandbox process's flags and its workers'
 * `deno.permissions`. The permission kinds are in
 * `protocol/permissions.ts`; denied trees in `denied_trees.ts`.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import {
  PERMISSION_KINDS,
  type Permissions,
} from "../../protocol/permissions.ts";
import type { WorkerPermissions } from "../../protocol/sandbox/pipe.ts";
import { moduleGraph } from "../discovery/module_graph.ts";
import { deniedByTree, type DeniedTree } from "./denied_trees.ts";
import { within } from "../confine/mount_rule.ts";
import type { Sandbox } from "./types.ts";

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
 * import { ownReadPaths } from "./grants.ts";
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
 * import { resolvePermissionPaths } from "./grants.ts";
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
  for (const key of PERMISSION_KINDS) {
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
 * import { checkGrant } from "./grants.ts";
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
  for (const key of PERMISSION_KINDS) {
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
      } else {
        // env and sys: what the policy names, or anything under its "*";
        // run and ffi: only what the policy names exactly.
        const allowed = policy[key] ?? [];
        if (!unrestricted(key, allowed) && !allowed.includes(value)) {
          return refuse(key, value);
        }
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
 * import { mergePermissions } from "./grants.ts";
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
  for (const key of PERMISSION_KINDS) {
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
 * import { grantToFlags } from "./grants.ts";
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
  for (const key of PERMISSION_KINDS) {
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
 * import { grantToWorkerPermissions } from "./grants.ts";
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
  for (const key of PERMISSION_KINDS) {
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
 * import { grantKey } from "./grants.ts";
 * import assert from "node:assert/strict";
 * assert.equal(grantKey({ read: ["/b", "/a"] }), grantKey({ read: ["/a", "/b"] }));
 * ```
 */
export function grantKey(grant: Permissions): string {
  const out: Record<string, string[]> = {};
  for (const key of PERMISSION_KINDS) {
    const list = grant[key];
    if (list && list.length > 0) out[key] = [...new Set(list)].sort();
  }
  return JSON.stringify(out);
}

/**
 * Own read paths of modules, and grants with them added.
 *
 * @example A module in its own folder reads that folder
 * ```ts
 * import { OwnReads } from "./grants.ts";
 * import assert from "node:assert/strict";
 * const own = new OwnReads({});
 * const grant = Object.freeze({ net: ["x.io"] });
 * const merged = own.withGrant("/s/t/mod.ts", grant);
 * assert.deepEqual(merged, { net: ["x.io"], read: ["/s/t"] });
 * assert.equal(own.withGrant("/s/t/mod.ts", grant), merged);
 * ```
 */
export class OwnReads {
  /** Modules whose files are kept before the oldest goes (read again). */
  static readonly MAX_MODULES = 16_384;
  readonly #policy: Policy;
  readonly #shared: Set<string>;
  // Local import files of modules directly in a shared folder. Bounded:
  // whoever adds and removes files in a served folder would grow it.
  readonly #files = new Map<string, string[]>();
  // Merged grants per checked grant (checked grants are shared, frozen).
  readonly #merged = new WeakMap<
    Permissions,
    { path: string; grant: Permissions }
  >();

  /** @param policy its `sharedFolders` decide what "own" means */
  constructor(policy: Policy) {
    this.#policy = policy;
    this.#shared = new Set((policy.sharedFolders ?? []).map((p) => resolve(p)));
  }

  /** Records a module's local import files (known from discovery). */
  remember(path: string, files: string[]): void {
    // Only a module directly in a shared folder reads by its files.
    if (!this.#shared.has(dirname(path))) return;
    this.#files.delete(path);
    if (this.#files.size >= OwnReads.MAX_MODULES) {
      this.#files.delete(this.#files.keys().next().value!);
    }
    this.#files.set(path, files);
  }

  /** The module's own read grant. */
  grant(path: string): Permissions | Promise<Permissions> {
    const files = this.#files.get(path);
    if (files || !this.#shared.has(dirname(path))) {
      // Only the imports the policy lets it read, as discovery checks them:
      // files are recorded before that check (a module refused for them
      // may still have an earlier version served), or read here.
      const allowed = files?.filter((file) =>
        checkGrant({ read: [file] }, { modulePath: path, policy: this.#policy })
          .ok
      );
      return {
        read: ownReadPaths(path, { policy: this.#policy, localFiles: allowed }),
      };
    }
    return moduleGraph(path).then((graph) => {
      this.remember(path, graph.files);
      return this.grant(path);
    });
  }

  /**
   * A call's grant with the module's own reads added: frozen, and the same
   * object for the same (frozen) grant, so routing can key on it.
   */
  withGrant(
    path: string,
    grant: Permissions,
  ): Permissions | Promise<Permissions> {
    const hit = this.#merged.get(grant);
    if (hit && hit.path === path) return hit.grant;
    const own = this.grant(path);
    return own instanceof Promise
      ? own.then((o) => this.#merge(path, grant, o))
      : this.#merge(path, grant, own);
  }

  #merge(path: string, grant: Permissions, own: Permissions): Permissions {
    const read = [...new Set([...(own.read ?? []), ...(grant.read ?? [])])];
    const merged: Permissions = Object.freeze({
      ...grant,
      read: Object.freeze(read) as string[],
    });
    if (Object.isFrozen(grant)) {
      this.#merged.set(grant, { path, grant: merged });
    }
    return merged;
  }
}

/** A definition that declares permissions: a tool or a toolkit version. */
interface PermissionOwner {
  /** Absolute path of its module file. */
  readonly path: string;
  /** The export holding it. */
  readonly export: string;
  /** Its module version. */
  readonly hash: string;
  /** What it declares, or `"dynamic"` (a function of the configuration). */
  readonly permissions: Permissions | "dynamic";
}

// Checked grants. A grant follows from the tool's and its toolkit's
// permissions and the policy (fixed per caller); dynamic permissions add the
// configuration. Static ones are kept per entry object (a new version is a
// new object, so a reload never sees a stale grant), dynamic ones per
// (versions, configuration). Path resolution and the policy check are then
// off the per-call path.
/**
 * Checked grants of tools (their own permissions plus their toolkit's),
 * cached by module version and, for dynamic permissions, configuration.
 *
 * @example A static grant is checked once per entry
 * ```ts
 * import { GrantCache } from "./grants.ts";
 * import assert from "node:assert/strict";
 * const grants = new GrantCache({
 *   resolvePermissions: () => Promise.reject(new Error("not dynamic")),
 * }, {});
 * const tool = { path: "/s/t/mod.ts", export: "default", hash: "h", permissions: {} };
 * const check = grants.of(tool, undefined, {});
 * assert.ok(!(check instanceof Promise) && check.ok);
 * assert.equal(grants.of(tool, undefined, {}), check);
 * ```
 */
export class GrantCache {
  /** Dynamic grants (and dynamic permissions) kept before the oldest goes. */
  static readonly MAX_ENTRIES = 1024;
  #sandbox: Pick<Sandbox, "resolvePermissions">;
  #policy: Policy;
  #static = new WeakMap<
    PermissionOwner,
    { kit: PermissionOwner | undefined; check: GrantCheck }
  >();
  // Checked grants by (tool, toolkit, configuration).
  #dynamic = new Map<string, Promise<GrantCheck>>();
  // What a permissions function answered, by (module version,
  // configuration): pure by contract, so it is evaluated in a sandbox once,
  // and a toolkit's once for all its tools.
  #declared = new Map<string, Promise<Permissions>>();

  /**
   * @param sandbox evaluates dynamic permissions functions
   * @param policy the host policy grants are checked against
   */
  constructor(sandbox: Pick<Sandbox, "resolvePermissions">, policy: Policy) {
    this.#sandbox = sandbox;
    this.#policy = policy;
  }

  /**
   * The checked grant of a tool; a promise only when a sandbox must compute
   * it (dynamic permissions, first time for this configuration).
   *
   * @param entry the tool (its object identity is its version)
   * @param kit its toolkit, if any
   * @param config the toolkit configuration of the call
   * @returns the grant, or which permission the policy refused
   */
  of(
    entry: PermissionOwner,
    kit: PermissionOwner | undefined,
    config: Record<string, unknown>,
  ): GrantCheck | Promise<GrantCheck> {
    const hit = this.#static.get(entry);
    if (hit && hit.kit === kit) return hit.check;
    const check = staticGrant(entry, kit, this.#policy);
    if (check) {
      this.#static.set(entry, { kit, check });
      return check;
    }
    const key = JSON.stringify([
      entry.path,
      entry.export,
      entry.hash,
      kit?.path ?? null,
      kit?.export ?? null,
      kit?.hash ?? null,
      config,
    ]);
    return remembered(this.#dynamic, key, () =>
      Promise.all([
        this.#declaredBy(entry, config),
        kit ? this.#declaredBy(kit, config) : {},
      ]).then(([a, b]) => checkedGrant(entry, a, b, this.#policy)));
  }

  // What an owner declares for a configuration, its paths resolved.
  #declaredBy(
    owner: PermissionOwner,
    config: Record<string, unknown>,
  ): Promise<Permissions> {
    if (owner.permissions !== "dynamic") {
      return Promise.resolve(declaredBy(owner, owner.permissions));
    }
    const key = JSON.stringify([owner.path, owner.export, owner.hash, config]);
    return remembered(
      this.#declared,
      key,
      () =>
        this.#sandbox.resolvePermissions(owner.path, owner.export, config)
          .then((declared) => declaredBy(owner, declared)),
    );
  }
}

// The promise kept under `key`, else a new one from `make`, kept (the
// oldest going past GrantCache.MAX_ENTRIES). A failure is not kept: the
// next call tries again.
function remembered<T>(
  cache: Map<string, Promise<T>>,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let found = cache.get(key);
  if (!found) {
    if (cache.size >= GrantCache.MAX_ENTRIES) {
      cache.delete(cache.keys().next().value!);
    }
    found = make();
    cache.set(key, found);
    found.catch(() => cache.delete(key));
  }
  return found;
}

/**
 * The checked grant of a tool whose permissions, and its toolkit's, are
 * declared in its module; null when either comes from configuration, which
 * only a call's configuration settles. This is the check a call makes
 * ({@link GrantCache.of}), without the cache.
 *
 * @param entry the tool
 * @param kit its toolkit, if any
 * @param policy the host policy grants are checked against
 * @returns the grant, which permission the policy refused, or null
 * @example A tool asking for a command the policy does not allow
 * ```ts
 * import { staticGrant } from "./grants.ts";
 * import assert from "node:assert/strict";
 * const tool = { path: "/s/sh.ts", export: "default", hash: "h",
 *   permissions: { run: ["bash"] } };
 * assert.equal(staticGrant(tool, undefined, {})?.ok, false);
 * const dynamic = { ...tool, permissions: "dynamic" as const };
 * assert.equal(staticGrant(dynamic, undefined, {}), null);
 * ```
 */
export function staticGrant(
  entry: PermissionOwner,
  kit: PermissionOwner | undefined,
  policy: Policy,
): GrantCheck | null {
  const own = entry.permissions;
  const kits = kit?.permissions ?? {};
  if (own === "dynamic" || kits === "dynamic") return null;
  return checkedGrant(
    entry,
    declaredBy(entry, own),
    kit ? declaredBy(kit, kits) : {},
    policy,
  );
}

// A tool gets its own permissions plus its toolkit's (a toolkit often
// grants what its configuration names, e.g. a root folder).
function checkedGrant(
  entry: PermissionOwner,
  own: Permissions,
  kit: Permissions,
  policy: Policy,
): GrantCheck {
  const check = checkGrant(mergePermissions(own, kit), {
    modulePath: entry.path,
    policy,
  });
  // Shared by every call of this version: nobody may edit it.
  if (check.ok) {
    for (const list of Object.values(check.grant)) Object.freeze(list);
    Object.freeze(check.grant);
  }
  return Object.freeze(check);
}

// What an owner declares (statically or from its permissions function),
// its relative paths resolved against the folder of its module.
function declaredBy(
  owner: PermissionOwner,
  permissions: Permissions,
): Permissions {
  return resolvePermissionPaths(permissions, dirname(owner.path));
}
