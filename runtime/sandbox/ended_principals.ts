/**
 * Principals whose work ended (closed sessions), remembered so that no
 * sandbox process is started for them again and their late calls are
 * refused. Bounded: the oldest are forgotten first.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";

// Ended principals remembered.
const MAX_ENDED = 8192;

/**
 * The ended principals of a router.
 *
 * @example A session that ended is refused
 * ```ts
 * import { EndedPrincipals } from "./ended_principals.ts";
 * import assert from "node:assert/strict";
 * const ended = new EndedPrincipals();
 * ended.check("session:a");
 * ended.end("session:a");
 * assert.throws(() => ended.check("session:a"), /has ended/);
 * ```
 */
export class EndedPrincipals {
  readonly #ended = new Set<string>();

  /** Remembers that a principal's work ended. */
  end(principal: string): void {
    this.#ended.delete(principal);
    this.#ended.add(principal);
    if (this.#ended.size > MAX_ENDED) {
      this.#ended.delete(this.#ended.values().next().value!);
    }
  }

  /**
   * Refuses an ended principal.
   *
   * @throws {SkillboxError} `runtime_error` when it has ended
   */
  check(principal: string): void {
    if (this.#ended.has(principal)) {
      throw new SkillboxError(
        "runtime_error",
        "The session has ended: its sandbox processes are retired",
      );
    }
  }
}
