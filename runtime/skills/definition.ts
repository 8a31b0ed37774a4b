/**
 * Skill records: what the registry found (code skill modules, Agent Skills
 * folders, files that failed to load) as the domain `Skill` an agent
 * discovers, plus what the host needs to run it. The pieces:
 * `skill_record.ts` (the record and its builders' shared parts),
 * `code_skill.ts`, `instruction_skill.ts`, `skill_status.ts` (Published,
 * Blocked, Archived, Created) and `skill_source.ts` (system, user,
 * project). This module re-exports them.
 *
 * @module
 */

export {
  argumentNames,
  type CodeSkillRun,
  failedSkillRecord,
  type InstructionSkillRun,
  redactedChoice,
  skill,
  type SkillRecord,
  type SkillSource,
} from "./skill_record.ts";
export {
  type CodeSkillEntry,
  type CodeSkillOptions,
  codeSkillRecord,
} from "./code_skill.ts";
export { instructionSkillRecord } from "./instruction_skill.ts";
export { resolveSkillStatus, type StatusContext } from "./skill_status.ts";
export { skillSource } from "./skill_source.ts";
