/**
 * Which LLM provider a call gets, with what key, and what a client may see
 * of it. One shape, the wire's `LLMConfig`, serves `skillbox.jsonc`'s
 * `llm: [...]`, a skill's `llm_config` and a call's `llm_override`: this
 * module checks it (naming the faulty field), reads the operator's `llm`
 * rules, picks the configuration that applies (the call's, else the
 * skill's, else the host default), finds its API key, and redacts it for
 * clients.
 *
 * Trust: only `skillbox.jsonc` (the host) may name environment variables.
 * A skill's `llm_config` or a call's `llm_override` either brings a literal
 * `api_key`, or borrows the host's credentials for its `provider_name`
 * (only when the host has an entry for that provider); a borrowed key is
 * only ever sent to that entry's `base_url`, so a client cannot redirect
 * the host's key to a server of its choosing.
 *
 * ```jsonc
 * "llm": {
 *   "providers": [{                  // the array form of "llm" is shorthand for this
 *     "provider_name": "openai",     // or "anthropic"
 *     "provider_credentials": { "api_key_env": "OPENAI_API_KEY" },
 *     "provider_config": { "base_url": "http://127.0.0.1:11434/v1", "model": "llama3.2" },
 *     "is_default": true
 *   }],
 *   "max_response_bytes": 1048576,   // text + tool-call arguments of one turn
 *   "max_tool_calls": 64,            // tool calls of one turn
 *   "allowed_hosts": []              // hosts a chosen base_url may name ("name", "name:port", "*")
 * }
 * ```
 *
 * @module
 */

import { z } from "zod";
import { SchemaViolationError, SkillboxError } from "../../protocol/errors.ts";
import type { LLMConfig } from "../../protocol/skill.ts";

/** The providers skillbox speaks. */
const LLM_PROVIDERS: readonly ["openai", "anthropic"] = [
  "openai",
  "anthropic",
];

/** A provider skillbox speaks. */
export type LlmProviderName = typeof LLM_PROVIDERS[number];

/**
 * An LLM configuration as written in `skillbox.jsonc`, a skill, or a call
 * (the wire's `LLMConfig`, with every field but `provider_name` optional).
 *
 * @example The host's providers, and a skill choosing one
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { type LlmConfig, selectLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { llm } = parseConfig(`{ "llm": [
 *   {
 *     "provider_name": "openai",
 *     "provider_credentials": { "api_key_env": "OPENAI_API_KEY" },
 *     "provider_config": { "model": "gpt-4o-mini" },
 *     "is_default": true
 *   },
 *   { "provider_name": "anthropic" }
 * ] }`);
 * assert.equal(selectLlmConfig(llm, {}).chosen.provider_name, "openai");
 * const skill: LlmConfig = {
 *   provider_name: "anthropic",
 *   provider_config: { max_tokens: 1024 },
 * };
 * // The skill's choice borrows the host's entry for its provider.
 * assert.equal(selectLlmConfig(llm, { skill }).hostEntry, llm[1]);
 * assert.throws(
 *   () => parseConfig('{ "llm": [{ "provider_name": "gemini" }] }'),
 *   /llm\.0\.provider_name/,
 * );
 * ```
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

const OBJECT = "expected an object";
const STRING = "expected a string";
const POSITIVE = "expected a positive integer";
const NON_NEGATIVE = "expected a non-negative integer";
const TEMPERATURE = "expected a number from 0 to 2";
const URL_TEXT = "expected an http(s) URL";

/**
 * The provider settings skillbox knows, each with the message that names
 * what was expected. They are also what a client is shown
 * ({@link redactLlmConfig}): a secret belongs in `provider_credentials`.
 */
const PROVIDER_CONFIG = z.object({
  base_url: z.string(URL_TEXT).refine(URL.canParse, URL_TEXT).optional(),
  model: z.string(STRING).optional(),
  max_tokens: z.number(POSITIVE)
    .refine((n) => Number.isInteger(n) && n > 0, POSITIVE).optional(),
  temperature: z.number(TEMPERATURE).min(0, TEMPERATURE)
    .max(2, TEMPERATURE).optional(),
  max_retries: z.number(NON_NEGATIVE)
    .refine((n) => Number.isInteger(n) && n >= 0, NON_NEGATIVE)
    .optional(),
}, OBJECT);

/**
 * What {@link checkLlmConfig} accepts, each field with the message that
 * names what was expected. Unknown fields pass (the SDKs' own settings).
 */
const LLM_CONFIG = z.object({
  provider_name: z.enum(LLM_PROVIDERS, {
    error: (issue) =>
      `expected one of ${
        LLM_PROVIDERS.map((p) => `"${p}"`).join(", ")
      } (use "openai" with base_url for compatible servers), got ${
        JSON.stringify(issue.input)
      }`,
  }),
  provider_credentials: z.object({
    api_key: z.string(STRING).optional(),
    api_key_env: z.string(STRING).optional(),
  }, OBJECT).nullish(),
  // `false` is the Python SDK's "none", as null is.
  provider_config: z.preprocess(
    (value) => value === false ? null : value,
    PROVIDER_CONFIG.nullish(),
  ),
}, OBJECT);

