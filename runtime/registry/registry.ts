/**
 * The registry: every tool, toolkit and skill in the skills folders, read
 * through the sandbox (never imported into the host), kept current by
 * watching the folders.
 *
 * Load progress for the terminal ({@link progressLogger}): a cold load of
 * many modules takes seconds, so once one has run for a while the host says
 * how far it is, a few times a second at most, then how it ended.
 *
 * @module
 */

import { basename, dirname, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { DescribedModule, Sandbox } from "../sandbox/types.ts";
import { buildSnapshot, type LoadedModule } from "./snapshot.ts";
import { isDefinitionFile, type ScannedFile, scanSkillDirs } from "./scan.ts";
import type { SkillDir } from "./scan.ts";
import type {
  NameChanges,
  RegistryChange,
  RegistryRoot,
  RegistrySnapshot,
} from "./types.ts";

/** Options of {@link loadRegistry}. */
export interface RegistryOptions {
  /** Reads modules; only `describe` is used. */
  sandbox: Pick<Sandbox, "describe">;
  /** Skills folders: a path (origin `file`) or a path with its origin. */
  dirs: readonly (string | SkillDir)[];
  /** Watch the folders and reload on changes. @default false */
  watch?: boolean;
  /**
   * Told how far a reload is, after each module ({@link progressLogger}
   * turns it into terminal lines).
   */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Modules that come from elsewhere than the folders (imported MCP
   * servers), read on every reload. @default none
   */
  extraModules?: () => LoadedModule[];
}

/** A live registry. */
export interface Registry {
  /** The current snapshot; hold it (or an entry) to keep a version. */
  readonly snapshot: RegistrySnapshot;
  /**
   * Rescans now, describing only files changed since they were last read.
   *
   * @returns the change, or null when nothing changed
   */
  reload(): Promise<RegistryChange | null>;
  /**
   * Subscribes to changes.
   *
   * @returns a function that unsubscribes
   */
  onChange(listener: (change: RegistryChange) => void): () => void;
  /** Stops watching. */
  close(): Promise<void>;
}

// How long to wait for a burst of file events to end before a reload.
const DEBOUNCE_MS = 50;

interface CacheSlot {
  mtimeMs: number;
  size: number;
  module: DescribedModule;
}

/**
 * Scans the skills folders, describes every module through the sandbox, and
 * (with `watch`) keeps the snapshot current: a change on disk is reflected
 * after 50 ms plus the time to describe the changed files.
 *
 * @param options the sandbox, folders and watch settings
 * @returns the loaded registry
 * @example Load a folder with a fake sandbox
 * ```ts
 * import { loadRegistry } from "./registry.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/echo.ts`, "");
 * const registry = await loadRegistry({
 *   dirs: [dir],
 *   sandbox: {
 *     describe: (path) => Promise.resolve({
 *       path, hash: "h1", error: null,
 *       definitions: [{ export: "default", kind: "tool", name: "echo",
 *         fields: { description: "Echo" }, permissions: {}, runnable: true }],
 *     }),
 *   },
 * });
 * assert.equal(registry.snapshot.tools.get("echo")?.path, `${dir}/echo.ts`);
 * await registry.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadRegistry(
  options: RegistryOptions,
): Promise<Registry> {
  const registry = new LiveRegistry(options);
  await registry.reload();
  if (options.watch) registry.watch();
  return registry;
}

class LiveRegistry implements Registry {
  #options: RegistryOptions;
  /** The skills folders, in the order names are granted. */
  #dirs: RegistryRoot[];
  #snapshot: RegistrySnapshot = buildSnapshot([]);
  #cache = new Map<string, CacheSlot>();
  #listeners = new Set<(change: RegistryChange) => void>();
  #watcher: Deno.FsWatcher | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<RegistryChange | null> | null = null;
  #again = false;
  #touchedSkillMd = false;
  #closed = false;

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.#dirs = options.dirs.map((d) =>
      typeof d === "string"
        ? { path: resolve(d), origin: "file" }
        : { path: resolve(d.path), origin: d.origin ?? "file" }
    );
  }

  get snapshot(): RegistrySnapshot {
    return this.#snapshot;
  }

  onChange(listener: (change: RegistryChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  reload(): Promise<RegistryChange | null> {
    // One reload at a time; a request during one runs once more after it,
    // so the last event on disk is always reflected.
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      let last: RegistryChange | null = null;
      do {
        this.#again = false;
        last = (await this.#reloadOnce()) ?? last;
      } while (this.#again && !this.#closed);
      return last;
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  watch(): void {
    const existing = this.#dirs.map((d) => d.path).filter((p) => {
      try {
        return Deno.statSync(p).isDirectory;
      } catch {
        return false;
      }
    });
    if (existing.length === 0) return;
    this.#watcher = Deno.watchFs(existing, { recursive: true });
    const watcher = this.#watcher;
    (async () => {
      try {
        for await (const event of watcher) {
          if (event.kind === "access") continue;
          for (const path of event.paths) this.#invalidate(path);
          this.#schedule();
        }
      } catch {
        // The watcher ends with close(); nothing to report.
      }
    })();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#watcher?.close();
    this.#watcher = null;
    await this.#running;
  }

  #schedule(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.reload().catch(() => {
        // reloadOnce reports per-file problems itself; a scan failure just
        // leaves the previous snapshot in place until the next event.
      });
    }, DEBOUNCE_MS);
  }

  #invalidate(path: string): void {
    const name = basename(path);
    if (/^(SKILL|skill)\.md$/.test(name)) this.#touchedSkillMd = true;
    if (isDefinitionFile(name)) {
      this.#cache.delete(path);
      return;
    }
    // A helper (`_x.ts`), data file or folder changed: modules beside it and
    // below may import it, and so may a module elsewhere whose local imports
    // name it (a helper in a subfolder), so read them again (the sandbox
    // re-hashes).
    if (!/\.(ts|js|mts|mjs|json|jsonc)$/.test(name)) return;
    const dir = dirname(path);
    for (const [key, slot] of this.#cache) {
      if (key.startsWith(dir + "/") || slot.module.files?.includes(path)) {
        this.#cache.delete(key);
      }
    }
  }

  async #reloadOnce(): Promise<RegistryChange | null> {
    const scan = await scanSkillDirs(this.#dirs);
    const modules = [
      ...await this.#describeAll(scan.files),
      ...(this.#options.extraModules?.() ?? []),
    ];
    const previous = this.#snapshot;
    const next = buildSnapshot(modules, {
      generation: previous.generation + 1,
      agentSkills: scan.agentSkills,
      errors: scan.errors,
      // Who wins a name: builtin first, then the folders in config order,
      // then (within one folder) whoever held it before.
      roots: this.#dirs,
      previous,
    });
    const agentSkillsChanged = this.#touchedSkillMd ||
      previous.agentSkills.join("\n") !== next.agentSkills.join("\n");
    this.#touchedSkillMd = false;
    const change: RegistryChange = {
      snapshot: next,
      tools: diff(previous.tools, next.tools),
      toolkits: diff(previous.toolkits, next.toolkits),
      skills: diff(previous.skills, next.skills),
      agentSkillsChanged,
      errorsChanged: !isDeepStrictEqual(
        [previous.errors, previous.blocked],
        [next.errors, next.blocked],
      ),
    };
    if (!change.errorsChanged && !changesWhatIsServed(change)) return null;
    this.#snapshot = next;
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // One failing listener must not stop the others or the reload.
      }
    }
    return change;
  }

  async #describeAll(files: ScannedFile[]): Promise<LoadedModule[]> {
    const live = new Set(files.map((f) => f.path));
    for (const key of this.#cache.keys()) {
      if (!live.has(key)) this.#cache.delete(key);
    }
    let done = 0;
    const started = performance.now();
    const onProgress = this.#options.onProgress;
    // Every module is handed over at once: the sandbox batches them into
    // discovery processes and bounds its own file reads.
    return await Promise.all(files.map(async (file) => {
      const module = await this.#describe(file);
      done++;
      try {
        onProgress?.({
          done,
          total: files.length,
          elapsedMs: performance.now() - started,
        });
      } catch {
        // A failing progress listener must not stop the load.
      }
      return { module, origin: file.origin, root: file.root };
    }));
  }

  async #describe(file: ScannedFile): Promise<DescribedModule> {
    const slot = this.#cache.get(file.path);
    if (slot && slot.mtimeMs === file.mtimeMs && slot.size === file.size) {
      return slot.module;
    }
    let module: DescribedModule;
    try {
      module = await this.#options.sandbox.describe(file.path);
    } catch (error) {
      // Not cached: a sandbox failure is retried on the next reload.
      return {
        path: file.path,
        hash: "",
        definitions: [],
        error: error instanceof Error ? error.message : String(error),
      };
    }
    this.#cache.set(file.path, {
      mtimeMs: file.mtimeMs,
      size: file.size,
      module,
    });
    return module;
  }
}

