/**
 * The codec of skills, skill outcomes and LLM choices: each camelCase domain
 * object (`domain.ts`) to its snake_case wire form (`models.ts`) and back.
 *
 * @module
 */

import { SKILL_STATUSES, type SkillStatus } from "./codes.ts";
import type { JsonObject, LlmChoice, Skill, SkillOutcome } from "./domain.ts";
import type { LLMConfig, SkillDefinition, SkillResult } from "./models.ts";
import { decodeEventFields } from "./tool_codec.ts";
import {
  isObject,
  list,
  nullableStr,
  nullableStrings,
  num,
  str,
  strings,
} from "./_fields.ts";

/**
 * Encodes an LLM choice as the wire's `LLMConfig`.
 *
 * @param choice the choice
 * @returns the wire config
 * @example
 * ```ts
 * import { encodeLlmChoice } from "./skill_codec.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeLlmChoice({ providerName: "openai", providerCredentials: {},
 *   providerConfig: false, isDefault: false });
 * assert.equal(wire.provider_name, "openai");
 * ```
 */
export function encodeLlmChoice(choice: LlmChoice): LLMConfig {
  return {
    provider_name: choice.providerName,
    provider_credentials: choice.providerCredentials,
    provider_config: choice.providerConfig,
    is_default: choice.isDefault,
  };
}

/**
 * Decodes a wire `LLMConfig`.
 *
 * @param wire the config as received
 * @returns the choice, defaults filled
 * @example
 * ```ts
 * import { decodeLlmChoice } from "./skill_codec.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeLlmChoice({ provider_name: "anthropic" }).providerConfig, false);
 * ```
 */
export function decodeLlmChoice(wire: JsonObject): LlmChoice {
  const config = wire.provider_config;
  return {
    providerName: str(wire.provider_name),
    providerCredentials: isObject(wire.provider_credentials)
      ? wire.provider_credentials
      : {},
    providerConfig: isObject(config) || config === null ? config : false,
    isDefault: wire.is_default === true,
  };
}

/**
 * Encodes a skill as the wire's `SkillDefinition`.
 *
 * @param skill the skill
 * @returns the wire definition, every required field present
 * @example
 * ```ts
 * import { encodeSkill, decodeSkill } from "./skill_codec.ts";
 * import assert from "node:assert/strict";
 * const skill = decodeSkill({ name: "notes", description: "Notes", when_to_use: "Often" });
 * assert.equal(encodeSkill(skill).when_to_use, "Often");
 * ```
 */
export function encodeSkill(skill: Skill): SkillDefinition {
  return {
    name: skill.name,
    version: skill.version,
    description: skill.description,
    triggers: skill.triggers,
    status: skill.status,
    when_to_use: skill.whenToUse,
    argument_hint: skill.argumentHint,
    source: skill.source,
    tools: skill.tools,
    toolkits: skill.toolkits,
    instructions: skill.instructions,
    file_path: skill.filePath,
    llm_config: skill.llmConfig && encodeLlmChoice(skill.llmConfig),
    category: skill.category,
    tags: skill.tags,
    max_turns: skill.maxTurns,
    timeout_seconds: skill.timeoutSeconds,
    icon: skill.icon,
    metadata: skill.metadata,
    input_schema: skill.inputSchema,
    output_schema: skill.outputSchema,
    arguments: skill.arguments,
  };
}

/**
 * Decodes a wire `SkillDefinition`.
 *
 * @param wire the definition as received
 * @returns the skill, defaults filled
 * @example
 * ```ts
 * import { decodeSkill } from "./skill_codec.ts";
 * import assert from "node:assert/strict";
 * const s = decodeSkill({ name: "x", description: "d", max_turns: 3 });
 * assert.equal(s.status, "Published");
 * assert.equal(s.maxTurns, 3);
 * ```
 */
export function decodeSkill(wire: JsonObject): Skill {
  const status = (SKILL_STATUSES as readonly string[]).includes(
      String(wire.status),
    )
    ? wire.status as SkillStatus
    : "Published";
  return {
    name: str(wire.name),
    version: str(wire.version, "1.0.0"),
    description: str(wire.description),
    triggers: strings(wire.triggers),
    status,
    whenToUse: str(wire.when_to_use),
    argumentHint: str(wire.argument_hint),
    source: str(wire.source, "system"),
    tools: nullableStrings(wire.tools),
    toolkits: nullableStrings(wire.toolkits),
    instructions: nullableStr(wire.instructions),
    filePath: nullableStr(wire.file_path),
    llmConfig: isObject(wire.llm_config)
      ? decodeLlmChoice(wire.llm_config)
      : null,
    category: nullableStr(wire.category),
    tags: nullableStrings(wire.tags),
    maxTurns: typeof wire.max_turns === "number" ? wire.max_turns : null,
    timeoutSeconds: typeof wire.timeout_seconds === "number"
      ? wire.timeout_seconds
      : null,
    icon: nullableStr(wire.icon),
    metadata: isObject(wire.metadata) ? wire.metadata : null,
    inputSchema: isObject(wire.input_schema) ? wire.input_schema : {},
    outputSchema: isObject(wire.output_schema) ? wire.output_schema : {},
    arguments: nullableStrings(wire.arguments),
  };
}

/**
 * Encodes a skill outcome as the wire's `SkillResult`.
 *
 * @param outcome the outcome
 * @returns the wire result
 * @example
 * ```ts
 * import { encodeSkillOutcome } from "./skill_codec.ts";
 * import { skillOutcome } from "./domain.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeSkillOutcome(skillOutcome({ success: true, durationMs: 4 })).duration_ms, 4);
 * ```
 */
export function encodeSkillOutcome(outcome: SkillOutcome): SkillResult {
  return {
    success: outcome.success,
    data: outcome.data,
    summary: outcome.summary,
    truncated: outcome.truncated,
    error: outcome.error,
    error_code: outcome.errorCode,
    duration_ms: outcome.durationMs,
    events: outcome.events,
  };
}

/**
 * Decodes a wire `SkillResult`.
 *
 * @param wire the result as received
 * @returns the outcome, defaults filled
 * @example
 * ```ts
 * import { decodeSkillOutcome } from "./skill_codec.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeSkillOutcome({ success: false, error_code: "max_turns_exceeded" }).errorCode, "max_turns_exceeded");
 * ```
 */
export function decodeSkillOutcome(wire: JsonObject): SkillOutcome {
  return {
    success: wire.success === true,
    data: wire.data ?? null,
    summary: wire.summary ?? null,
    truncated: wire.truncated === true,
    error: nullableStr(wire.error),
    errorCode: nullableStr(wire.error_code),
    durationMs: num(wire.duration_ms),
    events: list(wire.events).filter(isObject).map(decodeEventFields),
  };
}
