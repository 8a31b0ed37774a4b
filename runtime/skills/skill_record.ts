/**
 * What the host keeps of one skill: the domain `Skill` an agent discovers
 * (encoded for the wire only by the protocol codec), how to run it, and
 * its own LLM choice. Built by `code_skill.ts`, `instruction_skill.ts` and
 * {@link failedSkillRecord}; its status is decided by `skill_status.ts`.
 *
 * @module
 */

import type { JsonObject, JsonSchema } from "../../protocol/json.ts";
import {
  decodeLlmChoice,
  encodeLlmChoice,
  type LlmChoice,
  type Skill,
} from "../../protocol/skill.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { CommandRule } from "./tool_names.ts";
import { redactLlmConfig } from "../llm/redact.ts";

/** Who put a skill where it was found (see `skill_source.ts`). */
export type SkillSource = "system" | "project" | "user";

/** How the host runs a code skill: in a sandbox, through `Sandbox.call`. */
export interface CodeSkillRun {
  readonly format: "code";
  /** Absolute module path. */
  readonly path: string;
  readonly export: string;
  /** The module's content hash. */
  readonly version: string;
  /** Absolute-path permissions, already checked against the policy. */
  readonly grant: Permissions;
  readonly isolation: "warm" | "per-call";
}

/** How the host runs an instruction skill: in its agent loop. */
export interface InstructionSkillRun {
  readonly format: "instructions";
  /** The skill's folder; linked files are read from here. */
  readonly folder: string;
  /** Linked files readable with `read_skill_file`, relative to `folder`. */
  readonly resources: readonly string[];
  /** What `run_command` may run (`Bash(git:*)`); absent or null: not narrowed. */
  readonly commandRules?: readonly CommandRule[] | null;
  /** Variables its scripts ask for (frontmatter `env`). @default [] */
  readonly env?: readonly string[];
  /** Hosts its scripts ask for (frontmatter `net`). @default [] */
  readonly net?: readonly string[];
  /**
   * Where its files come from when they are not in `folder` (a skill of an
   * imported MCP server): `resources` are read through it, and its scripts
   * are never run. @default none
   */
  readonly fetched?: FetchedSkillFiles;
}

/**
 * The files of a skill fetched from where it is served rather than read
 * from a folder (a skill of an imported MCP server), each checked before
 * its text is returned.
 */
export interface FetchedSkillFiles {
  /** The readable paths, relative to the skill's root. */
  readonly resources: readonly string[];
  /** Told to the model with `read_skill_file`: their origin, scripts not run. */
  readonly note: string;
  /**
   * Reads one file. Rejects with `tool_denied` for a path that is not one
   * of `resources` (the model may ask again), and with
   * `SkillFileRefusedError` (`skill_links.ts`) when the bytes are not what
   * was listed: the run then fails.
   */
  read(path: string): Promise<string>;
}

/** A skill as the host keeps it. */
export interface SkillRecord {
  /** What `skill/discover` lists: complete, `llmConfig` redacted. */
  readonly definition: Skill;
  /** How to run it, or null when it cannot be run (load failure). */
  readonly run: CodeSkillRun | InstructionSkillRun | null;
  /** The skill's own LLM choice as written, for the host only. */
  readonly llmConfig: LlmChoice | null;
  /** Why it cannot run regardless of tools (load failure, policy). */
  readonly loadProblem: string | null;
}

/**
 * Completes a skill with A2E's defaults (the wire `SkillDefinition`'s).
 *
 * @param fields at least `name` and `description`
 * @returns the skill, every field present
 * @example
 * ```ts
 * import { skill } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * const s = skill({ name: "a", description: "A" });
 * assert.equal(s.version, "1.0.0");
 * assert.equal(s.status, "Published");
 * ```
 */
export function skill(
  fields: Pick<Skill, "name" | "description"> & Partial<Skill>,
): Skill {
  return {
    version: "1.0.0",
    triggers: [],
    status: "Published",
    whenToUse: "",
    argumentHint: "",
    source: "system",
    tools: null,
    toolkits: null,
    instructions: null,
    filePath: null,
    llmConfig: null,
    category: null,
    tags: null,
    maxTurns: null,
    timeoutSeconds: null,
    icon: null,
    metadata: null,
    inputSchema: {},
    outputSchema: {},
    arguments: null,
    ...fields,
  };
}

/**
 * A skill's LLM choice as a client may see it: no credentials, only the
 * public provider settings (the LLM module's redaction, through the codec).
 *
 * @param choice the choice as written
 * @returns the redacted choice
 * @example
 * ```ts
 * import { redactedChoice } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * const r = redactedChoice({ providerName: "openai", providerCredentials: { api_key: "sk-1" },
 *   providerConfig: { model: "m", secret: "x" }, isDefault: false });
 * assert.deepEqual(r.providerCredentials, {});
 * assert.deepEqual(r.providerConfig, { model: "m" });
 * ```
 */
export function redactedChoice(choice: LlmChoice): LlmChoice {
  const redacted = redactLlmConfig(encodeLlmChoice(choice));
  return decodeLlmChoice({ ...redacted });
}

/**
 * The argument names a schema declares (its `properties`).
 *
 * @param schema the input schema
 * @returns the names, or null when it declares none
 * @example
 * ```ts
 * import { argumentNames } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(argumentNames({ type: "object", properties: { a: {} } }), ["a"]);
 * assert.equal(argumentNames({}), null);
 * ```
 */
export function argumentNames(schema: JsonSchema): string[] | null {
  const props = schema.properties;
  return typeof props === "object" && props !== null && !Array.isArray(props)
    ? Object.keys(props as JsonObject)
    : null;
}

/**
 * Builds the record of a skill whose file could not be loaded: listed as
 * Blocked with the reason, never runnable.
 *
 * @param name the skill's name (its folder or file name when unknown)
 * @param options where it is, why it failed, its source
 * @returns a Blocked record
 * @example
 * ```ts
 * import { failedSkillRecord } from "./skill_record.ts";
 * import { resolveSkillStatus } from "./skill_status.ts";
 * import assert from "node:assert/strict";
 * const rec = failedSkillRecord("broken", { path: "/s/broken/SKILL.md", message: "YAML error at line 3", source: "user" });
 * const def = resolveSkillStatus(rec, { hasTool: () => true, hasToolkit: () => true });
 * assert.equal(def.status, "Blocked");
 * assert.equal(def.metadata?.blocked_reason, "YAML error at line 3");
 * ```
 */
export function failedSkillRecord(
  name: string,
  options: { path: string; message: string; source: SkillSource },
): SkillRecord {
  return {
    definition: skill({
      name,
      description: `Could not be loaded: ${options.message}`,
      source: options.source,
      filePath: options.path,
      metadata: {},
    }),
    run: null,
    llmConfig: null,
    loadProblem: options.message,
  };
}
