/**
 * The closed vocabularies of A2E v1.0: error codes, capability names, skill
 * statuses and event kinds.
 *
 * @module
 */

/** Every `error.code` / `error_code` value A2E defines. */
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

/** An A2E error code. */
export type ErrorCode = typeof ERROR_CODES[number];

/**
 * Every capability name the Python client accepts in `accepted_caps`; any
 * other value makes it reject the handshake.
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

/** A capability name from A2E's closed list. */
export type CapabilityName = typeof CAPABILITY_NAMES[number];

/** The lifecycle states of a skill. */
export const SKILL_STATUSES = [
  "Created",
  "Blocked",
  "Published",
  "Archived",
] as const;

/** A skill's lifecycle state. */
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
