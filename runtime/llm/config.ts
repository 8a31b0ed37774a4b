/**
 * LLM configuration: one shape, the wire's `LLMConfig`, serves
 * `skillbox.jsonc`'s `llm: [...]`, a skill's `llm_config` and a call's
 * `llm_override`. This module picks which applies, fills credentials from the
 * host, redacts configs before they reach a client, and builds providers.
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
 * Trust: only `skillbox.jsonc` (the host) may name environment variables.
 * A skill's `llm_config` or a call's `llm_override` either brings a literal
 * `api_key`, or borrows the host's credentials for its `provider_name`; a
 * borrowed key is only ever sent to the host's `base_url` for that provider,
 * so a client cannot redirect the host's key to a server of its choosing.
 *
 * @module
 */

import { SchemaViolationError, SkillboxError } from "../../protocol/errors.ts";
import type { LLMConfig } from "../../protocol/models.ts";

export type { LLMConfig } from "../../protocol/models.ts";
import { createAnthropicProvider } from "./anthropic.ts";
import { createOpenAiProvider } from "./openai.ts";
import type { LlmProvider } from "./provider.ts";

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

/** Where the applied configuration came from. */
export type LlmConfigSource = "llm_override" | "llm_config" | "llm";

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

/** The variable each provider's own tools read when nothing is configured. */
const CONVENTIONAL_ENV: Record<LlmProviderName, string> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

/** Provider config keys that are safe to show a client. */
const PUBLIC_CONFIG_KEYS = [
  "base_url",
  "model",
  "max_tokens",
  "temperature",
  "max_retries",
] as const;

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
  const env = options.env ?? readEnv;
  host.forEach((entry, i) => checkConfig(entry, `llm[${i}]`));
  if (options.override) checkConfig(options.override, "llm_override");
  if (options.skill) checkConfig(options.skill, "llm_config");

  const [chosen, source]: [LlmConfig, LlmConfigSource] = options.override
    ? [options.override, "llm_override"]
    : options.skill
    ? [options.skill, "llm_config"]
    : [hostDefault(host), "llm"];
  const provider = chosen.provider_name as LlmProviderName;
  const own = configOf(chosen);
  const hostEntry = source === "llm"
    ? chosen
    : host.find((e) => e.provider_name === provider && e.is_default) ??
      host.find((e) => e.provider_name === provider);
  const merged = { ...(hostEntry ? configOf(hostEntry) : {}), ...own };
  const baseUrl = merged.base_url as string | undefined;

  const ownCredentials = chosen.provider_credentials ?? {};
  let apiKey: string | undefined;
  if (source !== "llm" && typeof ownCredentials.api_key === "string") {
    apiKey = ownCredentials.api_key; // brought by the caller, used as given
  } else {
    if (source !== "llm" && "api_key_env" in ownCredentials) {
      throw new SkillboxError(
        "skill_error",
        `Cannot use "api_key_env" in ${source}: only skillbox.jsonc may name environment variables; give "api_key" or omit "provider_credentials" to use the host's`,
        { detail: { provider } },
      );
    }
    apiKey = hostKey(provider, hostEntry, env);
    // A borrowed host key only goes where the host sends it.
    const hostBase = hostEntry ? configOf(hostEntry).base_url : undefined;
    if (
      apiKey && source !== "llm" && own.base_url !== undefined &&
      normalizeUrl(provider, own.base_url as string) !==
        normalizeUrl(provider, hostBase as string | undefined)
    ) {
      throw new SkillboxError(
        "skill_error",
        `Cannot send the host's "${provider}" credentials to base_url "${
          safeUrl(own.base_url as string)
        }" from ${source}: give "provider_credentials.api_key" or use the host's base_url`,
        { detail: { provider } },
      );
    }
  }
  if (!apiKey) {
    // Local compatible servers (Ollama, llama.cpp) take any key.
    if (baseUrl === undefined) throw missingKeyError(provider, hostEntry);
    apiKey = "";
  }

  const model = merged.model as string | undefined;
  if (!model) {
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${provider}" has no model: set "provider_config": {"model": "..."} on its entry in skillbox.jsonc "llm" (or in ${source})`,
      { detail: { provider } },
    );
  }
  return {
    provider,
    model,
    baseUrl,
    apiKey,
    maxTokens: merged.max_tokens as number | undefined,
    temperature: merged.temperature as number | undefined,
    maxRetries: (merged.max_retries as number | undefined) ?? 0,
    source,
  };
}

