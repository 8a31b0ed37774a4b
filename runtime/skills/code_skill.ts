/**
 * The record of a code skill module: its fields, as the module declared
 * them, read defensively into the domain `Skill`, and how to run it in a
 * sandbox (or in the agent loop when it has `instructions` and no `run`).
 *
 * @module
 */

import { dirname } from "node:path";
import type { JsonObject } from "../../protocol/json.ts";
import type { LlmChoice } from "../../protocol/skill.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  argumentNames,
  type CodeSkillRun,
  type InstructionSkillRun,
  redactedChoice,
  skill,
  type SkillRecord,
  type SkillSource,
} from "./skill_record.ts";

/** A code skill as the registry describes it (`SkillEntry` fits). */
export interface CodeSkillEntry {
  readonly path: string;
  readonly export: string;
  readonly hash: string;
  readonly name: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly runnable: boolean;
}

/** Options for {@link codeSkillRecord}. */
export interface CodeSkillOptions {
  source: SkillSource;
  /** The checked grant. @default read of the module's own folder */
  grant?: Permissions;
  /** Why the policy refuses its permissions, or null. @default null */
  denied?: string | null;
}

const str = (v: unknown): string | null => typeof v === "string" ? v : null;
const strList = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? [...v] : null;
const positive = (v: unknown): number | null =>
  typeof v === "number" && v > 0 && Number.isFinite(v) ? v : null;
const object = (v: unknown): JsonObject | null =>
  typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as JsonObject
    : null;

/**
 * Builds the record of a code skill module.
 *
 * @param entry the registry's skill entry
 * @param options its source, grant and policy verdict
 * @returns the record; a skill with neither `run` nor `instructions` is
 *   Blocked
 * @example A described module
 * ```ts
 * import { codeSkillRecord } from "./code_skill.ts";
 * import assert from "node:assert/strict";
 * const rec = codeSkillRecord({
 *   path: "/skills/hello/hello.ts", export: "default", hash: "h1", name: "hello",
 *   fields: { description: "Greets", input_schema: { type: "object", properties: { who: { type: "string" } } } },
 *   runnable: true,
 * }, { source: "system" });
 * assert.equal(rec.definition.status, "Published");
 * assert.deepEqual(rec.definition.arguments, ["who"]);
 * assert.equal(rec.run?.format, "code");
 * ```
 */
export function codeSkillRecord(
  entry: CodeSkillEntry,
  options: CodeSkillOptions,
): SkillRecord {
  const f = entry.fields;
  const inputSchema = object(f.input_schema) ?? object(f.input) ?? {};
  const instructions = str(f.instructions);
  const llm = llmChoiceOf(f.llm_config);
  const folder = dirname(entry.path);
  let run: CodeSkillRun | InstructionSkillRun | null = null;
  let loadProblem = options.denied ?? null;
  if (entry.runnable) {
    run = {
      format: "code",
      path: entry.path,
      export: entry.export,
      version: entry.hash,
      grant: options.grant ?? { read: [folder] },
      isolation: f.isolation === "per-call" ? "per-call" : "warm",
    };
  } else if (instructions) {
    // A code module without `run` is an instruction skill in TypeScript.
    run = { format: "instructions", folder, resources: [] };
  } else {
    loadProblem ??=
      `Skill "${entry.name}" has neither "run" nor "instructions"`;
  }
  const definition = skill({
    name: entry.name,
    description: str(f.description) ?? "",
    version: str(f.version) ?? "1.0.0",
    triggers: strList(f.triggers) ?? [],
    whenToUse: str(f.when_to_use) ?? "",
    argumentHint: str(f.argument_hint) ?? "",
    source: options.source,
    tools: strList(f.tools),
    toolkits: strList(f.toolkits),
    instructions,
    filePath: entry.path,
    llmConfig: llm && redactedChoice(llm),
    category: str(f.category),
    tags: strList(f.tags),
    maxTurns: positive(f.max_turns),
    timeoutSeconds: positive(f.timeout_seconds),
    icon: str(f.icon),
    metadata: { ...object(f.metadata), format: "code" },
    inputSchema,
    outputSchema: object(f.output_schema) ?? object(f.output) ?? {},
    arguments: strList(f.arguments) ?? argumentNames(inputSchema),
  });
  return { definition, run, llmConfig: llm, loadProblem };
}

// A module's `llm_config` is author input: only a named provider counts.
function llmChoiceOf(value: unknown): LlmChoice | null {
  const v = object(value);
  if (!v || typeof v.provider_name !== "string") return null;
  return {
    providerName: v.provider_name,
    providerCredentials: object(v.provider_credentials) ?? {},
    providerConfig: object(v.provider_config) ?? {},
    isDefault: false,
  };
}
