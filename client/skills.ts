/**
 * The skills capability as the client sees it (A2E-WIRE.md §6), named after
 * the Python SDK's `SkillAPI`.
 *
 * @module
 */

import type { JsonObject } from "../protocol/json.ts";
import type { LLMConfig, Skill, SkillOutcome } from "../protocol/skill.ts";
import type { Call, RequestOptions, StreamingRequestOptions } from "./types.ts";

/**
 * Options of {@link SkillAPI.discover} (`skill/discover/req`).
 *
 * @example Discover the code review skills
 * ```ts
 * import type { SkillAPI } from "./skills.ts";
 *
 * async function reviewSkills(skills: SkillAPI): Promise<string[]> {
 *   // Sent as filter_categories and filter_tags.
 *   const found = await skills.discover({
 *     categories: ["code"],
 *     tags: ["review"],
 *   });
 *   return found.map((skill) => skill.name);
 * }
 * ```
 */
export interface DiscoverSkillsOptions extends RequestOptions {
  /** Only skills carrying these tags. @default [] */
  tags?: string[];
  /** Only skills in these categories. @default [] */
  categories?: string[];
}

/**
 * An LLM override: provider name and credentials, the rest defaulted.
 *
 * @example Run a skill with another model
 * ```ts
 * import type { LlmOverride, SkillAPI } from "./skills.ts";
 * import type { SkillOutcome } from "../protocol/skill.ts";
 *
 * async function findTodos(
 *   skills: SkillAPI,
 *   apiKey: string,
 * ): Promise<SkillOutcome> {
 *   // Sent as `llm_override`, with `is_default: false` filled in.
 *   const llmOverride: LlmOverride = {
 *     provider_name: "anthropic",
 *     provider_credentials: { api_key: apiKey },
 *     provider_config: { model: "claude-sonnet-4-5", max_tokens: 2048 },
 *   };
 *   return await skills.call("find-todos", { path: "src" }, { llmOverride });
 * }
 * ```
 */
export type LlmOverride =
  & Pick<LLMConfig, "provider_name" | "provider_credentials">
  & Partial<LLMConfig>;

/**
 * Options of {@link SkillAPI.call} (`skill/call/req`).
 *
 * @example Run a skill for up to 90 seconds, with metadata
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { SkillOutcome } from "../protocol/skill.ts";
 *
 * async function triage(client: Client): Promise<SkillOutcome> {
 *   // The host gets `timeout: 90` (whole seconds), `metadata` and
 *   // `correlation_id`; without `llmOverride`, the skill uses its own LLM.
 *   return await client.skills.call("find-todos", { path: "src" }, {
 *     timeout: 90_000,
 *     metadata: { ticket: "OPS-12" },
 *     correlationId: "triage-1",
 *   });
 * }
 * ```
 */
export interface CallSkillOptions extends StreamingRequestOptions {
  /**
   * The skill's time limit in milliseconds. The host gets it rounded up to
   * whole seconds; the client waits this long plus the connection's
   * `timeoutGrace` for the host's answer before failing locally.
   * @default 60000
   */
  timeout?: number;
  /** Ask the host to send events as they happen. @default true */
  streaming?: boolean;
  /** Run the skill with this LLM instead of its own (wire `llm_override`). @default null */
  llmOverride?: LlmOverride | null;
  /** Free-form metadata passed to the skill. @default {} */
  metadata?: JsonObject;
  /** An id of the caller's choosing, echoed in logs. @default "" */
  correlationId?: string;
}

/**
 * Discovers and runs skills. Results are camelCase domain objects, decoded
 * by the protocol codec.
 *
 * @example Run a skill and watch its tokens
 * ```ts
 * import type { SkillAPI } from "./skills.ts";
 *
 * async function summarize(skills: SkillAPI, text: string): Promise<string> {
 *   let streamed = "";
 *   const result = await skills.call("summarize", { text }, {
 *     onEvent: (event) => {
 *       if (event.kind === "llm.token") streamed += String(event.data.text ?? "");
 *     },
 *   });
 *   return result.success ? String(result.data) : streamed;
 * }
 * ```
 */
export interface SkillAPI {
  /**
   * Lists the skills this host offers (`skill/discover/req`).
   *
   * @param options filters, see {@link DiscoverSkillsOptions}
   * @returns the skill definitions (never with LLM credentials)
   * @throws {SkillboxError} the host's `error`
   */
  discover(options?: DiscoverSkillsOptions): Promise<Skill[]>;
  /**
   * Runs a skill (`skill/call/req`). A skill that runs and fails resolves
   * with `success: false`; when the host answers with `data: null`, the
   * result is built from its `error` object. An unknown skill rejects with a
   * `SkillboxError` (`unknown_skill`).
   *
   * @param name the skill's name
   * @param args the skill's arguments
   * @param options events, limits and cancellation, see {@link CallSkillOptions}
   * @returns the call: await it for the {@link SkillOutcome}, iterate `events`
   */
  call(
    name: string,
    args?: JsonObject,
    options?: CallSkillOptions,
  ): Call<SkillOutcome>;
}
