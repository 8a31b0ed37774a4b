/**
 * Skills, skill outcomes and LLM choices: each described once, as the
 * camelCase type skillbox code handles; its wire form (snake_case,
 * A2E-WIRE.md §6) is derived by `Wire<...>` and converted here.
 *
 * @module
 */

import { SKILL_STATUSES, type SkillStatus } from "./codes.ts";
import { isPlainObject, type JsonObject } from "./json.ts";
import { decodeToolOutcome, type ToolOutcome } from "./tool.ts";
import { type Wire, wireEncoder } from "./wire_names.ts";
import { nullableStr, nullableStrings, str, strings } from "./_fields.ts";

/**
 * Which LLM provider to use, and how (the wire's `LLMConfig`).
 *
 * @example Tell which provider a skill uses
 * ```ts
 * import { decodeSkill, type LlmChoice } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const provider = (choice: LlmChoice | null): string => choice?.providerName ?? "the host's default";
 * const pinned = decodeSkill({ name: "draft", llm_config: { provider_name: "anthropic" } });
 * assert.equal(provider(pinned.llmConfig), "anthropic");
 * assert.equal(pinned.llmConfig?.providerConfig, false);
 * assert.equal(provider(decodeSkill({ name: "plain" }).llmConfig), "the host's default");
 * ```
 */
export interface LlmChoice {
  /** The provider, e.g. `openai` or `anthropic`. */
  providerName: string;
  /** Its credentials (e.g. `api_key`); never sent back to a client. */
  providerCredentials: JsonObject;
  /** Provider options; the Python SDK sends `false` for none. */
  providerConfig: JsonObject | false | null;
  /** Whether this is the default provider. */
  isDefault: boolean;
}

/**
 * A skill as discovered by agents (the wire's `SkillDefinition`).
 *
 * @example Call a skill with its own time limit
 * ```ts
 * import { decodeSkill, type Skill } from "./skill.ts";
 * import { encodeRequest } from "./requests.ts";
 * import assert from "node:assert/strict";
 * const call = (skill: Skill, args: Record<string, unknown>) =>
 *   encodeRequest({ type: "skill/call/req", name: skill.name, arguments: args, correlationId: "",
 *     timeout: skill.timeoutSeconds ?? 60, streaming: true, llmOverride: null, metadata: {} });
 * const skill = decodeSkill({ name: "report", description: "Write a report", timeout_seconds: 120 });
 * const wire = call(skill, { topic: "sales" });
 * assert.equal(wire.name, "report");
 * assert.equal(wire.timeout, 120);
 * ```
 */
export interface Skill {
  /** The unique name agents call it by. */
  name: string;
  /** The skill's version. */
  version: string;
  /** What the skill does. */
  description: string;
  /** Phrases that suggest using it. */
  triggers: string[];
  /** Its lifecycle state; only `Published` skills run. */
  status: SkillStatus;
  /** When an agent should use it. */
  whenToUse: string;
  /** A short hint of the arguments it expects. */
  argumentHint: string;
  /** Who put it there: `system`, `user` or `project`. */
  source: string;
  /** The tools it may call, or `null`. */
  tools: string[] | null;
  /** The toolkits whose tools it may call, or `null`. */
  toolkits: string[] | null;
  /** Markdown instructions for the model, or `null`. */
  instructions: string | null;
  /** The file it was loaded from, or `null`. */
  filePath: string | null;
  /** The LLM provider it uses (no credentials), or `null`. */
  llmConfig: LlmChoice | null;
  /** A free-form grouping, or `null`. */
  category: string | null;
  /** Free-form labels, or `null`. */
  tags: string[] | null;
  /** The most LLM turns a call may take, or `null`. */
  maxTurns: number | null;
  /** The longest a call may run, in seconds, or `null`. */
  timeoutSeconds: number | null;
  /** An icon for user interfaces, or `null`. */
  icon: string | null;
  /** Free-form extra data (e.g. `blocked_reason`), or `null`. */
  metadata: JsonObject | null;
  /** JSON Schema of its arguments. */
  inputSchema: JsonObject;
  /** JSON Schema of the `data` it returns. */
  outputSchema: JsonObject;
  /** The names of its arguments, in order, or `null`. */
  arguments: string[] | null;
}