function diff<T>(
  before: ReadonlyMap<string, T>,
  after: ReadonlyMap<string, T>,
): NameChanges {
  const was = new Set(before.keys());
  const now = new Set(after.keys());
  // Each list in the order of its map (a difference keeps its receiver's).
  return {
    added: [...now.difference(was)],
    changed: [...after.keys()].filter((name) =>
      was.has(name) &&
      JSON.stringify(before.get(name)) !== JSON.stringify(after.get(name))
    ),
    removed: [...was.difference(now)],
  };
}

/**
 * Whether a reload changed what is served: a tool, toolkit or skill added,
 * changed or removed, or the Agent Skills folders (their lists are read
 * from these).
 *
 * @param change the reload's change
 * @returns false when only the errors (or nothing) changed
 * @example Only the errors changed
 * ```ts
 * import { changesWhatIsServed } from "./registry.ts";
 * import { buildSnapshot } from "./snapshot.ts";
 * import assert from "node:assert/strict";
 * const none = { added: [], changed: [], removed: [] };
 * const change = { snapshot: buildSnapshot([]), tools: none, toolkits: none,
 *   skills: none, agentSkillsChanged: false, errorsChanged: true };
 * assert.equal(changesWhatIsServed(change), false);
 * assert.equal(changesWhatIsServed({ ...change, skills: { ...none, added: ["a"] } }), true);
 * ```
 */
