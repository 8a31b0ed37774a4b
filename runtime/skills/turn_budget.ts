/**
 * A skill's turn budget: how many LLM calls (`ctx.llm.chat` or agent-loop
 * turns) one skill call may make, from the skill's `max_turns` and the
 * host's limits. The first refused turn is remembered, because it is the
 * real cause of whatever the skill does after it.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { SkillLimits } from "./run_types.ts";

/**
 * The `max_turns` in force: the skill's own (or the host default), capped by
 * the policy.
 *
 * @param skillMaxTurns the skill's `max_turns`, if it sets one
 * @param limits the host's limits
 * @returns the number of turns allowed
 * @example
 * ```ts
 * import { effectiveMaxTurns } from "./turn_budget.ts";
 * import assert from "node:assert/strict";
 * assert.equal(effectiveMaxTurns(undefined, {}), 10);
 * assert.equal(effectiveMaxTurns(80, { maxTurns: 50 }), 50);
 * ```
 */
export function effectiveMaxTurns(
  skillMaxTurns: number | null | undefined,
  limits: Pick<SkillLimits, "defaultMaxTurns" | "maxTurns">,
): number {
  return Math.min(
    skillMaxTurns ?? limits.defaultMaxTurns ?? 10,
    limits.maxTurns ?? 50,
  );
}

/**
 * Counts the turns of one skill call against its `max_turns`.
 *
 * @example The turn after the last one is refused, and remembered
 * ```ts
 * import { TurnBudget } from "./turn_budget.ts";
 * import assert from "node:assert/strict";
 * const budget = new TurnBudget("s", 1);
 * budget.check();
 * assert.equal(budget.next(), 1);
 * assert.throws(() => budget.check(), /reached max_turns \(1\)/);
 * assert.equal(budget.exceeded?.code, "max_turns_exceeded");
 * ```
 */
export class TurnBudget {
  readonly #skill: string;
  readonly #max: number;
  #used = 0;
  #exceeded: SkillboxError | null = null;

  /**
   * @param skill the skill's name, for the error message
   * @param max the turns allowed (see {@link effectiveMaxTurns})
   */
  constructor(skill: string, max: number) {
    this.#skill = skill;
    this.#max = max;
  }

  /** Turns taken so far. */
  get used(): number {
    return this.#used;
  }

  /** The refusal of the first turn over the budget, or null. */
  get exceeded(): SkillboxError | null {
    return this.#exceeded;
  }

  /**
   * Throws `max_turns_exceeded` (and remembers it) when no turn is left.
   *
   * @throws {SkillboxError} when the budget is spent
   */
  check(): void {
    if (this.#used < this.#max) return;
    this.#exceeded = new SkillboxError(
      "max_turns_exceeded",
      `Skill "${this.#skill}" reached max_turns (${this.#max}): LLM call ${
        this.#used + 1
      } refused`,
    );
    throw this.#exceeded;
  }

  /**
   * Takes one turn; call {@link check} first.
   *
   * @returns the number of this turn, from 1
   */
  next(): number {
    return ++this.#used;
  }
}