/**
 * Checks the shape of one configuration, naming the faulty field.
 *
 * @param value the configuration as parsed from JSON(C), YAML or the wire
 * @param where the field path to name in errors (`llm[0]`, `llm_override`)
 * @returns the value, typed
 * @throws {SchemaViolationError} naming the field and what was expected
 * @example A negative max_tokens is named by its path
 * ```ts
 * import { checkLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkLlmConfig({ provider_name: "openai", provider_config: { max_tokens: -1 } }, "llm[0]"),
 *   /llm\[0\]\.provider_config\.max_tokens/,
 * );
 * assert.throws(
 *   () => checkLlmConfig({ provider_name: "gemini" }, "llm_override"),
 *   /^SchemaViolationError: llm_override\.provider_name/,
 * );
 * ```
 */
export function checkLlmConfig(value: unknown, where: string): LlmConfig {
  const result = LLM_CONFIG.safeParse(value);
  if (result.success) return value as LlmConfig;
  const issue = result.error.issues[0]!; // the first field, in field order
  const path = [where, ...issue.path].join(".");
  throw new SchemaViolationError(`${path}: ${issue.message}`, {
    detail: { field: path },
  });
}

/**
 * The provider settings of a configuration: `provider_config`, with `false`
 * and `null` read as `{}`.
 *
 * @param config the configuration
 * @returns its settings (never a copy: do not mutate)
 * @example `false` is the Python SDK's "none"
 * ```ts
 * import { providerConfigOf } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(providerConfigOf({ provider_name: "openai", provider_config: false }), {});
 * ```
 */
export function providerConfigOf(config: LlmConfig): Record<string, unknown> {
  return config.provider_config || {};
}

/**
 * The rules; every field has a default ({@link DEFAULT_LLM_RULES}).
 *
 * @example Set the rules with the object form of `llm`
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { DEFAULT_LLM_RULES } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { llmRules } = parseConfig(`{ "llm": {
 *   "providers": [],
 *   "max_tool_calls": 8,
 *   "allowed_hosts": ["127.0.0.1:11434"]
 * } }`);
 * assert.equal(llmRules.maxToolCalls, 8);
 * assert.deepEqual(llmRules.allowedHosts, ["127.0.0.1:11434"]);
 * assert.equal(llmRules.maxResponseBytes, DEFAULT_LLM_RULES.maxResponseBytes);
 * // The array form keeps every default.
 * assert.deepEqual(parseConfig('{ "llm": [] }').llmRules, DEFAULT_LLM_RULES);
 * ```
 */
export interface LlmRules {
  /**
   * Most UTF-8 bytes of streamed text plus tool-call ids, names and
   * arguments one turn may bring back. @default 1048576
   */
  maxResponseBytes: number;
  /** Most tool calls one turn may make. @default 64 */
  maxToolCalls: number;
  /**
   * Hosts (`name`, `name:port`, `*`) a `base_url` chosen by a call
   * (`llm_override`) or a skill (`llm:`, `llm_config`) may name; the
   * operator's own entries need none of this. @default []
   */
  allowedHosts: string[];
}

/**
 * The defaults: 1 MiB a turn (about four times the longest answer a model
 * with a 64k-token output limit writes, and a quarter of an A2E message),
 * 64 tool calls a turn (models make a handful in parallel), and no chosen
 * endpoint allowed.
 *
 * @example
 * ```ts
 * import { DEFAULT_LLM_RULES } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_LLM_RULES.maxToolCalls, 64);
 * ```
 */
export const DEFAULT_LLM_RULES: Readonly<LlmRules> = Object.freeze({
  maxResponseBytes: 1024 * 1024,
  maxToolCalls: 64,
  allowedHosts: [],
});

/**
 * The zod schema of `llm` in `skillbox.jsonc`: the providers array, or an
 * object with the providers and the rules (snake_case).
 *
 * @example
 * ```ts
 * import { LLM_SECTION } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(LLM_SECTION.parse(undefined), []);
 * assert.equal(LLM_SECTION.safeParse({ max_tool_calls: 0 }).success, false);
 * ```
 */
export const LLM_SECTION = z.union([
  z.array(z.unknown()),
  z.strictObject({
    providers: z.array(z.unknown()).default([]),
    max_response_bytes: z.number().int().min(1024).default(
      DEFAULT_LLM_RULES.maxResponseBytes,
    ),
    max_tool_calls: z.number().int().min(1).default(
      DEFAULT_LLM_RULES.maxToolCalls,
    ),
    allowed_hosts: z.array(z.string().min(1)).default([]),
  }),
]).default([]);

