/**
 * Reading a module's definitions: hash its local import graph, check its
 * own read grant against the policy, then answer from the discovery cache
 * when the version is known, otherwise describe it in a discovery batch.
 *
 * @module
 */

import { resolve } from "node:path";
import type { DiscoveryCache } from "./cache.ts";
import type { DiscoveryQueue } from "./queue.ts";
import { type ModuleGraph, moduleGraph } from "./module_graph.ts";
import { describeStatically } from "./static.ts";
import { Semaphore } from "../slots.ts";
import { checkGrant, ownReadPaths, type Policy } from "../sandbox/grants.ts";
import type { DescribedDefinition, DescribedModule } from "../sandbox/types.ts";

/** What {@link createDescriber} needs. */
export interface DescriberOptions {
  policy: Policy;
  cache: DiscoveryCache;
  queue: Pick<DiscoveryQueue, "describe" | "maxResultBytes">;
  /** Told each module's local files (the pool grants them to calls). */
  onGraph?: (path: string, files: string[]) => void;
}

// Modules read and hashed at once. Each file read is a thread-pool job: a
// thousand at once would start hundreds of threads.
const IO_CONCURRENCY = 16;

/**
 * Makes the `describe` of a {@link Sandbox}.
 *
 * @param options the policy, cache and batch queue
 * @returns a function describing one module (never throws)
 * @example Describe through a fake queue
 * ```ts
 * import { createDescriber } from "./describer.ts";
 * import { DiscoveryCache } from "./cache.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.ts`, "export default {};");
 * const describe = createDescriber({
 *   policy: {},
 *   cache: new DiscoveryCache({ dir: null }),
 *   queue: {
 *     describe: () => Promise.resolve({ ok: true, value: [] }),
 *     maxResultBytes: 1 << 20,
 *   },
 * });
 * const described = await describe(`${dir}/a.ts`);
 * assert.equal(described.error, null);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function createDescriber(
  options: DescriberOptions,
): (path: string) => Promise<DescribedModule> {
  const { policy, cache, queue } = options;
  const io = new Semaphore(IO_CONCURRENCY);
  return async (path) => {
    const abs = resolve(path);
    let graph: ModuleGraph;
    const release = await io.acquire();
    try {
      graph = await moduleGraph(abs);
      options.onGraph?.(abs, graph.files);
    } catch (err) {
      release();
      return {
        path: abs,
        hash: "",
        definitions: [],
        error: `Cannot read module: ${(err as Error).message}`,
      };
    }
    const { hash, files, sources } = graph;
    // Checked before the cache answers: a policy narrowed since the
    // description was kept refuses the module like a new one.
    const own = { read: ownReadPaths(abs, { policy, localFiles: files }) };
    const check = checkGrant(own, { modulePath: abs, policy });
    if (!check.ok) {
      release();
      return { path: abs, hash, definitions: [], error: check.reason, files };
    }
    const hit = await cache.get(abs, hash).finally(release);
    if (hit) return { ...hit, files };
    // A module whose code only declares literals needs no Worker: its
    // definitions are read from its syntax (nothing of it runs).
    const literal = await describeStatically(abs, sources.get(abs) ?? "", {
      maxResultBytes: queue.maxResultBytes,
      imports: sources,
    });
    const answer = literal
      ? { ok: true as const, value: literal }
      : await queue.describe({ path: abs, read: check.grant.read ?? [] });
    const described: DescribedModule = answer.ok
      ? {
        path: abs,
        hash,
        definitions: answer.value as DescribedDefinition[],
        error: null,
      }
      : { path: abs, hash, definitions: [], error: answer.message };
    // Hangs and crashes may be transient; only settled answers are kept.
    if (answer.ok || answer.code === "tool_error") {
      await io.run(() => cache.put(described).catch(() => {}));
    }
    return { ...described, files };
  };
}
