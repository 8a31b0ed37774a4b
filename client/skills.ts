/**
 * The skills capability as the client sees it (A2E-WIRE.md §6), named after
 * the Python SDK's `SkillAPI`.
 *
 * @module
 */

import type { JsonObject } from "../protocol/json.ts";
import type { LLMConfig, Skill, SkillOutcome } from "../protocol/skill.ts";
import type { Call, RequestOptions, StreamingRequestOptions } from "./types.ts";

/** Options of {@link SkillAPI.discover} (`skill/discover/req`). */
export interface DiscoverSkillsOptions extends RequestOptions {
  /** Only skills carrying these tags. @default [] */
  tags?: string[];
  /** Only skills in these categories. @default [] */
  categories?: string[];
}

/** An LLM override: provider name and credentials, the rest defaulted. */
export type LlmOverride =
  & Pick<LLMConfig, "provider_name" | "provider_credentials">
  & Partial<LLMConfig>;

/** Options of {@link SkillAPI.call} (`skill/call/req`). */
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
