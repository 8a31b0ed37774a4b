/**
 * The workers of one sandbox process: spare workers kept started, warm
 * workers kept per key (module version, session, configuration) with the
 * least recently used dropped first, and primed workers (a fresh worker
 * with a module already loaded, for per-call isolation). Knows nothing of
 * the host pipe: what workers post goes to `onMessage`, and the operations
 * of a worker that dies go to `onCrash`.
 *
 * @module
 */

import type {
  FromWorkerMessage,
  WorkerPermissions,
} from "../../protocol/sandbox/messages.ts";
import { decodeWorkerMessage } from "../../protocol/sandbox/messages.ts";

/** One worker and the operations it runs. */
export interface Slot {
  worker: Worker;
  key: string;
  ready: Promise<void>;
  loaded: Promise<void> | null;
  /** Set once `loaded` has resolved: operations skip the await. */
  isLoaded: boolean;
  ops: Set<string>;
  /** Discarded once its operations end (per-call, aborted, or evicted). */
  retiring: boolean;
  dead: boolean;
  onReady: () => void;
  onLoad: ((error: string | null) => void) | null;
  /** Pre-load a replacement with this module once the operation is answered. */
  primeAfter: { primeKey: string; path: string } | null;
}

/** Options of {@link WorkerSlots}. */
export interface WorkerSlotsOptions {
  /** The `blob:` URL of the worker bootstrap. */
  bootstrapUrl: string;
  /** Every worker's `deno.permissions`. */
  permissions: WorkerPermissions;
  /** Spare workers kept started. */
  spares: number;
  /** Warm (and primed) workers kept before the least recently used goes. */
  maxWarm: number;
  /** A decoded message from a live worker. */
  onMessage(slot: Slot, message: FromWorkerMessage): void;
  /** An operation whose worker died. */
  onCrash(id: string, reason: string): void;
}

/**
 * The worker slots of a sandbox process.
 *
 * @example A warm slot is found again by its key
 * ```ts
 * import { WorkerSlots } from "./workers.ts";
 * import assert from "node:assert/strict";
 * const source = 'postMessage({ t: "ready" });';
 * const slots = new WorkerSlots({
 *   bootstrapUrl: URL.createObjectURL(new Blob([source], { type: "text/javascript" })),
 *   permissions: { read: false, write: false, net: false, env: false,
 *     run: false, sys: false, ffi: false, import: false },
 *   spares: 1, maxWarm: 4, onMessage(slot, m) { if (m.t === "ready") slot.onReady(); },
 *   onCrash() {},
 * });
 * await slots.sparesReady();
 * const slot = slots.take("module@v1");
 * assert.equal(slots.take("module@v1"), slot);
 * slots.kill(slot, "done");
 * ```
 */
export class WorkerSlots {
  readonly #options: WorkerSlotsOptions;
  readonly #spares: Slot[] = [];
  readonly #warm = new Map<string, Slot>();
  // Fresh workers with a module already loaded, per module version, for
  // per-call isolation (one each; least recently used dropped first).
  readonly #primed = new Map<string, Slot>();
  /** The slot running each operation. */
  readonly byOp: Map<string, Slot> = new Map();

  /** @param options bootstrap, permissions, limits and callbacks */
  constructor(options: WorkerSlotsOptions) {
    this.#options = options;
  }

