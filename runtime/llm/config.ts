/**
 * LLM configuration: one shape, the wire's `LLMConfig`, serves
 * `skillbox.jsonc`'s `llm: [...]`, a skill's `llm_config` and a call's
 * `llm_override`. This module resolves which applies into something a
 * provider can be built from, and builds it; the pieces live beside it:
 * `config_check.ts` (the shape and its check), `selection.ts` (which
 * configuration applies), `credentials.ts` (where the key comes from and may
 * go), `redact.ts` (what a client may see).
 *
 * ```jsonc
 * "llm": [{
 *   "provider_name": "openai",            // or "anthropic"
 *   "provider_credentials": { "api_key_env": "OPENAI_API_KEY" },
 *   "provider_config": { "base_url": "http://127.0.0.1:11434/v1", "model": "llama3.2" },
 *   "is_default": true
 * }]
 * ```
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import { createAnthropicProvider } from "./anthropic.ts";
import {
  checkLlmConfigFields,
  type LlmConfig,
  type LlmProviderName,
  providerConfigOf,
} from "./config_check.ts";
import { readEnv, resolveApiKey } from "./credentials.ts";
import { createOpenAiProvider } from "./openai.ts";
import type { LlmProvider } from "./provider.ts";
import { type LlmConfigSource, selectLlmConfig } from "./selection.ts";
import { OFFICIAL_BASE_URLS, sameBaseUrl } from "./base_url.ts";
import { checkChosenEndpoint, llmFetch } from "./llm_fetch.ts";
import { DEFAULT_LLM_RULES, type LlmRules } from "./rules.ts";
import { EgressBroker } from "../egress/broker.ts";

export type { LLMConfig } from "../../protocol/skill.ts";
export {
  checkLlmConfig,
  LLM_PROVIDERS,
  type LlmConfig,
  type LlmProviderName,
} from "./config_check.ts";
export { redactLlmConfig } from "./redact.ts";
export type { LlmConfigSource } from "./selection.ts";
export { DEFAULT_LLM_RULES, type LlmRules } from "./rules.ts";

/**
 * A configuration ready to build a provider from. Holds the API key: keep it
 * in the host, never log or send it.
 */
export interface ResolvedLlmConfig {
  /** Which API to speak. */
  provider: LlmProviderName;
  /** The model every turn uses. */
  model: string;
  /** Undefined: the provider's official API. */
  baseUrl: string | undefined;
  /** The secret. Empty only for a custom `base_url` with no key at all. */
  apiKey: string;
  /** Default `max_tokens` of each turn (a request may set its own). */
  maxTokens: number | undefined;
  /** Default temperature of each turn (a request may set its own). */
  temperature: number | undefined;
  /** Retries the SDK makes on 429/5xx/connection errors (default 0). */
  maxRetries: number;
  /** `llm_override` (the call), `llm_config` (the skill) or `llm` (host). */
  source: LlmConfigSource;
  /**
   * Whether the endpoint is one the operator configured (an `llm` entry of
   * this provider with this `base_url`); otherwise a client or a skill
   * chose it, and it goes through the egress rules and `llm.allowed_hosts`.
   */
  operatorEndpoint: boolean;
}

/** Options of {@link resolveLlmConfig}. */
export interface ResolveLlmOptions {
  /** The call's `llm_override`. @default null */
  override?: LlmConfig | null;
  /** The skill's `llm_config`. @default null */
  skill?: LlmConfig | null;
  /** Reads an environment variable. @default `Deno.env.get` (undefined when not permitted) */
  env?: (name: string) => string | undefined;
}

/**
 * Picks the configuration for one LLM call: the call's `llm_override`, else
 * the skill's `llm_config`, else the host's default (`is_default`, else its
 * only entry). Missing credentials and provider settings come from the host's
 * entry for the same `provider_name`.
 *
 * @param host the `llm` entries of `skillbox.jsonc`
 * @param options the override, the skill's config, an env reader
 * @returns the provider, model, endpoint and key to use
 * @throws {SkillboxError} `skill_error` when no provider is configured, a key
 * or model is missing, or a borrowed key would go to another `base_url`
 * @throws {SchemaViolationError} for a malformed config, naming the field
 * @example The host default, with the key from the environment
 * ```ts
 * import { resolveLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const resolved = resolveLlmConfig([{
 *   provider_name: "openai",
 *   provider_credentials: { api_key_env: "MY_KEY" },
 *   provider_config: { model: "gpt-4o-mini" },
 *   is_default: true,
 * }], { env: (name) => (name === "MY_KEY" ? "sk-test" : undefined) });
 * assert.equal(resolved.apiKey, "sk-test");
 * assert.equal(resolved.source, "llm");
 * ```
 * @example A skill naming another provider borrows the host's key for it
 * ```ts
 * import { resolveLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const host = [
 *   { provider_name: "openai", provider_credentials: { api_key: "sk-o" },
 *     provider_config: { model: "gpt-4o-mini" }, is_default: true },
 *   { provider_name: "anthropic", provider_credentials: { api_key: "sk-a" },
 *     provider_config: { model: "claude-haiku" } },
 * ];
 * const resolved = resolveLlmConfig(host, {
 *   skill: { provider_name: "anthropic", provider_config: { max_tokens: 300 } },
 * });
 * assert.equal(resolved.apiKey, "sk-a");
 * assert.equal(resolved.model, "claude-haiku");
 * assert.equal(resolved.maxTokens, 300);
 * ```
 */
