/**
 * Where the API key of an LLM call comes from, and where it may go.
 *
 * Trust: only `skillbox.jsonc` (the host) may name environment variables.
 * A skill's `llm_config` or a call's `llm_override` either brings a literal
 * `api_key`, or borrows the host's credentials for its `provider_name`
 * (only when the host has an entry for that provider); a borrowed key is
 * only ever sent to that entry's `base_url`, so a client cannot redirect
 * the host's key to a server of its choosing.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import { redactUrl, sameBaseUrl } from "./base_url.ts";
import { providerConfigOf } from "./config_check.ts";
import type { LlmConfig, LlmProviderName } from "./config_check.ts";
import type { LlmSelection } from "./selection.ts";

/** The variable each provider's own tools read when nothing is configured. */
const CONVENTIONAL_ENV: Record<LlmProviderName, string> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

/** Reads an environment variable; undefined when unset. */
export type EnvReader = (name: string) => string | undefined;

/**
 * The API key for a selected configuration: the caller's own literal
 * `api_key`, else the host's key for the provider (its entry, else the
 * conventional variable), else `""` for a keyless server at a custom
 * `base_url`.
 *
 * @param selection from `selectLlmConfig`
 * @param options the merged `baseUrl` of the call and an `env` reader
 * @returns the key (`""` only when the call goes to a custom `base_url`)
 * @throws {SkillboxError} `skill_error` when a client names an environment
 * variable, a borrowed host key would go to another `base_url`, or no key is
 * found for the official API
 * @example A borrowed key may not leave for another server
 * ```ts
 * import { resolveApiKey } from "./credentials.ts";
 * import assert from "node:assert/strict";
 * const hostEntry = { provider_name: "openai", provider_credentials: { api_key: "sk-host" } };
 * const chosen = { provider_name: "openai", provider_config: { base_url: "http://evil.test" } };
 * assert.throws(
 *   () => resolveApiKey(
 *     { chosen, hostEntry, source: "llm_override", provider: "openai" },
 *     { baseUrl: "http://evil.test", env: () => undefined },
 *   ),
 *   /Cannot send the host's "openai" credentials/,
 * );
 * ```
 */
export function resolveApiKey(
  selection: LlmSelection,
  options: { baseUrl: string | undefined; env: EnvReader },
): string {
  const { chosen, source, provider, hostEntry } = selection;
  const own = chosen.provider_credentials ?? {};
  let apiKey: string | undefined;
  if (source !== "llm" && typeof own.api_key === "string") {
    apiKey = own.api_key; // brought by the caller, used as given
  } else {
    if (source !== "llm" && "api_key_env" in own) {
      throw new SkillboxError(
        "skill_error",
        `Cannot use "api_key_env" in ${source}: only skillbox.jsonc may name environment variables; give "api_key" or omit "provider_credentials" to use the host's`,
        { detail: { provider } },
      );
    }
    // A client or skill borrows only a key the operator tied to an entry
    // for this provider, and only for that entry's endpoint: with no entry,
    // the environment's keys (OPENAI_API_KEY...) are not lent to anyone.
    apiKey = hostEntry
      ? hostApiKey(provider, hostEntry, options.env)
      : undefined;
    if (apiKey && source !== "llm") checkBorrowedKeyTarget(selection);
  }
  if (apiKey) return apiKey;
  // Local compatible servers (Ollama, llama.cpp) take any key.
  if (options.baseUrl === undefined) throw missingKeyError(provider, hostEntry);
  return "";
}

/**
 * The key the host holds for a provider: its entry's `api_key`, else the
 * variable its `api_key_env` names, else the provider's conventional
 * variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
 *
 * @param provider the provider
 * @param entry the host's entry for it, if any
 * @param env reads an environment variable
 * @returns the key, or undefined when the host has none
 * @throws {SkillboxError} `skill_error` when `api_key_env` names an unset variable
 * @example The conventional variable is the fallback
 * ```ts
 * import { hostApiKey } from "./credentials.ts";
 * import assert from "node:assert/strict";
 * const env = (name: string) => name === "ANTHROPIC_API_KEY" ? "sk-conv" : undefined;
 * assert.equal(hostApiKey("anthropic", undefined, env), "sk-conv");
 * ```
 */
export function hostApiKey(
  provider: LlmProviderName,
  entry: LlmConfig | undefined,
  env: EnvReader,
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

/**
 * Reads an environment variable, as unset when the process may not read it.
 *
 * @param name the variable
 * @returns its value, or undefined
 * @example
 * ```ts
 * import { readEnv } from "./credentials.ts";
 * import assert from "node:assert/strict";
 * assert.equal(readEnv("SKILLBOX_SURELY_UNSET_VARIABLE"), undefined);
 * ```
 */
export function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env for it: treat as unset
  }
}

// A borrowed host key only goes where the host sends it.
function checkBorrowedKeyTarget(selection: LlmSelection): void {
  const { chosen, source, provider, hostEntry } = selection;
  const ownBase = providerConfigOf(chosen).base_url as string | undefined;
  if (ownBase === undefined) return;
  const hostBase = hostEntry
    ? providerConfigOf(hostEntry).base_url as string | undefined
    : undefined;
  if (sameBaseUrl(provider, ownBase, hostBase)) return;
  throw new SkillboxError(
    "skill_error",
    `Cannot send the host's "${provider}" credentials to base_url "${
      redactUrl(ownBase)
    }" from ${source}: give "provider_credentials.api_key" or use the host's base_url`,
    { detail: { provider } },
  );
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
