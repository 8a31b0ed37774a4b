/**
 * What of an LLM configuration a client may see: no credentials, only the
 * known provider settings, and a `base_url` without userinfo or query.
 *
 * @module
 */

import type { LLMConfig } from "../../protocol/skill.ts";
import { redactUrl } from "./base_url.ts";
import type { LlmConfig } from "./config_check.ts";

/** Provider config keys that are safe to show a client. */
const PUBLIC_CONFIG_KEYS = [
  "base_url",
  "model",
  "max_tokens",
  "temperature",
  "max_retries",
] as const;

/**
 * A copy of a configuration that is safe to send to a client: no
 * credentials at all, only the known provider settings, and no userinfo or
 * query string in `base_url`.
 *
 * @param config any LLM configuration
 * @returns a complete wire `LLMConfig` with `provider_credentials: {}`
 * @example Secrets never leave
 * ```ts
 * import { redactLlmConfig } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const safe = redactLlmConfig({
 *   provider_name: "openai",
 *   provider_credentials: { api_key: "sk-secret" },
 *   provider_config: { model: "gpt-4o-mini", base_url: "https://u:p@x.test/v1?key=1" },
 * });
 * assert.deepEqual(safe.provider_credentials, {});
 * assert.equal(safe.provider_config && safe.provider_config.base_url, "https://x.test/v1");
 * assert.ok(!JSON.stringify(safe).includes("secret"));
 * ```
 */
export function redactLlmConfig(config: LlmConfig): LLMConfig {
  const source = config.provider_config || {};
  const providerConfig: Record<string, unknown> = {};
  for (const key of PUBLIC_CONFIG_KEYS) {
    const value = source[key];
    if (value === undefined) continue;
    providerConfig[key] = key === "base_url" && typeof value === "string"
      ? redactUrl(value)
      : value;
  }
  return {
    provider_name: String(config.provider_name),
    provider_credentials: {},
    provider_config: providerConfig,
    is_default: config.is_default === true,
  };
}
