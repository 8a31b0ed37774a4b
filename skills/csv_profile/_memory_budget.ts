/**
 * The memory one profile may hold, shared by all its columns: the process
 * that runs csv_profile serves every session's calls, so one wide or
 * varied file must not take its whole heap. Runs in the sandbox.
 *
 * @module
 */

/**
 * Bytes left to a profile, taken by what it keeps (estimated sizes).
 *
 * @example Take until refused
 * ```ts
 * import { MemoryBudget } from "./_memory_budget.ts";
 * import assert from "node:assert/strict";
 * const budget = new MemoryBudget(100);
 * assert.ok(budget.take(60));
 * assert.ok(!budget.take(60));
 * assert.ok(budget.take(40));
 * ```
 */
export class MemoryBudget {
  #left: number;

  /** @param bytes what the profile may hold */
  constructor(bytes: number) {
    this.#left = bytes;
  }

  /**
   * Takes `bytes` if that many are left.
   *
   * @param bytes the estimated size of what is to be kept
   * @returns whether they were taken (else nothing is)
   */
  take(bytes: number): boolean {
    if (bytes > this.#left) return false;
    this.#left -= bytes;
    return true;
  }
}