  /** Resolves once every spare worker is up (starting them first). */
  sparesReady(): Promise<void> {
    this.refillSpares();
    return Promise.all(this.#spares.map((s) => s.ready)).then(() => {});
  }

  /** Starts spare workers up to the configured count. */
  refillSpares(): void {
    while (this.#spares.length < this.#options.spares) {
      this.#spares.push(this.#spawn(""));
    }
  }

  /**
   * The slot for an operation: the warm worker of `key`, a primed worker
   * for `primeKey`, or a spare (a fresh one when `key` is "").
   */
  take(key: string, primeKey?: string, path?: string): Slot {
    if (key === "" && primeKey !== undefined && path !== undefined) {
      const hit = this.#primed.get(primeKey);
      this.#primed.delete(primeKey);
      if (hit && !hit.dead) {
        // Starting a worker blocks this thread for milliseconds: do it after
        // the answer is out, not on the call's path.
        hit.primeAfter = { primeKey, path };
        return hit;
      }
      queueMicrotask(() => this.prime(primeKey, path));
    }
    if (key !== "") {
      const hit = this.#warm.get(key);
      if (hit && !hit.dead && !hit.retiring) {
        this.#warm.delete(key);
        this.#warm.set(key, hit);
        return hit;
      }
    }
    const slot = this.#spares.shift() ?? this.#spawn("");
    queueMicrotask(() => this.refillSpares());
    slot.key = key;
    if (key === "") slot.retiring = true;
    else {
      this.#warm.set(key, slot);
      this.#evictWarm();
    }
    return slot;
  }

  /** Loads a module into a slot (once). */
  load(slot: Slot, path: string): Promise<void> {
    slot.loaded ??= slot.ready.then(() =>
      new Promise<void>((resolve, reject) => {
        slot.onLoad = (error) => {
          slot.onLoad = null;
          if (error === null) {
            slot.isLoaded = true;
            resolve();
          } else reject(new Error(error));
        };
        slot.worker.postMessage({ t: "load", path });
      })
    );
    return slot.loaded;
  }

  /** Starts a fresh worker with a module loaded, for the next per-call op. */
  prime(primeKey: string, path: string): void {
    if (this.#primed.has(primeKey)) return;
    const slot = this.#spawn("");
    slot.retiring = true;
    this.load(slot, path).catch(() => {});
    this.#primed.set(primeKey, slot);
    for (const [key, old] of this.#primed) {
      if (this.#primed.size <= this.#options.maxWarm) break;
      this.#primed.delete(key);
      this.#terminate(old);
    }
  }

  /** Stops keeping a slot warm: it goes once its operations end. */
  retire(slot: Slot): void {
    slot.retiring = true;
    if (this.#warm.get(slot.key) === slot) this.#warm.delete(slot.key);
  }

  /** An operation of a slot ended; a retiring slot with none left goes. */
  release(slot: Slot, id: string): void {
    slot.ops.delete(id);
    this.byOp.delete(id);
    if (slot.retiring && slot.ops.size === 0) this.#terminate(slot);
  }

  /** Kills a slot's worker and fails its operations with `reason`. */
  kill(slot: Slot, reason: string): void {
    if (slot.dead) return;
    this.#terminate(slot);
    if (this.#warm.get(slot.key) === slot) this.#warm.delete(slot.key);
    slot.onLoad?.(reason);
    for (const id of slot.ops) {
      this.byOp.delete(id);
      this.#options.onCrash(id, reason);
    }
    slot.ops.clear();
  }

  #terminate(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    slot.worker.terminate();
  }

  #evictWarm(): void {
    for (const [key, slot] of this.#warm) {
      if (this.#warm.size <= this.#options.maxWarm) break;
      if (slot.ops.size > 0) continue;
      this.#warm.delete(key);
      this.#terminate(slot);
    }
  }

  #spawn(key: string): Slot {
    const worker = new Worker(this.#options.bootstrapUrl, {
      type: "module",
      deno: { permissions: this.#options.permissions },
    } as WorkerOptions);
    let onReady = () => {};
    const ready = new Promise<void>((resolve) => onReady = resolve);
    const slot: Slot = {
      worker,
      key,
      ready,
      loaded: null,
      isLoaded: false,
      ops: new Set(),
      retiring: false,
      dead: false,
      onReady,
      onLoad: null,
      primeAfter: null,
    };
    const onMessage = this.#options.onMessage;
    worker.onmessage = (e: MessageEvent<unknown>) => {
      if (slot.dead) return;
      const message = decodeWorkerMessage(e.data);
      if (message !== null) onMessage(slot, message);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      this.kill(slot, `Sandbox worker failed: ${e.message}`);
    };
    return slot;
  }
}