export function resolveLlmConfig(
  host: readonly LlmConfig[],
  options: ResolveLlmOptions = {},
): ResolvedLlmConfig {
  host.forEach((entry, i) => checkLlmConfigFields(entry, `llm[${i}]`));
  if (options.override) checkLlmConfigFields(options.override, "llm_override");
  if (options.skill) checkLlmConfigFields(options.skill, "llm_config");

  const selection = selectLlmConfig(host, options);
  const { provider, hostEntry, source } = selection;
  const merged = {
    ...(hostEntry ? providerConfigOf(hostEntry) : {}),
    ...providerConfigOf(selection.chosen),
  };
  const baseUrl = merged.base_url as string | undefined;
  const apiKey = resolveApiKey(selection, {
    baseUrl,
    env: options.env ?? readEnv,
  });
  const model = merged.model as string | undefined;
  if (!model) {
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${provider}" has no model: set "provider_config": {"model": "..."} on its entry in skillbox.jsonc "llm" (or in ${source})`,
      { detail: { provider } },
    );
  }
  const operatorEndpoint = source === "llm" ||
    host.some((entry) =>
      entry.provider_name === provider &&
      sameBaseUrl(
        provider,
        baseUrl,
        providerConfigOf(entry).base_url as string | undefined,
      )
    );
  return {
    provider,
    model,
    baseUrl,
    apiKey,
    operatorEndpoint,
    maxTokens: merged.max_tokens as number | undefined,
    temperature: merged.temperature as number | undefined,
    maxRetries: (merged.max_retries as number | undefined) ?? 0,
    source,
  };
}

/** Options of {@link createProvider}. */
export interface CreateProviderOptions {
  /** The operator's `llm` rules. @default {@link DEFAULT_LLM_RULES} */
  rules?: LlmRules;
  /**
   * Checks every hop to an endpoint a client or a skill chose.
   * @default a broker with no private hosts allowed
   */
  broker?: Pick<EgressBroker, "checkTarget">;
}

/**
 * Builds the provider for a resolved configuration. An endpoint a client or
 * a skill chose must be in `rules.allowedHosts` (checked here, before any
 * connection) and is reached through the broker's checked fetch; every
 * provider's turns are bounded by the rules.
 *
 * @param config from {@link resolveLlmConfig}
 * @param options the rules and the broker
 * @returns an {@link LlmProvider} that streams each turn
 * @throws {SkillboxError} `tool_denied` for a chosen endpoint the operator
 * has not allowed
 * @example A chosen endpoint needs the operator's allow-list
 * ```ts
 * import { createProvider, resolveLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const chosen = resolveLlmConfig([], { override: {
 *   provider_name: "openai",
 *   provider_config: { base_url: "http://169.254.169.254/v1", model: "m" },
 * } });
 * assert.throws(() => createProvider(chosen), /Cannot use LLM endpoint "http:\/\/169\.254\.169\.254\/v1"/);
 * ```
 * @example An Anthropic provider
 * ```ts
 * import { createProvider, resolveLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const llm = createProvider(resolveLlmConfig([{
 *   provider_name: "anthropic",
 *   provider_credentials: { api_key: "sk-ant" },
 *   provider_config: { model: "claude-haiku" },
 * }]));
 * assert.equal(llm.provider, "anthropic");
 * ```
 */
export function createProvider(
  config: ResolvedLlmConfig,
  options: CreateProviderOptions = {},
): LlmProvider {
  const rules = options.rules ?? DEFAULT_LLM_RULES;
  const endpoint = config.baseUrl ?? OFFICIAL_BASE_URLS[config.provider];
  if (!config.operatorEndpoint) {
    checkChosenEndpoint(endpoint, rules.allowedHosts);
  }
  const fetch = llmFetch(endpoint, {
    // One event holds at most a turn's worth, JSON-escaped, plus framing.
    maxEventBytes: 2 * rules.maxResponseBytes + 64 * 1024,
    chosen: config.operatorEndpoint ? undefined : {
      broker: options.broker ?? new EgressBroker(),
      allowedHosts: rules.allowedHosts,
    },
  });
  const settings = {
    // The SDKs refuse an empty key; keyless local servers ignore this one.
    apiKey: config.apiKey || "no-key",
    model: config.model,
    baseUrl: config.baseUrl,
    maxTokens: config.maxTokens,
    temperature: config.temperature,
    maxRetries: config.maxRetries,
    fetch,
    limits: rules,
  };
  switch (config.provider) {
    case "openai":
      return createOpenAiProvider(settings);
    case "anthropic":
      return createAnthropicProvider(settings);
  }
}
