/**
 * Discovery results cached by module version. A module's description only
 * changes when the module or one of its local imports changes, so the host
 * keeps the last description per module path on disk, keyed by the content
 * hash, and a restart with unchanged files reads JSON instead of starting
 * sandboxes.
 *
 * Cache layout: `<cacheDir>/describe/<sha256 of the path>.json`, holding one
 * {@link DescribedModule}.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join } from "node:path";
import type { DescribedModule } from "../sandbox/types.ts";

/** Options for {@link DiscoveryCache}. */
export interface DiscoveryCacheOptions {
  /** Where descriptions are kept; `null` keeps nothing. */
  dir: string | null;
}

// Synchronous: a cached load of 1,000 modules would otherwise pay 1,000
// thread-pool round trips for digests alone.
function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * A disk cache of module descriptions.
 *
 * @example Store and read back
 * ```ts
 * import { DiscoveryCache } from "./cache.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const cache = new DiscoveryCache({ dir });
 * const described = { path: "/s/a.ts", hash: "h1", definitions: [], error: null };
 * await cache.put(described);
 * assert.deepEqual(await cache.get("/s/a.ts", "h1"), described);
 * assert.equal(await cache.get("/s/a.ts", "h2"), null);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class DiscoveryCache {
  #dir: string | null;
  // The folder is made once: a cold load of 1,000 modules would otherwise
  // pay 1,000 recursive mkdirs (each a thread-pool job and a path walk).
  #made: Promise<void> | null = null;

  /** @param options where the cache lives */
  constructor(options: DiscoveryCacheOptions) {
    this.#dir = options.dir === null ? null : join(options.dir, "describe");
  }

  #file(path: string): string | null {
    return this.#dir === null ? null : join(this.#dir, `${sha256(path)}.json`);
  }

  /**
   * Reads the cached description of a module version.
   *
   * @param path absolute module path
   * @param hash the module's current content hash
   * @returns the description, or null when absent, stale or unreadable
   */
  async get(path: string, hash: string): Promise<DescribedModule | null> {
    const file = this.#file(path);
    if (file === null) return null;
    try {
      const stored = JSON.parse(await Deno.readTextFile(file));
      return stored?.path === path && stored?.hash === hash ? stored : null;
    } catch {
      return null;
    }
  }

  /**
   * Stores a description (atomically: write then rename).
   *
   * @param described what describing the module gave
   */
  async put(described: DescribedModule): Promise<void> {
    const file = this.#file(described.path);
    if (file === null || this.#dir === null) return;
    const dir = this.#dir;
    const made = this.#made ??= Deno.mkdir(dir, { recursive: true });
    await made;
    const tmp = `${file}.${crypto.randomUUID()}.tmp`;
    const text = JSON.stringify(described);
    try {
      await Deno.writeTextFile(tmp, text);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      // The folder went away since: make it again.
      if (this.#made === made) this.#made = null;
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(tmp, text);
    }
    await Deno.rename(tmp, file);
  }
}
