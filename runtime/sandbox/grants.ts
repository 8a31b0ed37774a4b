/**
 * Grants of tools, resolved once: a tool's permissions and its toolkit's
 * (static, or `"dynamic"`: computed in a sandbox from the configuration),
 * resolved against their own modules' folders, merged, checked against the
 * host policy, frozen and cached by module version (and configuration).
 * The rules themselves (resolving, merging, checking) are in
 * `permissions.ts`; the permission kinds in `protocol/permissions.ts`.
 *
 * @module
 */

import { dirname } from "node:path";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  checkGrant,
  type GrantCheck,
  mergePermissions,
  type Policy,
  resolvePermissionPaths,
} from "./permissions.ts";
import type { Sandbox } from "./types.ts";

/** A definition that declares permissions: a tool or a toolkit version. */
export interface PermissionOwner {
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
  /** Dynamic grants kept before the oldest goes. */
  static readonly MAX_ENTRIES = 1024;
  #permissions: PermissionCache;
  #policy: Policy;
  #static = new WeakMap<
    PermissionOwner,
    { kit: PermissionOwner | undefined; check: GrantCheck }
  >();
  #dynamic = new Map<string, Promise<GrantCheck>>();

  /**
   * @param sandbox evaluates dynamic permissions functions
   * @param policy the host policy grants are checked against
   */
  constructor(sandbox: Pick<Sandbox, "resolvePermissions">, policy: Policy) {
    this.#permissions = new PermissionCache(sandbox);
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
    const own = entry.permissions;
    const kits = kit?.permissions ?? {};
    if (own !== "dynamic" && kits !== "dynamic") {
      const hit = this.#static.get(entry);
      if (hit && hit.kit === kit) return hit.check;
      const check = this.#check(
        entry,
        staticPermissions(entry, own),
        kit ? staticPermissions(kit, kits) : {},
      );
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
    let found = this.#dynamic.get(key);
    if (!found) {
      if (this.#dynamic.size >= GrantCache.MAX_ENTRIES) {
        this.#dynamic.delete(this.#dynamic.keys().next().value!);
      }
      found = Promise.all([
        this.#permissions.of(entry, config),
        kit ? this.#permissions.of(kit, config) : {},
      ]).then(([a, b]) => this.#check(entry, a, b));
      this.#dynamic.set(key, found);
      // A failure is not cached: the next call tries again.
      found.catch(() => this.#dynamic.delete(key));
    }
    return found;
  }

  // A tool gets its own permissions plus its toolkit's (a toolkit often
  // grants what its configuration names, e.g. a root folder).
  #check(
    entry: PermissionOwner,
    own: Permissions,
    kit: Permissions,
  ): GrantCheck {
    const check = checkGrant(mergePermissions(own, kit), {
      modulePath: entry.path,
      policy: this.#policy,
    });
    // Shared by every call of this version: nobody may edit it.
    if (check.ok) {
      for (const list of Object.values(check.grant)) Object.freeze(list);
      Object.freeze(check.grant);
    }
    return Object.freeze(check);
  }
}

// Relative paths are relative to the folder of the declaring module.
function staticPermissions(
  owner: PermissionOwner,
  permissions: Permissions,
): Permissions {
  return resolvePermissionPaths(permissions, dirname(owner.path));
}

// Resolved permissions by module version and configuration. A permissions
// function is pure by contract, so a dynamic one is evaluated in a sandbox
// once per (version, config), not on every call: that is a sandbox round
// trip off the per-call path.
class PermissionCache {
  static readonly MAX_ENTRIES = 1024;
  #sandbox: Pick<Sandbox, "resolvePermissions">;
  #entries = new Map<string, Promise<Permissions>>();

  constructor(sandbox: Pick<Sandbox, "resolvePermissions">) {
    this.#sandbox = sandbox;
  }

  of(
    owner: PermissionOwner,
    config: Record<string, unknown>,
  ): Promise<Permissions> {
    if (owner.permissions !== "dynamic") {
      return Promise.resolve(staticPermissions(owner, owner.permissions));
    }
    const key = JSON.stringify([owner.path, owner.export, owner.hash, config]);
    let resolved = this.#entries.get(key);
    if (!resolved) {
      if (this.#entries.size >= PermissionCache.MAX_ENTRIES) {
        this.#entries.delete(this.#entries.keys().next().value!);
      }
      resolved = this.#sandbox.resolvePermissions(
        owner.path,
        owner.export,
        config,
      ).then((declared) =>
        resolvePermissionPaths(declared, dirname(owner.path))
      );
      this.#entries.set(key, resolved);
      // A failure is not cached: the next call tries again.
      resolved.catch(() => this.#entries.delete(key));
    }
    return resolved;
  }
}
