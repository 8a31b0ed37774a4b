/**
 * The skills `run_code`'s code reaches through its `skills` global: found
 * in the catalog as `skill/call/req` finds them (unknown and archived ones
 * refused), run by `runSkill` with the skill capability's own tools,
 * sandbox, LLM and limits, recorded as a child run of the `run_code` run,
 * their progress relayed. `run_code` is refused inside them as inside any
 * skill: a skill's tool relay (`skills/relays.ts`) refuses it.
 *
 * @module
 */

import { hostLlm, type SkillsCapabilityOptions } from "../skills/capability.ts";
import { resolveSkillStatus } from "../skills/catalog.ts";
import { runSkill } from "../skills/run.ts";
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
  const archived = new Set(options.archived ?? []);
  const llm = options.llm ?? hostLlm([]);
  return async (request) => {
    const record = (await options.catalog.skills()).find((r) =>
      r.definition.name === request.name
    );
    const definition = record && resolveSkillStatus(record, {
      hasTool: (n) => options.tools.tool(n) !== undefined,
      hasToolkit: (n) => options.tools.toolkit(n) !== undefined,
      archived,
    });
    if (!record || !definition || definition.status === "Archived") {
      return {
        ok: false,
        code: "unknown_skill",
        message: `Unknown skill "${request.name}"`,
      };
    }
    const result = await runSkill(record, definition, {
      reqId: newId(),
      arguments: request.args,
      timeout: request.timeoutSeconds,
      streaming: false,
      llmOverride: null,
      metadata: {},
      session: request.session,
      signal: request.signal,
      tools: options.tools,
      sandbox: options.sandbox,
      llm,
      limits: options.limits,
      observer: childObserver(options.observer, request),
    });
    return result.success
      ? {
        ok: true,
        data: result.data,
        cut: result.truncated,
        eventsCut: eventsCut(result.events),
      }
      : {
        ok: false,
        code: result.errorCode ?? "skill_error",
        message: result.error ?? `Skill "${request.name}" failed`,
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
