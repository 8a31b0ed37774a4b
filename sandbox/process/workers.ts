/**
 * The workers of one sandbox process: spare workers kept started (more
 * when new sessions arrive faster than they are refilled), warm workers
 * kept per key (module version, session, configuration) with the
 * least recently used dropped first, and primed workers (a fresh worker
 * with a module already loaded, for per-call isolation). Knows nothing of
 * the host pipe: what workers post goes to `onMessage`, and the operations
 * of a worker that dies go to `onCrash`. A worker and the operations it
 * runs is a {@link Slot}.
 *
 * @module
 */

import {
  decodeWorkerMessage,
  type FromWorkerMessage,
  type OpMessage,
  type WorkerPermissions,
} from "../../protocol/sandbox/pipe.ts";

// Most spare workers kept however bursty new sessions are.
const MAX_SPARES = 8;
// Why a worker whose message could not be copied back is ended.
const UNREADABLE =
  "A value the sandbox worker sent cannot be read back: it is nested too deep to copy";

/** Options of {@link WorkerSlots}. */
export interface WorkerSlotsOptions {
  /** The `blob:` URL of the worker bootstrap. */
  bootstrapUrl: string;
  /** Every worker's `deno.permissions`. */
  permissions: WorkerPermissions;
  /** Spare workers kept started. */
  spares: number;
  /**
   * Workers alive at most (warm, primed, spare and running: the memory
   * budget); past it the least recently used idle one goes, and with none
   * idle an operation needing a new worker waits for one to end.
   */
  maxWarm: number;
  /** A decoded message from a live worker. */
  onMessage(slot: Slot, message: FromWorkerMessage): void;
  /** An operation whose worker died. */
  onCrash(id: string, reason: string): void;
}

/**
 * What picks an operation's slot: its warm key ("" for a fresh worker),
 * the module version a fresh one may be primed with, the module, and the
 * session a warm worker is kept for.
 */
export type SlotRequest = Pick<
  OpMessage,
  "workerKey" | "primeKey" | "path" | "session"
