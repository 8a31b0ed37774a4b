/**
 * The pipe between the host and a discovery process: a sandbox process that
 * reads the definitions of a batch of modules, each in a Worker limited to
 * that module's own files.
 *
 * The host writes exactly one line, a {@link DiscoveryInit}, then closes the
 * process's stdin: nothing a worker could read from fd 0 afterwards exists.
 * The process answers with nonce-framed {@link DiscoveryFrame} lines (see
 * `frames.ts`) and exits once every module is answered.
 *
 * @module
 */

/** One module of a batch, as the host sends it: paths only, no secrets. */
export interface DiscoveryModule {
  /** Absolute path of the module file. */
  path: string;
  /** What its worker may read (absolute): its own folder or files. */
  read: string[];
}

/** The one line the host writes to a discovery process. */
export interface DiscoveryInit {
  t: "discover";
  /** Prefix of every frame the process writes (see `frames.ts`). */
  nonce: string;
  /** Source of the worker bootstrap (run from a `blob:` URL). */
  bootstrap: string;
  /** The batch, in order: frames name a module by its index here. */
  modules: DiscoveryModule[];
  /** Modules loading at once. */
  workers: number;
  /** Bound on one answer (characters of JSON). */
  maxResultBytes: number;
}

/** Discovery process to host: a module's worker is being started. */
export interface DiscoveryStarted {
  t: "started";
  /** Index of the module in {@link DiscoveryInit.modules}. */
  i: number;
}

/** Discovery process to host: what describing one module gave. */
export type DiscoveryResult =
  | {
    t: "described";
    i: number;
    ok: true;
    /** The definitions, as the worker's `describe` returned them. */
    value: unknown;
  }
  | {
    t: "described";
    i: number;
    ok: false;
    /** Why it failed, in a sentence. */
    message: string;
  };

/**
 * Discovery process to host, last: every module is answered, and the CPU
 * time the process used (all its threads), for the host's accounting. A
 * confined process runs in its own PID namespace, where the kernel does not
 * add it to the host's children's CPU time.
 */
export interface DiscoveryDone {
  t: "done";
  /** User plus system CPU time of the whole process, in milliseconds. */
  cpuMs: number;
}

/** Every frame a discovery process writes. */
export type DiscoveryFrame = DiscoveryStarted | DiscoveryResult | DiscoveryDone;

/**
 * Checks a parsed frame's shape (the process is trusted code, but its
 * stdout is shared with untrusted workers: only nonce-carrying lines are
 * parsed, and they are still checked).
 *
 * @param raw a parsed JSON value
 * @param size how many modules the batch has
 * @returns the frame, or null when it is not one
 * @example Refuse an index outside the batch
 * ```ts
 * import { decodeDiscoveryFrame } from "./discovery.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeDiscoveryFrame({ t: "started", i: 1 }, 2), { t: "started", i: 1 });
 * assert.equal(decodeDiscoveryFrame({ t: "started", i: 5 }, 2), null);
 * assert.deepEqual(decodeDiscoveryFrame({ t: "done", cpuMs: 9 }, 2), { t: "done", cpuMs: 9 });
 * ```
 */
export function decodeDiscoveryFrame(
  raw: unknown,
  size: number,
): DiscoveryFrame | null {
  if (typeof raw !== "object" || raw === null) return null;
  const m = raw as Record<string, unknown>;
  if (m.t === "done") {
    const cpuMs = m.cpuMs;
    return typeof cpuMs === "number" && Number.isFinite(cpuMs) && cpuMs >= 0
      ? { t: "done", cpuMs }
      : null;
  }
  const i = m.i;
  if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= size) {
    return null;
  }
  if (m.t === "started") return { t: "started", i };
  if (m.t !== "described") return null;
  if (m.ok === true) return { t: "described", i, ok: true, value: m.value };
  return { t: "described", i, ok: false, message: String(m.message) };
}
