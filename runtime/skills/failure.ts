/**
 * How a skill call fails: every error becomes a `skill.failed` event and a
 * `success: false` result with an A2E code (a tool's `tool_error` reads as
 * `skill_error` at the skill level), and a skill that is not runnable says
 * why.
 *
 * @module
 */

import { toWireError } from "../../protocol/errors.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  type Skill,
  type SkillOutcome,
  skillOutcome,
} from "../../protocol/skill.ts";
import type { SkillEventLog } from "./events.ts";

/**
 * Ends a skill call with a failure: emits `skill.failed` and builds the
 * result with every event so far.
 *
 * @param log the call's event log
 * @param error what went wrong
 * @param durationMs how long the call ran
 * @returns the failed outcome
 * @example
 * ```ts
 * import { failSkill } from "./failure.ts";
 * import { SkillEventLog } from "./events.ts";
 * import assert from "node:assert/strict";
 * const result = failSkill(new SkillEventLog("r1"), new Error("boom"), 3);
 * assert.equal(result.success, false);
 * assert.equal(result.events.at(-1)?.kind, "skill.failed");
 * ```
 */
export function failSkill(
  log: SkillEventLog,
  error: unknown,
  durationMs: number,
): SkillOutcome {
  const wire = toWireError(error);
  const code = wire.code === "tool_error" ? "skill_error" : wire.code;
  log.emit("skill.failed", {
    error: wire.message,
    error_code: code,
    duration_ms: durationMs,
  });
  return skillOutcome({
    success: false,
    error: wire.message,
    errorCode: code,
    durationMs,
    events: log.events,
    truncated: log.truncated,
  });
}

/**
 * The error for a skill that is not `Published` or has nothing to run,
 * with the reason it is blocked when there is one.
 *
 * @param definition the skill's definition
 * @returns a `skill_error`
 * @example
 * ```ts
 * import { notRunnableError } from "./failure.ts";
 * import assert from "node:assert/strict";
 * const error = notRunnableError({ name: "s", status: "Created" } as never);
 * assert.equal(error.message, 'Cannot run skill "s" (Created): it is still being validated');
 * ```
 */
export function notRunnableError(definition: Skill): SkillboxError {
  const why = definition.metadata?.blocked_reason ??
    (definition.status === "Created"
      ? "it is still being validated"
      : "it cannot run");
  return new SkillboxError(
    "skill_error",
    `Cannot run skill "${definition.name}" (${definition.status}): ${why}`,
  );
}
