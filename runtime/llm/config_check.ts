/**
 * The shape of one LLM configuration (the wire's `LLMConfig`) and the check
 * that names the faulty field. Used for `skillbox.jsonc`'s `llm: [...]`, a
 * skill's `llm_config` and a call's `llm_override` alike.
 *
 * @module
 */

import { SchemaViolationError } from "../../protocol/errors.ts";
import { isPlainObject } from "../../protocol/json.ts";

/** The providers skillbox speaks. */
export const LLM_PROVIDERS: readonly ["openai", "anthropic"] = [
  "openai",
  "anthropic",
];

/** A provider skillbox speaks. */
export type LlmProviderName = typeof LLM_PROVIDERS[number];

/**
 * An LLM configuration as written in `skillbox.jsonc`, a skill, or a call
 * (the wire's `LLMConfig`, with every field but `provider_name` optional).
 */
export interface LlmConfig {
  /** `openai` (any Chat Completions server) or `anthropic`. */
  provider_name: string;
  /**
   * `{api_key}` literally, or `{api_key_env}` naming an environment variable
   * (host config only). Omitted: the host's credentials for the provider.
   */
  provider_credentials?: Record<string, unknown> | null;
  /**
   * `base_url`, `model`, `max_tokens`, `temperature`, `max_retries` (SDK
   * retries on 429/5xx, default 0). Omitted fields come from the host's
   * entry for the same provider. `false` (the Python SDK's default) = `{}`.
   */
  provider_config?: Record<string, unknown> | false | null;
  /** The host's default provider. @default false */
  is_default?: boolean;
}

/**
 * Checks the shape of one configuration, naming the faulty field.
 *
 * @param value the configuration as parsed from JSON(C), YAML or the wire
 * @param where the field path to name in errors (`llm[0]`, `llm_override`)
 * @returns the value, typed
 * @throws {SchemaViolationError} naming the field and what was expected
 * @example A negative max_tokens is named by its path
 * ```ts
 * import { checkLlmConfig } from "./config_check.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkLlmConfig({ provider_name: "openai", provider_config: { max_tokens: -1 } }, "llm[0]"),
 *   /llm\[0\]\.provider_config\.max_tokens/,
 * );
 * ```
 */
export function checkLlmConfig(value: unknown, where: string): LlmConfig {
  if (!isPlainObject(value)) fail(where, "expected an object");
  checkLlmConfigFields(value as unknown as LlmConfig, where);
  return value as unknown as LlmConfig;
}

/**
 * Checks the fields of a configuration already typed as one (the caller
 * vouches that it is an object).
 *
 * @param config the configuration
 * @param where the field path to name in errors
 * @throws {SchemaViolationError} naming the field and what was expected
 * @example An unknown provider
 * ```ts
 * import { checkLlmConfigFields } from "./config_check.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkLlmConfigFields({ provider_name: "gemini" }, "llm_override"),
 *   /^SchemaViolationError: llm_override\.provider_name/,
 * );
 * ```
 */
export function checkLlmConfigFields(config: LlmConfig, where: string): void {
  if (!(LLM_PROVIDERS as readonly string[]).includes(config.provider_name)) {
    fail(
      `${where}.provider_name`,
      `expected one of ${
        LLM_PROVIDERS.map((p) => `"${p}"`).join(", ")
      } (use "openai" with base_url for compatible servers), got ${
        JSON.stringify(config.provider_name)
      }`,
    );
  }
  checkCredentials(config.provider_credentials, where);
  const pc = config.provider_config;
  if (pc === undefined || pc === null || pc === false) return;
  if (!isPlainObject(pc)) {
    fail(`${where}.provider_config`, "expected an object");
  }
  checkProviderConfig(pc, (key) => `${where}.provider_config.${key}`);
}

/**
 * The provider settings of a configuration: `provider_config`, with `false`
 * and `null` read as `{}`.
 *
 * @param config the configuration
 * @returns its settings (never a copy: do not mutate)
 * @example `false` is the Python SDK's "none"
 * ```ts
 * import { providerConfigOf } from "./config_check.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(providerConfigOf({ provider_name: "openai", provider_config: false }), {});
 * ```
 */
export function providerConfigOf(config: LlmConfig): Record<string, unknown> {
  return config.provider_config || {};
}

function checkCredentials(credentials: unknown, where: string): void {
  if (credentials === undefined || credentials === null) return;
  if (!isPlainObject(credentials)) {
    fail(`${where}.provider_credentials`, "expected an object");
  }
  for (const key of ["api_key", "api_key_env"]) {
    if (key in credentials && typeof credentials[key] !== "string") {
      fail(`${where}.provider_credentials.${key}`, "expected a string");
    }
  }
}

function checkProviderConfig(
  pc: Record<string, unknown>,
  at: (key: string) => string,
): void {
  if (pc.base_url !== undefined) {
    if (typeof pc.base_url !== "string" || !URL.canParse(pc.base_url)) {
      fail(at("base_url"), "expected an http(s) URL");
    }
  }
  if (pc.model !== undefined && typeof pc.model !== "string") {
    fail(at("model"), "expected a string");
  }
  if (
    pc.max_tokens !== undefined &&
    !(Number.isInteger(pc.max_tokens) && (pc.max_tokens as number) > 0)
  ) {
    fail(at("max_tokens"), "expected a positive integer");
  }
  if (
    pc.temperature !== undefined &&
    !(typeof pc.temperature === "number" && pc.temperature >= 0 &&
      pc.temperature <= 2)
  ) {
    fail(at("temperature"), "expected a number from 0 to 2");
  }
  if (
    pc.max_retries !== undefined &&
    !(Number.isInteger(pc.max_retries) && (pc.max_retries as number) >= 0)
  ) {
    fail(at("max_retries"), "expected a non-negative integer");
  }
}

function fail(path: string, problem: string): never {
  throw new SchemaViolationError(`${path}: ${problem}`, {
    detail: { field: path },
  });
}
