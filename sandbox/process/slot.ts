/**
 * One worker of a sandbox process and the operations it runs, and what a
 * warm worker's key says about whose it is.
 *
 * @module
 */

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

/**
 * A slot for a worker just started.
 *
 * @param worker the worker
 * @param key its warm key ("" for a spare or fresh one)
 * @returns the slot; its `ready` resolves once `onReady` is called
 * @example
 * ```ts
 * import { newSlot } from "./slot.ts";
 * import assert from "node:assert/strict";
 * const worker = new Worker(URL.createObjectURL(new Blob([""],
 *   { type: "text/javascript" })), { type: "module" });
 * const slot = newSlot(worker, "");
 * slot.onReady();
 * await slot.ready;
 * assert.equal(slot.ops.size, 0);
 * worker.terminate();
 * ```
 */
export function newSlot(worker: Worker, key: string): Slot {
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => onReady = resolve);
  return {
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
}

/**
 * The session a warm worker key names: the host builds keys as the JSON of
 * `[path, version, session, configuration]` (`runtime/sandbox/worker_key.ts`).
 * Read only when a session ends or stats are asked for, never per call.
 *
 * @param key a warm worker key
 * @returns the session, or null when the key names none
 * @example
 * ```ts
 * import { sessionOfKey } from "./slot.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sessionOfKey(JSON.stringify(["/m.ts", "v1", "s1", "{}"])), "s1");
 * assert.equal(sessionOfKey(""), null);
 * ```
 */
export function sessionOfKey(key: string): string | null {
  try {
    const parts: unknown = JSON.parse(key);
    return Array.isArray(parts) && typeof parts[2] === "string"
      ? parts[2]
      : null;
  } catch {
    return null;
  }
}
