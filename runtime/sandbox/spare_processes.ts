/**
 * Spare sandbox processes ahead of new sessions: processes started with
 * the grant session-supplied code (`eval_typescript`) last ran under, that
 * have never served anyone. A new session's first call takes one (it then
 * belongs to that session only) instead of waiting for a whole process to
 * start, and the router starts a replacement in the background. This
 * module only keeps the list and says what is wanted; the router starts,
 * counts (under its cap and idle bound) and retires the processes.
 *
 * @module
 */

import type { Permissions } from "../../protocol/permissions.ts";

/** What the list needs of a process. */
export interface SpareCandidate {
  /** Whether new work may be routed to it (not killed, exited or tainted). */
  readonly usable: boolean;
}

/** A module a spare pre-loads in a fresh worker (see `PrimeMessage`). */
export interface SparePrime {
  primeKey: string;
  path: string;
}

/** The grant spares are started with, its canonical key, and the prime. */
export interface SpareGrant {
  key: string;
  grant: Permissions;
  /** The module session code last ran in, per call. @default none */
  prime?: SparePrime;
}

/**
 * The spare processes of a router.
 *
 * @example Learn the session grant, add a spare, hand it out once
 * ```ts
 * import { SpareProcesses } from "./spare_processes.ts";
 * import assert from "node:assert/strict";
 * const spares = new SpareProcesses<{ usable: boolean }>(1);
 * assert.deepEqual(spares.learn("{}", {}), []);
 * assert.equal(spares.wanted()?.key, "{}");
 * const proc = { usable: true };
 * spares.add(proc);
 * assert.equal(spares.wanted(), null);
 * assert.equal(spares.take("{}"), proc);
 * assert.equal(spares.take("{}"), null, "handed out once");
 * ```
 */
export class SpareProcesses<P extends SpareCandidate> {
  readonly #count: number;
  readonly #list: P[] = [];
  #grant: SpareGrant | null = null;

  /** @param count spares kept (0 disables them) */
  constructor(count: number) {
    this.#count = Math.max(0, Math.floor(count));
  }

  /** Spares kept, started or starting. */
  get size(): number {
    return this.#list.length;
  }

  /** Whether a process is a spare (not handed out yet). */
  has(proc: P): boolean {
    return this.#list.includes(proc);
  }

  /**
   * A session's code is about to run under a grant: spares are started with
   * it from now on. Spares of another grant are returned (to be retired):
   * they would never be taken. Spares started from now on also pre-load
   * `prime` (the module the code runs in, as `eval_typescript`'s).
   */
  learn(key: string, grant: Permissions, prime?: SparePrime): P[] {
    if (this.#count === 0) return [];
    if (this.#grant?.key === key) {
      this.#grant.prime = prime;
      return [];
    }
    this.#grant = { key, grant, prime };
    return this.#list.splice(0);
  }

  /** The grant another spare should be started with, or null for none. */
  wanted(): SpareGrant | null {
    return this.#grant && this.#list.length < this.#count ? this.#grant : null;
  }

  /** Keeps a process just started as a spare. */
  add(proc: P): void {
    this.#list.push(proc);
  }

  /**
   * Hands out a usable spare of the grant (it leaves the list for good:
   * a process is never a spare twice), or null. Unusable ones (killed,
   * exited) are dropped, never handed out.
   */
  take(key: string): P | null {
    if (this.#grant?.key !== key) return null;
    while (this.#list.length > 0) {
      const proc = this.#list.shift()!;
      if (proc.usable) return proc;
    }
    return null;
  }

  /** Forgets a process (it exited, or is retired); true if it was a spare. */
  forget(proc: P): boolean {
    const at = this.#list.indexOf(proc);
    if (at < 0) return false;
    this.#list.splice(at, 1);
    return true;
  }
}