>;

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
 * const op = { workerKey: "module@v1", path: "/m.ts", session: "s1" };
 * const slot = slots.take(op);
 * assert.equal(slots.take(op), slot);
 * assert.equal(slots.stats("s1").sessionWorkers, 1);
 * slots.kill(slot, "done");
 * ```
 */
export class WorkerSlots {
  readonly #options: WorkerSlotsOptions;
  readonly #spares: Slot[] = [];
  readonly #warm = new Map<string, Slot>();
  // Spares to keep: the configured count, raised (up to MAX_SPARES) each
  // time a call found none ready.
  #target = 0;
  #refilling = false;
  // Operations waiting for their turn to start a worker, oldest first.
  readonly #pending = new Map<string, () => void>();
  #pumping = false;
  // Workers alive (not terminated), whatever their role.
  #live = 0;
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
    this.#target = Math.max(this.#target, this.#options.spares);
    while (this.#spares.length < this.#options.spares) {
      this.#spares.push(this.#spawn());
    }
    return Promise.all(this.#spares.map((s) => s.ready)).then(() => {});
  }

  /**
   * Calls `use` with the slot for an operation ({@link take}) in its turn,
   * when {@link takeReady} found that a worker must be started for it.
   * Starting a worker blocks this thread for 10 to 50 ms, so starts for new
   * keys run one per macrotask, oldest first: answers of warm workers and
   * host frames go out between them, and no operation waits behind more
   * than one start that is not its own turn.
   *
   * @param op the operation (its id: see {@link cancelPending})
   */
  takeInTurn(
    op: SlotRequest & { id: string },
    use: (slot: Slot) => void,
  ): void {
    this.#pending.set(op.id, () => use(this.take(op)));
    this.#pump();
  }

  /**
   * The slot for an operation when no worker must be started for it
   * ({@link take}), else null (then wait with {@link takeInTurn}). The warm
   * call's path: no callback is made for it.
   */
  takeReady(op: SlotRequest): Slot | null {
    return this.#hasWorker(op.workerKey, op.primeKey) ? this.take(op) : null;
  }

  /** Drops an operation still waiting for its turn; true if it was. */
  cancelPending(id: string): boolean {
    return this.#pending.delete(id);
  }

  #hasWorker(key: string, primeKey: string | undefined): boolean {
    if (this.#spares.length > 0) return true;
    if (key !== "") {
      const hit = this.#warm.get(key);
      return hit !== undefined && !hit.dead && !hit.retiring;
    }
    const primed = primeKey === undefined
      ? undefined
      : this.#primed.get(primeKey);
    return primed !== undefined && !primed.dead;
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    const step = () => {
      const next = this.#pending.entries().next();
      // At the budget with every worker busy: wait for one to end (release
      // and terminate pump again).
      if (next.done || !this.#room()) {
        this.#pumping = false;
        if (next.done) this.#scheduleRefill();
        return;
      }
      this.#pending.delete(next.value[0]);
      next.value[1]();
      setTimeout(step, 0);
    };
    setTimeout(step, 0);
  }

  /**
   * The slot for an operation: the warm worker of its key, a primed worker
   * for its `primeKey`, or a spare (a fresh one when its key is "").
   */
  take(op: SlotRequest): Slot {
    const { workerKey: key, primeKey, path } = op;
    if (key === "" && primeKey !== undefined) {
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
    let slot = this.#spares.shift();
    if (!slot) {
      // A call waited for a worker start: keep more spares from now on.
      this.#target = Math.min(this.#target + 1, MAX_SPARES);
      slot = this.#spawn();
    }
    this.#scheduleRefill();
    slot.key = key;
    slot.session = op.session;
    if (key === "") slot.retiring = true;
    else {
      this.#warm.set(key, slot);
      this.#evictWarm(slot);
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
    // Within the budget only: a primed worker never evicts a warm one.
    if (this.#primed.has(primeKey) || this.#live >= this.#options.maxWarm) {
      return;
    }
    const slot = this.#spawn();
    slot.retiring = true;
    this.load(slot, path).catch(() => {});
    this.#primed.set(primeKey, slot);
    for (const [key, old] of this.#primed) {
      if (this.#primed.size <= this.#options.maxWarm) break;
      this.#primed.delete(key);
      this.#terminate(old);
    }
  }

  /**
   * A session ended: its warm workers go, idle ones at once, busy ones when
   * their operations end.
   */
  endSession(session: string): void {
    for (const slot of [...this.#warm.values()]) {
      if (slot.session !== session) continue;
      this.retire(slot);
      if (slot.ops.size === 0) this.#terminate(slot);
    }
  }

  /** Workers alive, and warm workers kept for `session`. */
  stats(session?: string): { workers: number; sessionWorkers: number } {
    let sessionWorkers = 0;
    if (session !== undefined) {
      for (const slot of this.#warm.values()) {
        if (!slot.dead && slot.session === session) sessionWorkers++;
      }
    }
    return { workers: this.#live, sessionWorkers };
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
    else if (slot.ops.size === 0 && this.#pending.size > 0) this.#pump();
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
    this.#live--;
    slot.worker.terminate();
    if (this.#pending.size > 0) this.#pump();
  }

  // Why calls used to wait for their whole timeout (30 s) under many
  // sessions, not merely slowly: the slot just taken for a call is in the
  // warm map before its operation is added to it (the caller adds it once
  // `take` returns), so it had no operations yet. With every older warm
  // worker busy (more sessions in flight than the warm bound), it was the
  // only idle one, and this loop terminated it. The call then waited on a
  // worker that would never answer — a terminated worker sends no message,
  // no error, no exit — until the host's deadline. The slot being taken is
  // never evicted now; the map may run over its bound while all are busy.
  #evictWarm(taken: Slot): void {
    while (this.#live > this.#options.maxWarm && this.#evictOne(taken));
  }

  // Room for one more worker: under the budget, or made so by ending the
  // least recently used idle worker (primed ones first: they are guesses).
  #room(): boolean {
    return this.#live < this.#options.maxWarm || this.#evictOne(null);
  }

  #evictOne(taken: Slot | null): boolean {
    for (const [key, slot] of this.#primed) {
      this.#primed.delete(key);
      this.#terminate(slot);
      return true;
    }
    for (const [key, slot] of this.#warm) {
      if (slot === taken || slot.ops.size > 0) continue;
      this.#warm.delete(key);
      this.#terminate(slot);
      return true;
    }
    return false;
  }

  // Spares are started one per macrotask, after the answers and stdin
  // reads already queued: starting a worker blocks this thread for a few
  // milliseconds, so a burst of new sessions costs each waiting warm call
  // at most one worker start at a time, not one per new session.
  #scheduleRefill(): void {
    if (this.#refilling) return;
    this.#refilling = true;
    const step = () => {
      // Operations waiting for a worker go first (the pump calls back), and
      // spares never take the budget from warm workers.
      if (
        this.#spares.length >= this.#target || this.#pending.size > 0 ||
        this.#live >= this.#options.maxWarm
      ) {
        this.#refilling = false;
        return;
      }
      this.#spares.push(this.#spawn());
      setTimeout(step, 0);
    };
    setTimeout(step, 0);
  }

  // A fresh worker, in no warm key yet.
  #spawn(): Slot {
    this.#live++;
    const worker = new Worker(this.#options.bootstrapUrl, {
      type: "module",
      deno: { permissions: this.#options.permissions },
    } as WorkerOptions);
    const ready = Promise.withResolvers<void>();
    const slot: Slot = {
      worker,
      key: "",
      session: "",
      ready: ready.promise,
      loaded: null,
      isLoaded: false,
      ops: new Set(),
      retiring: false,
      dead: false,
      onReady: () => ready.resolve(),
      onLoad: null,
      primeAfter: null,
    };
    const onMessage = this.#options.onMessage;
    worker.onmessage = (e: MessageEvent<unknown>) => {
      if (slot.dead) return;
      let message: FromWorkerMessage | null;
      try {
        message = decodeWorkerMessage(e.data);
      } catch {
        // A field String() cannot convert ({ toString: 1 }): a throw here
        // would end the process with every call in it.
        return;
      }
      if (message !== null) onMessage(slot, message);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      this.kill(slot, `Sandbox worker failed: ${e.message}`);
    };
    // A value the worker could post but this thread cannot copy back (V8
    // refuses one nested a few thousand levels deep) arrives as this, not
    // as a message: its operation would wait for its deadline, unanswered.
    worker.onmessageerror = () => {
      this.kill(slot, UNREADABLE);
    };
    return slot;
  }
}

/** One worker and the operations it runs. */
export interface Slot {
  worker: Worker;
  /** Its warm key ("" for a spare or fresh one). */
  key: string;
  /** The session of the operation it was taken for ("" for a spare). */
  session: string;
  /** Resolves once the worker posts `ready` (`onReady`). */
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
