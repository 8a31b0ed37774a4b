/**
 * Folders denied to sandboxes as a whole, except for the folders inside
 * them that are served (the project root, whose `skills/` is served but
 * whose source, config and anything added later is not). Nobody keeps a
 * list of what is inside: a new folder in the tree is denied because it is
 * not an exception.
 *
 * @module
 */

import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { within } from "../confine/mount_rule.ts";

/** A folder denied with everything in it, except some folders inside. */
export interface DeniedTree {
  /** The denied folder (absolute). */
  root: string;
  /** Folders inside `root` that stay grantable (absolute). */
  except: string[];
}

/**
 * Whether a path may not be granted: it is in a denied tree outside its
 * exceptions, or it holds a denied tree (a grant of a parent would expose
 * all of it).
 *
 * @param path an absolute path a grant names
 * @param trees the denied trees
 * @returns true when the path must be refused
 * @example A new folder in the project root is refused, its skills are not
 * ```ts
 * import { deniedByTree } from "./denied_trees.ts";
 * import assert from "node:assert/strict";
 * const trees = [{ root: "/p", except: ["/p/skills"] }];
 * assert.equal(deniedByTree("/p/new_folder", trees), true);
 * assert.equal(deniedByTree("/p/skills/echo", trees), false);
 * assert.equal(deniedByTree("/", trees), true);
 * assert.equal(deniedByTree("/elsewhere", trees), false);
 * ```
 */
export function deniedByTree(path: string, trees: DeniedTree[]): boolean {
  for (const tree of trees) {
    if (within(tree.root, path)) return true;
    if (!within(path, tree.root)) continue;
    if (!usableExceptions(tree).some((e) => within(path, e))) return true;
  }
  return false;
}

/**
 * The paths to pass as `--deny-read`/`--deny-write` for the trees: every
 * entry of a tree (as it is now) that neither is an exception nor leads to
 * one, recursively. Deno's deny flags win over allow flags, so a tree's root
 * cannot be denied whole while an exception inside it is allowed. The
 * grant check ({@link deniedByTree}) is what keeps entries added later out.
 *
 * @param trees the denied trees
 * @returns absolute paths to deny
 * @example A denied folder except one skill
 * ```ts
 * import { deniedTreePaths } from "./denied_trees.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/skills/echo`, { recursive: true });
 * await Deno.mkdir(`${root}/skills/other`);
 * await Deno.writeTextFile(`${root}/deno.json`, "{}");
 * const paths = deniedTreePaths([{ root, except: [`${root}/skills/echo`] }]);
 * assert.deepEqual(paths.sort(), [`${root}/deno.json`, `${root}/skills/other`]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export function deniedTreePaths(trees: DeniedTree[]): string[] {
  const out: string[] = [];
  for (const tree of trees) {
    const except = usableExceptions(tree);
    if (except.length === 0) out.push(tree.root);
    else denyAround(tree.root, except, out);
  }
  return out;
}

// Exceptions that are inside the root and not the root itself: serving the
// root (or a parent) must not un-deny the host's own files.
function usableExceptions(tree: DeniedTree): string[] {
  const root = resolve(tree.root);
  return tree.except.map((e) => resolve(e)).filter((e) =>
    e !== root && within(e, root)
  );
}

function denyAround(dir: string, except: string[], out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    out.push(dir);
    return;
  }
  for (const name of names) {
    // A comma would split the flag; the grant check still refuses it.
    if (name.includes(",")) continue;
    const path = join(dir, name);
    if (except.includes(path)) continue;
    if (except.some((e) => within(e, path))) denyAround(path, except, out);
    else out.push(path);
  }
}
