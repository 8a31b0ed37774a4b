import assert from "node:assert/strict";
import { SkillboxError } from "../../protocol/errors.ts";
import { effectiveMaxTurns, TurnBudget } from "./turn_budget.ts";

Deno.test("effectiveMaxTurns() takes the skill's value, the default, and the policy cap", () => {
  assert.equal(effectiveMaxTurns(3, {}), 3);
  assert.equal(effectiveMaxTurns(undefined, { defaultMaxTurns: 4 }), 4);
  assert.equal(effectiveMaxTurns(null, {}), 10);
  assert.equal(effectiveMaxTurns(100, {}), 50);
  assert.equal(effectiveMaxTurns(100, { maxTurns: 7 }), 7);
});

Deno.test("TurnBudget allows exactly max turns, numbered from 1", () => {
  const budget = new TurnBudget("plan", 2);
  budget.check();
  assert.equal(budget.next(), 1);
  budget.check();
  assert.equal(budget.next(), 2);
  assert.equal(budget.used, 2);
  assert.equal(budget.exceeded, null);
  assert.throws(() => budget.check(), (error) => {
    assert.ok(error instanceof SkillboxError);
    assert.equal(error.code, "max_turns_exceeded");
    assert.equal(
      error.message,
      'Skill "plan" reached max_turns (2): LLM call 3 refused',
    );
    return true;
  });
  // Read again through a function: the earlier assert narrowed the getter.
  const exceeded = (b: TurnBudget) => b.exceeded;
  assert.equal(exceeded(budget)?.code, "max_turns_exceeded");
  assert.equal(budget.used, 2);
});

Deno.test("TurnBudget with no turns refuses the first call", () => {
  const budget = new TurnBudget("none", 0);
  assert.throws(() => budget.check(), /LLM call 1 refused/);
});