/**
 * The outcome of one skill call (the wire's `SkillResult`): a tool call's
 * ({@link ToolOutcome}), the same fields but the tool's name and exit code.
 *
 * @example Rebuild the model's text from the call's events
 * ```ts
 * import { decodeSkillOutcome, type SkillOutcome } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const streamedText = (outcome: SkillOutcome): string =>
 *   outcome.events.filter((e) => e.kind === "llm.token").map((e) => String(e.data.text)).join("");
 * const outcome = decodeSkillOutcome({ success: true, duration_ms: 850, events: [
 *   { kind: "llm.started", data: { turn: 1 }, seq: 0 },
 *   { kind: "llm.token", data: { text: "Hel", turn: 1 }, seq: 1 },
 *   { kind: "llm.token", data: { text: "lo", turn: 1 }, seq: 2 },
 * ] });
 * assert.equal(streamedText(outcome), "Hello");
 * assert.equal(outcome.errorCode, null);
 * ```
 */
export type SkillOutcome = Omit<ToolOutcome, "toolName" | "exitCode">;

/**
 * Which LLM provider a skill uses, and how, as on the wire (§6).
 *
 * @example Send an LLM override as the Python SDK does
 * ```ts
 * import type { LLMConfig } from "./skill.ts";
 * import { parseMessage } from "./request_schemas.ts";
 * import assert from "node:assert/strict";
 * const override: LLMConfig = { provider_name: "openai", provider_credentials: { api_key: "sk-test" },
 *   provider_config: false, is_default: false };
 * const parsed = parseMessage(JSON.stringify({ type: "skill/call/req", id: "s1", name: "draft",
 *   llm_override: override }));
 * assert.ok(parsed.ok && parsed.request.type === "skill/call/req");
 * assert.equal(parsed.request.llmOverride?.providerName, "openai");
 * assert.deepEqual(parsed.request.llmOverride?.providerCredentials, { api_key: "sk-test" });
 * ```
 */
export type LLMConfig = Wire<LlmChoice>;

/**
 * A skill as discovered by agents, as on the wire (§6).
 *
 * @example What a bare definition carries on the wire
 * ```ts
 * import { type SkillDefinition, skillDefinition } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const def: SkillDefinition = skillDefinition({ name: "notes", description: "Take notes", max_turns: 4 });
 * assert.equal(def.max_turns, 4);
 * assert.equal(def.status, "Published");
 * assert.equal(def.source, "system");
 * assert.equal(def.llm_config, null);
 * ```
 */
export type SkillDefinition = Wire<Skill>;

/**
 * The outcome of a skill call as on the wire (§6).
 *
 * @example Read a failure in its wire form
 * ```ts
 * import { encodeSkillOutcome, skillOutcome, type SkillResult } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const failure = (result: SkillResult): string | null =>
 *   result.success ? null : `${result.error_code}: ${result.error}`;
 * const wire = encodeSkillOutcome(skillOutcome({ success: false, durationMs: 4000,
 *   errorCode: "max_turns_exceeded", error: "Stopped after 10 turns" }));
 * assert.equal(failure(wire), "max_turns_exceeded: Stopped after 10 turns");
 * assert.deepEqual(wire.events, []);
 * ```
 */
export type SkillResult = Wire<SkillOutcome>;

/**
 * Completes a skill outcome with the A2E defaults.
 *
 * @param fields at least `success` and `durationMs`
 * @returns the outcome, every field present
 * @example A success
 * ```ts
 * import { skillOutcome } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const o = skillOutcome({ success: true, durationMs: 12, data: { rows: 3 } });
 * assert.equal(o.errorCode, null);
 * ```
 */
export function skillOutcome(
  fields: Pick<SkillOutcome, "success" | "durationMs"> & Partial<SkillOutcome>,
): SkillOutcome {
  // The decoder fills the wire defaults.
  return { ...decodeSkillOutcome({}), ...fields };
}

/**
 * Completes a skill definition with A2E's defaults.
 *
 * @param fields at least `name` and `description`
 * @returns a definition with every required field present
 * @example Fill defaults
 * ```ts
 * import { skillDefinition } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const s = skillDefinition({ name: "x", description: "d" });
 * assert.equal(s.status, "Published");
 * assert.deepEqual(s.input_schema, {});
 * ```
 */
export function skillDefinition(
  fields:
    & Pick<SkillDefinition, "name" | "description">
    & Partial<SkillDefinition>,
): SkillDefinition {
  // The decoder fills the wire defaults; encoding gives the wire form back.
  return encodeSkill(decodeSkill(fields));
}

