/**
 * The skills `run_code`'s code reaches through its `skills` global: found
 * and run by `skill/call/req`'s own handler (unknown and archived ones
 * refused) with the skill capability's own tools, sandbox, LLM and limits,
 * recorded as a child run of the `run_code` run, their progress relayed.
 * `run_code` is refused inside them as inside any skill: a skill's tool
 * relay (`skills/relays.ts`) refuses it.
 *
 * @module
 */

import {
  createSkillsCapability,
  type SkillsCapabilityOptions,
} from "../skills/capability.ts";
import { newId } from "../../protocol/envelope.ts";
import type { RunObserver } from "../store/recorder.ts";
import type { InnerRequest, InnerSkillRunner } from "./inner_calls.ts";

/**
 * Makes the skill runner of code mode over what the skill capability was
 * built with.
 *
 * @param options the skill capability's options
 * @returns the runner {@link CodeCalls} takes
 * @example An unknown skill is refused
 * ```ts
 * import { innerSkillRunner } from "./inner_skills.ts";
 * import assert from "node:assert/strict";
 * const run = innerSkillRunner({
 *   catalog: { skills: () => Promise.resolve([]) },
 *   tools: { tool: () => undefined, toolkit: () => undefined, call: () => Promise.reject(new Error("no")) },
 * });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const out = await run({ name: "nope", args: {}, session, signal: session.signal,
 *   timeoutSeconds: 1, onEvent() {} });
 * assert.equal(out.ok ? "" : out.code, "unknown_skill");
 * ```
 */
export function innerSkillRunner(
  options: SkillsCapabilityOptions,
): InnerSkillRunner {
  return async (request) => {
    // skill/call/req's own handler finds the skill, refuses unknown and
    // archived ones and runs it; only the observer is this call's own.
    const { handlers } = createSkillsCapability({
      ...options,
      observer: childObserver(options.observer, request),
    });
    const { result, error } = await handlers["skill/call/req"]!({
      request: {
        type: "skill/call/req",
        id: newId(),
        name: request.name,
        arguments: request.args,
        correlationId: "",
        timeout: request.timeoutSeconds,
        streaming: false,
        llmOverride: null,
        metadata: {},
      },
      session: request.session,
      signal: request.signal,
    });
    if (error !== null) {
      return { ok: false, code: error.code, message: error.message };
    }
    const outcome = result!; // no error: the skill ran
    return outcome.success
      ? {
        ok: true,
        data: outcome.data,
        cut: outcome.truncated,
        eventsCut: eventsCut(outcome.events),
      }
      : {
        ok: false,
        code: outcome.errorCode ?? "skill_error",
        message: outcome.error ?? `Skill "${request.name}" failed`,
      };
  };
}

// The terminal event is always kept, numbered after every event the skill
// emitted: fewer kept than that, some were dropped.
function eventsCut(events: readonly { seq: number }[]): boolean {
  const last = events.at(-1);
  return last !== undefined && last.seq + 1 > events.length;
}

// The skill's run is a child of the run_code run; its events go to the
// request, whose CodeCalls picks those that become the run_code call's
// (not runSkill's own lifecycle events: run_code's `calls` says as much).
function childObserver(
  observer: RunObserver | undefined,
  request: InnerRequest,
): RunObserver {
  return {
    started: (start) =>
      observer?.started({
        ...start,
        parentId: start.parentId ?? request.parentRunId ?? null,
      }) ?? "",
    event(runId, event) {
      observer?.event(runId, event);
      request.onEvent(event.kind, event.data);
    },
    finished: (runId, end) => observer?.finished(runId, end),
    files: observer?.files,
  };
}
