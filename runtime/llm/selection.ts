/**
 * Which LLM configuration applies to a call: the call's `llm_override`, else
 * the skill's `llm_config`, else the host's default; and which host entry
 * fills in what the chosen one leaves out.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { LlmConfig, LlmProviderName } from "./config_check.ts";

/** Where the applied configuration came from. */
export type LlmConfigSource = "llm_override" | "llm_config" | "llm";

/** The configuration chosen for a call, and the host entry behind it. */
export interface LlmSelection {
  /** The configuration that applies, as written. */
  chosen: LlmConfig;
  /** `llm_override` (the call), `llm_config` (the skill) or `llm` (host). */
  source: LlmConfigSource;
  /** The chosen configuration's provider (already checked). */
  provider: LlmProviderName;
  /**
   * The host's entry for that provider (the chosen one itself when it came
   * from the host), whose credentials and settings fill the gaps; undefined
   * when the host has none.
   */
  hostEntry: LlmConfig | undefined;
}

/**
 * Picks the configuration for one call, and the host entry for its provider
 * (the default one for that provider first).
 *
 * @param host the `llm` entries of `skillbox.jsonc`, already checked
 * @param options the call's `override` and the skill's `skill` configuration
 * @returns the chosen configuration, where it came from, and its host entry
 * @throws {SkillboxError} `skill_error` when nothing is chosen and the host
 * has no entry, or several and none is the default
 * @example The skill's config beats the host default
 * ```ts
 * import { selectLlmConfig } from "./selection.ts";
 * import assert from "node:assert/strict";
 * const host = [
 *   { provider_name: "openai", is_default: true },
 *   { provider_name: "anthropic" },
 * ];
 * const picked = selectLlmConfig(host, { skill: { provider_name: "anthropic" } });
 * assert.equal(picked.source, "llm_config");
 * assert.equal(picked.hostEntry, host[1]);
 * ```
 */
export function selectLlmConfig(
  host: readonly LlmConfig[],
  options: { override?: LlmConfig | null; skill?: LlmConfig | null },
): LlmSelection {
  const [chosen, source]: [LlmConfig, LlmConfigSource] = options.override
    ? [options.override, "llm_override"]
    : options.skill
    ? [options.skill, "llm_config"]
    : [hostDefault(host), "llm"];
  const provider = chosen.provider_name as LlmProviderName;
  const hostEntry = source === "llm"
    ? chosen
    : host.find((e) => e.provider_name === provider && e.is_default) ??
      host.find((e) => e.provider_name === provider);
  return { chosen, source, provider, hostEntry };
}

/**
 * The host's default entry: the one with `is_default`, else the only one.
 *
 * @param host the `llm` entries of `skillbox.jsonc`
 * @returns the default entry
 * @throws {SkillboxError} `skill_error` naming what to set when there is no
 * entry, or several and none is the default
 * @example The only entry needs no flag
 * ```ts
 * import { hostDefault } from "./selection.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostDefault([{ provider_name: "anthropic" }]).provider_name, "anthropic");
 * assert.throws(() => hostDefault([]), /No LLM provider configured/);
 * ```
 */
export function hostDefault(host: readonly LlmConfig[]): LlmConfig {
  const marked = host.find((e) => e.is_default === true);
  if (marked) return marked;
  if (host.length === 1) return host[0]!;
  if (host.length === 0) {
    throw new SkillboxError(
      "skill_error",
      'No LLM provider configured: add an entry to "llm" in skillbox.jsonc (e.g. {"provider_name": "openai", "provider_credentials": {"api_key_env": "OPENAI_API_KEY"}, "provider_config": {"model": "gpt-4o-mini"}, "is_default": true}), or give the skill "llm_config" or the call "llm_override"',
    );
  }
  throw new SkillboxError(
    "skill_error",
    `Cannot pick an LLM provider: skillbox.jsonc "llm" has ${host.length} entries and none sets "is_default": true`,
  );
}