/**
 * A copy of a configuration that is safe to send to a client: no
 * credentials at all, only the known provider settings, and no userinfo or
 * query string in `base_url`.
 *
 * @param config any LLM configuration
 * @returns a complete wire `LLMConfig` with `provider_credentials: {}`
 * @example
 * ```ts
 * import { redactLlmConfig } from "./config.ts";
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
      ? safeUrl(value)
      : value;
  }
  return {
    provider_name: String(config.provider_name),
    provider_credentials: {},
    provider_config: providerConfig,
    is_default: config.is_default === true,
  };
}

/**
 * Builds the provider for a resolved configuration.
 *
 * @param config from {@link resolveLlmConfig}
 * @returns an {@link LlmProvider} that streams each turn
 * @example
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
export function createProvider(config: ResolvedLlmConfig): LlmProvider {
  const options = {
    // The SDKs refuse an empty key; keyless local servers ignore this one.
    apiKey: config.apiKey || "no-key",
    model: config.model,
    baseUrl: config.baseUrl,
    maxTokens: config.maxTokens,
    temperature: config.temperature,
    maxRetries: config.maxRetries,
  };
  switch (config.provider) {
    case "openai":
      return createOpenAiProvider(options);
    case "anthropic":
      return createAnthropicProvider(options);
  }
}

/**
 * Checks the shape of one configuration, naming the faulty field.
 *
 * @param value the configuration as parsed from JSON(C), YAML or the wire
 * @param where the field path to name in errors (`llm[0]`, `llm_override`)
 * @returns the value, typed
 * @throws {SchemaViolationError} naming the field and what was expected
 * @example
 * ```ts
 * import { checkLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkLlmConfig({ provider_name: "openai", provider_config: { max_tokens: -1 } }, "llm[0]"),
 *   /llm\[0\]\.provider_config\.max_tokens/,
 * );
 * ```
 */
export function checkLlmConfig(value: unknown, where: string): LlmConfig {
  if (!isObject(value)) fail(where, "expected an object");
  checkConfig(value as unknown as LlmConfig, where);
  return value as unknown as LlmConfig;
}

function checkConfig(config: LlmConfig, where: string): void {
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
  const credentials = config.provider_credentials;
  if (credentials !== undefined && credentials !== null) {
    if (!isObject(credentials)) {
      fail(`${where}.provider_credentials`, "expected an object");
    }
    for (const key of ["api_key", "api_key_env"]) {
      if (key in credentials && typeof credentials[key] !== "string") {
        fail(`${where}.provider_credentials.${key}`, "expected a string");
      }
    }
  }
  const pc = config.provider_config;
  if (pc === undefined || pc === null || pc === false) return;
  if (!isObject(pc)) fail(`${where}.provider_config`, "expected an object");
  const at = (key: string) => `${where}.provider_config.${key}`;
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

function hostDefault(host: readonly LlmConfig[]): LlmConfig {
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

function configOf(config: LlmConfig): Record<string, unknown> {
  return config.provider_config || {};
}

/** The key the host holds for a provider: its entry, else the usual variable. */
function hostKey(
  provider: LlmProviderName,
  entry: LlmConfig | undefined,
  env: (name: string) => string | undefined,
): string | undefined {
  const credentials = entry?.provider_credentials ?? {};
  if (typeof credentials.api_key === "string") return credentials.api_key;
  if (typeof credentials.api_key_env === "string") {
    const value = env(credentials.api_key_env);
    if (!value) {
      throw new SkillboxError(
        "skill_error",
        `LLM provider "${provider}" has no API key: environment variable "${credentials.api_key_env}" (its api_key_env in skillbox.jsonc) is not set`,
        { detail: { provider } },
      );
    }
    return value;
  }
  return env(CONVENTIONAL_ENV[provider]) || undefined;
}

function missingKeyError(
  provider: LlmProviderName,
  entry: LlmConfig | undefined,
): SkillboxError {
  const where = entry ? "its entry" : "an entry";
  return new SkillboxError(
    "skill_error",
    `LLM provider "${provider}" has no API key: set "provider_credentials": {"api_key_env": "${
      CONVENTIONAL_ENV[provider]
    }"} on ${where} in skillbox.jsonc "llm", or set ${
      CONVENTIONAL_ENV[provider]
    }`,
    { detail: { provider } },
  );
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env for it: treat as unset
  }
}

const OFFICIAL_BASE_URLS: Record<LlmProviderName, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

function normalizeUrl(provider: LlmProviderName, url: string | undefined) {
  return (url ?? OFFICIAL_BASE_URLS[provider]).replace(/\/+$/, "");
}

/** Drops userinfo, query and fragment: places secrets hide in URLs. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.href.replace(/\/$/, u.pathname === "/" ? "" : "/");
  } catch {
    return "";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