/**
 * Reads a parsed `llm` section: its provider entries (still to be checked),
 * the field path they sit at, and the rules (defaults for the array form).
 *
 * @param section what {@link LLM_SECTION} parsed
 * @returns the entries, their path and the rules
 * @example The array form is shorthand for `{providers: [...]}`
 * ```ts
 * import { LLM_SECTION, readLlmSection } from "./config.ts";
 * import assert from "node:assert/strict";
 * const short = readLlmSection(LLM_SECTION.parse([{ provider_name: "openai" }]));
 * assert.equal(short.path, "llm");
 * assert.equal(short.rules.maxToolCalls, 64);
 * const full = readLlmSection(LLM_SECTION.parse({ providers: [], max_tool_calls: 4 }));
 * assert.equal(full.path, "llm.providers");
 * assert.equal(full.rules.maxToolCalls, 4);
 * ```
 */
export function readLlmSection(
  section: z.infer<typeof LLM_SECTION>,
): { entries: unknown[]; path: string; rules: LlmRules } {
  if (Array.isArray(section)) {
    return {
      entries: section,
      path: "llm",
      rules: { ...DEFAULT_LLM_RULES, allowedHosts: [] },
    };
  }
  return {
    entries: section.providers,
    path: "llm.providers",
    rules: {
      maxResponseBytes: section.max_response_bytes,
      maxToolCalls: section.max_tool_calls,
      allowedHosts: section.allowed_hosts,
    },
  };
}

/**
 * Where each provider's SDK sends requests when no `base_url` is set.
 *
 * @example
 * ```ts
 * import { OFFICIAL_BASE_URLS } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(OFFICIAL_BASE_URLS.anthropic, "https://api.anthropic.com");
 * ```
 */
export const OFFICIAL_BASE_URLS: Readonly<Record<LlmProviderName, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

/**
 * Whether two `base_url` settings of a provider point at the same endpoint:
 * unset means the provider's official API, trailing slashes do not count.
 *
 * @param provider the provider both settings are for
 * @param a one `base_url`, or undefined for the official API
 * @param b the other
 * @returns true when requests would go to the same place
 * @example Unset is the official API
 * ```ts
 * import { sameBaseUrl } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.ok(sameBaseUrl("openai", "https://api.openai.com/v1/", undefined));
 * assert.ok(!sameBaseUrl("openai", "http://evil.test/v1", undefined));
 * ```
 */
export function sameBaseUrl(
  provider: LlmProviderName,
  a: string | undefined,
  b: string | undefined,
): boolean {
  return normalize(provider, a) === normalize(provider, b);
}

/**
 * Drops userinfo, query and fragment from a URL: places secrets hide.
 *
 * @param url any string
 * @returns the URL without them, or `""` when it does not parse
 * @example
 * ```ts
 * import { redactUrl } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(redactUrl("https://u:p@x.test/v1?key=1#f"), "https://x.test/v1");
 * assert.equal(redactUrl("not a url"), "");
 * ```
 */
export function redactUrl(url: string): string {
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

function normalize(provider: LlmProviderName, url: string | undefined) {
  // From where a run of slashes starts only: `\/+$` alone took quadratic
  // time on a client's base_url of slashes not at its end.
  return (url ?? OFFICIAL_BASE_URLS[provider]).replace(/(?<!\/)\/+$/, "");
}

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
 * import { selectLlmConfig } from "./config.ts";
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
 * import { hostDefault } from "./config.ts";
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
 * import { resolveApiKey } from "./config.ts";
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
 * import { hostApiKey } from "./config.ts";
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
 * import { readEnv } from "./config.ts";
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
  const ownBase = baseUrlOf(chosen);
  if (ownBase === undefined) return;
  if (sameBaseUrl(provider, ownBase, baseUrlOf(hostEntry))) return;
  throw new SkillboxError(
    "skill_error",
    `Cannot send the host's "${provider}" credentials to base_url "${
      redactUrl(ownBase)
    }" from ${source}: give "provider_credentials.api_key" or use the host's base_url`,
    { detail: { provider } },
  );
}

// A configuration's base_url (checkLlmConfig made it a string if set).
function baseUrlOf(config: LlmConfig | undefined): string | undefined {
  return config && providerConfigOf(config).base_url as string | undefined;
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

/**
 * Provider config keys that are safe to show a client: the known settings,
 * never an unknown one (an SDK setting such as `extra_headers` may carry a
 * key).
 */
const PUBLIC_CONFIG_KEYS = Object.keys(PROVIDER_CONFIG.shape);

/**
 * A copy of a configuration that is safe to send to a client: no
 * credentials at all, only the known provider settings, and no userinfo or
 * query string in `base_url`.
 *
 * @param config any LLM configuration
 * @returns a complete wire `LLMConfig` with `provider_credentials: {}`
 * @example Secrets never leave
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
  const source = providerConfigOf(config);
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
  env?: EnvReader;
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
  host.forEach((entry, i) => checkLlmConfig(entry, `llm[${i}]`));
  if (options.override) checkLlmConfig(options.override, "llm_override");
  if (options.skill) checkLlmConfig(options.skill, "llm_config");

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
      sameBaseUrl(provider, baseUrl, baseUrlOf(entry))
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
