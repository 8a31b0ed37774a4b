/**
 * The closed vocabularies of A2E v1.0: error codes, capability names, skill
 * statuses and event kinds.
 *
 * @module
 */

/**
 * Every `error.code` / `error_code` value A2E defines.
 *
 * @example The codes a malformed message gets are in the list
 * ```ts
 * import { ERROR_CODES } from "./codes.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const broken = parseMessage("{nope");
 * const unknown = parseMessage('{"type":"tool/frobnicate/req"}');
 * assert.ok(!broken.ok && ERROR_CODES.includes(broken.code));
 * assert.ok(!unknown.ok && ERROR_CODES.includes(unknown.code));
 * ```
 */
export const ERROR_CODES = [
  "parse_error",
  "runtime_error",
  "invalid_message",
  "version_mismatch",
  "unauthorized",
  "schema_violation",
  "timeout",
  "out_of_memory",
  "sandbox_crash",
  "unknown_tool",
  "tool_denied",
  "tool_error",
  "unknown_skill",
  "skill_error",
  "max_turns_exceeded",
] as const;

/**
 * An A2E error code.
 *
 * @example Decide what to do about a host's error
 * ```ts
 * import type { ErrorCode } from "./codes.ts";
 * import { decodeError } from "./responses.ts";
 * import assert from "node:assert/strict";
 * function advice(code: ErrorCode): string {
 *   switch (code) {
 *     case "timeout":
 *       return "retry with a longer timeout";
 *     case "unknown_tool":
 *       return "list the tools first";
 *     default:
 *       return "give up";
 *   }
 * }
 * const error = decodeError({ type: "error", code: "unknown_tool", message: 'No tool "x"' });
 * assert.equal(advice(error.code), "list the tools first");
 * ```
 */
export type ErrorCode = typeof ERROR_CODES[number];

/**
 * Every capability name the Python client accepts in `accepted_caps`; any
 * other value makes it reject the handshake.
 *
 * @example Ask only for capabilities in the list
 * ```ts
 * import { CAPABILITY_NAMES } from "./codes.ts";
 * import { encodeRequest } from "./requests.ts";
 * import assert from "node:assert/strict";
 * const wanted = ["tools", "skill", "streaming"];
 * const hello = encodeRequest({
 *   type: "handshake/req",
 *   agentId: "agent-1",
 *   agentCaps: wanted.filter((name) => (CAPABILITY_NAMES as readonly string[]).includes(name)),
 *   authToken: null,
 * });
 * assert.deepEqual(hello.agent_caps, ["tools", "skill"]);
 * ```
 */
export const CAPABILITY_NAMES = [
  "skill",
  "tools",
  "toolkits",
  "env",
  "proc",
  "memory",
  "learning",
  "chains",
  "multi_agent",
  "planning",
  "mcp",
  "test",
] as const;

/**
 * A capability name from A2E's closed list.
 *
 * @example Read the capabilities a host accepted
 * ```ts
 * import { type CapabilityName, isCapabilityName } from "./codes.ts";
 * import { decodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const answer = decodeResponse("handshake/req", {
 *   type: "handshake/resp", req_id: "h1", session_id: "s1", ok: true,
 *   accepted_caps: [{ capability: "tools", enabled: true }, { capability: "later", enabled: true }],
 * });
 * const caps: CapabilityName[] = answer.acceptedCaps.filter(isCapabilityName);
 * assert.deepEqual(caps, ["tools"]);
 * ```
 */
export type CapabilityName = typeof CAPABILITY_NAMES[number];

/**
 * The lifecycle states of a skill.
 *
 * @example A skill's decoded status is always one of them
 * ```ts
 * import { SKILL_STATUSES } from "./codes.ts";
 * import { decodeSkill } from "./skill.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeSkill({ name: "a", status: "Blocked" }).status, "Blocked");
 * // A status this side does not know reads as the default.
 * const odd = decodeSkill({ name: "b", status: "Draft" });
 * assert.ok(SKILL_STATUSES.includes(odd.status));
 * assert.equal(odd.status, "Published");
 * ```
 */
export const SKILL_STATUSES = [
  "Created",
  "Blocked",
  "Published",
  "Archived",
] as const;

/**
 * A skill's lifecycle state.
 *
 * @example Keep the skills that can run
 * ```ts
 * import type { SkillStatus } from "./codes.ts";
 * import { decodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const runs = (status: SkillStatus): boolean => status === "Published";
 * const { skills } = decodeResponse("skill/discover/req", {
 *   type: "skill/discover/resp", req_id: "d1",
 *   skills: [{ name: "notes" }, { name: "old", status: "Archived" }],
 * });
 * assert.deepEqual(skills.filter((s) => runs(s.status)).map((s) => s.name), ["notes"]);
 * ```
 */
export type SkillStatus = typeof SKILL_STATUSES[number];

/** The event kinds a skill call emits, in addition to the generic four. */
export const SKILL_EVENT_KINDS = [
  "skill.started",
  "tool.started",
  "tool.completed",
  "tool.failed",
  "llm.started",
  "llm.token",
  "llm.completed",
  "skill.completed",
  "skill.failed",
] as const;

/** The generic event kinds any call may emit. */
export const GENERIC_EVENT_KINDS = [
  "progress",
  "status",
  "log",
  "artifact",
] as const;

/**
 * Tells whether a string is a capability name the Python client accepts.
 *
 * @param name the candidate
 * @returns true when `name` is in {@link CAPABILITY_NAMES}
 * @example Check a name
 * ```ts
 * import { isCapabilityName } from "./codes.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isCapabilityName("tools"));
 * assert.ok(!isCapabilityName("streaming"));
 * ```
 */
export function isCapabilityName(name: string): name is CapabilityName {
  return (CAPABILITY_NAMES as readonly string[]).includes(name);
}
