/**
 * What a module may always read: its own folder, or, for a file directly in
 * a shared folder (a skills root holding many files), the file and its
 * local imports. Adds that to a call's grant, once per grant.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import type { Permissions } from "../../protocol/permissions.ts";
import { moduleGraph } from "../discovery/module_graph.ts";
import { ownReadPaths, type Policy } from "./permissions.ts";

/**
 * Own read paths of modules, and grants with them added.
 *
 * @example A module in its own folder reads that folder
 * ```ts
 * import { OwnReads } from "./own_reads.ts";
 * import assert from "node:assert/strict";
 * const own = new OwnReads({});
 * const grant = Object.freeze({ net: ["x.io"] });
 * const merged = own.withGrant("/s/t/mod.ts", grant);
 * assert.deepEqual(merged, { net: ["x.io"], read: ["/s/t"] });
 * assert.equal(own.withGrant("/s/t/mod.ts", grant), merged);
 * ```
 */
export class OwnReads {
  readonly #policy: Policy;
  readonly #shared: Set<string>;
  // Local import files of modules directly in a shared folder.
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
    this.#files.set(path, files);
  }

  /** The module's own read grant. */
  grant(path: string): Permissions | Promise<Permissions> {
    const files = this.#files.get(path);
    if (files || !this.#shared.has(dirname(path))) {
      return {
        read: ownReadPaths(path, { policy: this.#policy, localFiles: files }),
      };
    }
    return moduleGraph(path).then((graph) => {
      this.#files.set(path, graph.files);
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

// Normalized absolute paths of the modules called, so a warm call does not
// normalize its path again (bounded: cleared when full). Relative paths
// depend on the working folder: resolved every time.
const absolutePaths = new Map<string, string>();

/**
 * A module's path made absolute and normalized, remembered for absolute
 * paths so a warm call does not normalize its path again.
 *
 * @param path a module path
 * @returns the absolute normalized path
 * @example A path normalized
 * ```ts
 * import { absolute } from "./own_reads.ts";
 * import assert from "node:assert/strict";
 * assert.equal(absolute("/s/t/../mod.ts"), "/s/mod.ts");
 * ```
 */
export function absolute(path: string): string {
  if (!path.startsWith("/")) return resolve(path);
  let abs = absolutePaths.get(path);
  if (abs === undefined) {
    if (absolutePaths.size >= 4096) absolutePaths.clear();
    abs = resolve(path);
    absolutePaths.set(path, abs);
  }
  return abs;
}