/**
 * Encodes an LLM choice as the wire's `LLMConfig`.
 *
 * @param choice the choice
 * @returns the wire config
 * @example
 * ```ts
 * import { encodeLlmChoice } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeLlmChoice({ providerName: "openai", providerCredentials: {},
 *   providerConfig: false, isDefault: false });
 * assert.equal(wire.provider_name, "openai");
 * ```
 */
export const encodeLlmChoice: (choice: LlmChoice) => LLMConfig = wireEncoder(
  decodeLlmChoice({}),
);

// The wire fields of each type are the ones its decoder fills (the
// compiler checks each decoder against its type): skill records carry more.
const encodeSkillFields = wireEncoder(decodeSkill({}));

/**
 * Encodes a skill outcome as the wire's `SkillResult`.
 *
 * @param outcome the outcome
 * @returns the wire result
 * @example
 * ```ts
 * import { encodeSkillOutcome, skillOutcome } from "./skill.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeSkillOutcome(skillOutcome({ success: true, durationMs: 4 })).duration_ms, 4);
 * ```
 */
export const encodeSkillOutcome: (outcome: SkillOutcome) => SkillResult =
  wireEncoder(decodeSkillOutcome({}));

/**
 * Decodes a wire `LLMConfig`.
 *
 * @param wire the config as received
 * @returns the choice, defaults filled
 * @example
 * ```ts
 * import { decodeLlmChoice } from "./skill.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeLlmChoice({ provider_name: "anthropic" }).providerConfig, false);
 * ```
 */
export function decodeLlmChoice(wire: JsonObject): LlmChoice {
  const config = wire.provider_config;
  return {
    providerName: str(wire.provider_name),
    providerCredentials: isPlainObject(wire.provider_credentials)
      ? wire.provider_credentials
      : {},
    providerConfig: isPlainObject(config) || config === null ? config : false,
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
 * import { encodeSkill, decodeSkill } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const skill = decodeSkill({ name: "notes", description: "Notes", when_to_use: "Often" });
 * assert.equal(encodeSkill(skill).when_to_use, "Often");
 * ```
 */
export function encodeSkill(skill: Skill): SkillDefinition {
  const wire = encodeSkillFields(skill);
  // The one nested camelCase object of a skill.
  wire.llm_config = skill.llmConfig && encodeLlmChoice(skill.llmConfig);
  return wire;
}

/**
 * Decodes a wire `SkillDefinition`.
 *
 * @param wire the definition as received
 * @returns the skill, defaults filled
 * @example
 * ```ts
 * import { decodeSkill } from "./skill.ts";
 * import assert from "node:assert/strict";
 * const s = decodeSkill({ name: "x", description: "d", max_turns: 3 });
 * assert.equal(s.status, "Published");
 * assert.equal(s.maxTurns, 3);
 * ```
 */
export function decodeSkill(wire: JsonObject): Skill {
  // Compared with ===, so only the string itself is a status (String() of
  // ["Blocked"] is "Blocked" too).
  const status = SKILL_STATUSES.find((known) => known === wire.status) ??
    "Published";
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
    llmConfig: isPlainObject(wire.llm_config)
      ? decodeLlmChoice(wire.llm_config)
      : null,
    category: nullableStr(wire.category),
    tags: nullableStrings(wire.tags),
    maxTurns: typeof wire.max_turns === "number" ? wire.max_turns : null,
    timeoutSeconds: typeof wire.timeout_seconds === "number"
      ? wire.timeout_seconds
      : null,
    icon: nullableStr(wire.icon),
    metadata: isPlainObject(wire.metadata) ? wire.metadata : null,
    inputSchema: isPlainObject(wire.input_schema) ? wire.input_schema : {},
    outputSchema: isPlainObject(wire.output_schema) ? wire.output_schema : {},
    arguments: nullableStrings(wire.arguments),
  };
}

/**
 * Decodes a wire `SkillResult`.
 *
 * @param wire the result as received
 * @returns the outcome, defaults filled
 * @example
 * ```ts
 * import { decodeSkillOutcome } from "./skill.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeSkillOutcome({ success: false, error_code: "max_turns_exceeded" }).errorCode, "max_turns_exceeded");
 * ```
 */
export function decodeSkillOutcome(wire: JsonObject): SkillOutcome {
  const { toolName: _name, exitCode: _code, ...outcome } = decodeToolOutcome(
    wire,
  );
  return outcome;
}
