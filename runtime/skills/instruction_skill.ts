/**
 * The record of an Agent Skills folder (`SKILL.md`): the domain `Skill` from
 * its manifest, run by the host's agent loop.
 *
 * @module
 */

import type { LlmChoice } from "../../protocol/skill.ts";
import type { SkillFolder } from "./skill_md.ts";
import {
  argumentNames,
  redactedChoice,
  skill,
  type SkillRecord,
  type SkillSource,
} from "./skill_record.ts";

/**
 * Builds the record of an Agent Skills folder.
 *
 * @param folder the loaded folder
 * @param options its source
 * @returns the record, run by the agent loop
 * @example
 * ```ts
 * import { instructionSkillRecord } from "./instruction_skill.ts";
 * import { parseSkillMd } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const manifest = parseSkillMd("---\nname: notes\ndescription: Takes notes\n---\nBe brief.");
 * const rec = instructionSkillRecord(
 *   { ...manifest, folder: "/s/notes", file_path: "/s/notes/SKILL.md", resources: [] },
 *   { source: "project" },
 * );
 * assert.equal(rec.definition.instructions, "Be brief.");
 * assert.equal(rec.definition.source, "project");
 * assert.equal(rec.run?.format, "instructions");
 * ```
 */
export function instructionSkillRecord(
  folder: SkillFolder,
  options: { source: SkillSource },
): SkillRecord {
  const llm: LlmChoice | null = folder.llm
    ? {
      providerName: folder.llm.provider_name,
      providerCredentials: folder.llm.provider_credentials,
      providerConfig: folder.llm.provider_config,
      isDefault: false,
    }
    : null;
  const definition = skill({
    name: folder.name,
    description: folder.description,
    version: folder.version,
    triggers: folder.triggers,
    whenToUse: folder.when_to_use,
    argumentHint: folder.argument_hint,
    source: options.source,
    tools: folder.tools,
    toolkits: folder.toolkits,
    instructions: folder.instructions,
    filePath: folder.file_path,
    llmConfig: llm && redactedChoice(llm),
    category: folder.category,
    tags: folder.tags,
    maxTurns: folder.max_turns,
    timeoutSeconds: folder.timeout_seconds,
    icon: folder.icon,
    metadata: {
      ...folder.metadata,
      format: "agent_skill",
      resources: [...folder.resources],
    },
    inputSchema: folder.input_schema,
    outputSchema: folder.output_schema,
    arguments: argumentNames(folder.input_schema),
  });
  return {
    definition,
    run: {
      format: "instructions",
      folder: folder.folder,
      resources: folder.resources,
      commandRules: folder.command_rules,
      env: folder.env ?? [],
      net: folder.net ?? [],
    },
    llmConfig: llm,
    loadProblem: null,
  };
}