export function changesWhatIsServed(change: RegistryChange): boolean {
  return change.agentSkillsChanged ||
    [change.tools, change.toolkits, change.skills].some((c) =>
      c.added.length + c.changed.length + c.removed.length > 0
    );
}

/** Where a registry load stands. */
export interface LoadProgress {
  /** Modules read so far (from cache or described). */
  done: number;
  /** Modules this load reads. */
  total: number;
  /** Milliseconds since this load started. */
  elapsedMs: number;
}

// A load is quiet for its first second, then says how far it is at most
// four times a second.
const QUIET_MS = 1000;
const INTERVAL_MS = 250;

/**
 * Turns load progress into log lines: nothing for a load that ends within
 * a second; otherwise `loading skills: 412/1000 modules` at most every
 * 250 ms, and a final `loaded skills: 1000 modules in 3.2 s`.
 *
 * @param log where lines go (the host's log: stderr)
 * @returns the `onProgress` callback of `loadRegistry`
 * @example A slow load
 * ```ts
 * import { progressLogger } from "./registry.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const onProgress = progressLogger((l) => lines.push(l));
 * onProgress({ done: 1, total: 3, elapsedMs: 500 });
 * onProgress({ done: 2, total: 3, elapsedMs: 1200 });
 * onProgress({ done: 3, total: 3, elapsedMs: 1300 });
 * assert.deepEqual(lines, [
 *   "loading skills: 2/3 modules",
 *   "loaded skills: 3 modules in 1.3 s",
 * ]);
 * ```
 */
export function progressLogger(
  log: (line: string) => void,
): (progress: LoadProgress) => void {
  let lastAt = -Infinity;
  let printed = false;
  return ({ done, total, elapsedMs }) => {
    if (done >= total) {
      if (printed || elapsedMs >= QUIET_MS) {
        log(
          `loaded skills: ${total} modules in ${
            (elapsedMs / 1000).toFixed(1)
          } s`,
        );
      }
      printed = false;
      lastAt = -Infinity;
      return;
    }
    if (elapsedMs < QUIET_MS || elapsedMs - lastAt < INTERVAL_MS) return;
    lastAt = elapsedMs;
    printed = true;
    log(`loading skills: ${done}/${total} modules`);
  };
}
