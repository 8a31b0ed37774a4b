/**
 * The contract between the skills capability and an LLM provider (one
 * streaming chat turn at a time), and how one is built from a resolved
 * configuration: the endpoint checked, the `fetch` chosen, the provider
 * picked.
 *
 * @module
 */

import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import { EgressBroker } from "../egress/broker.ts";
import { createAnthropicProvider } from "./anthropic.ts";
import {
  DEFAULT_LLM_RULES,
  type LlmRules,
  OFFICIAL_BASE_URLS,
  type ResolvedLlmConfig,
} from "./config.ts";
import { checkChosenEndpoint, type LlmFetch, llmFetch } from "./llm_fetch.ts";
import type { TurnLimits } from "./_turn.ts";
import { createOpenAiProvider } from "./openai.ts";

/** Options of {@link LlmProvider.chat}. */
export interface ChatOptions {
  /**
   * Aborting it closes the HTTP stream; `chat` then rejects with the
   * signal's `reason`. @default no cancellation
   */
  signal?: AbortSignal;
  /** Receives each text token as it arrives, before `chat` resolves. */
  onToken?: (text: string) => void;
  /** Which turn of the skill this is, copied into the response. @default 1 */
  turn?: number;
}

/**
 * A configured model behind a provider API. Made by `createProvider` from a
 * resolved configuration; holds the credentials, never exposes them.
 *
 * @example A fake provider for tests of the skills capability
 * ```ts
 * import type { LlmProvider } from "./provider.ts";
 * import assert from "node:assert/strict";
 * const echo: LlmProvider = {
 *   provider: "echo",
 *   model: "echo-1",
 *   async chat(request, options = {}) {
 *     const text = request.messages.at(-1)?.content ?? "";
 *     options.onToken?.(text);
 *     return {
 *       text,
 *       tool_calls: [],
 *       stop_reason: "end_turn",
 *       usage: { input_tokens: 0, output_tokens: 1 },
 *       turn: options.turn ?? 1,
 *     };
 *   },
 * };
 * const res = await echo.chat({ messages: [{ role: "user", content: "hi" }] });
 * assert.equal(res.text, "hi");
 * ```
 */
export interface LlmProvider {
  /** The provider name (`openai`, `anthropic`). */
  readonly provider: string;
  /** The model every turn uses. */
  readonly model: string;
  /**
   * Runs one streaming turn.
   *
   * @param request the conversation, system prompt and tools
   * @param options signal, token callback, turn number
   * @returns the assembled text, tool calls, normalized stop reason, usage
   * @throws {SkillboxError} `skill_error` for provider failures (HTTP status
   * and provider message; `retryable` for 429 and 5xx)
   */
  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
}

/**
 * What a provider needs; {@link createProvider} builds it from a resolved
 * configuration. The same settings serve both providers.
 */
export interface ProviderSettings {
  /** The API key (a placeholder for keyless local servers). */
  apiKey: string;
  /** The model every turn uses. */
  model: string;
  /**
   * The API root (`OFFICIAL_BASE_URLS` for the official API). Always given
   * to the SDK: unset, it would read OPENAI_BASE_URL or ANTHROPIC_BASE_URL
   * from the host's environment.
   */
  baseUrl: string;
  /**
   * Used when a request sets none. @default the server's default (Anthropic,
   * whose API requires one: 1024)
   */
  maxTokens?: number;
  /** Used when a request sets none. @default the server's default */
  temperature?: number;
  /** Retries the SDK makes on 429/5xx/connection errors. @default 0 */
  maxRetries?: number;
  /** The `fetch` the SDK uses (see `llm_fetch.ts`). @default global fetch */
  fetch?: LlmFetch;
  /** Bounds of each turn. @default {@link DEFAULT_LLM_RULES}'s */
  limits?: TurnLimits;
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
 * import { createProvider } from "./provider.ts";
 * import { resolveLlmConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const chosen = resolveLlmConfig([], { override: {
 *   provider_name: "openai",
 *   provider_config: { base_url: "http://169.254.169.254/v1", model: "m" },
 * } });
 * assert.throws(() => createProvider(chosen), /Cannot use LLM endpoint "http:\/\/169\.254\.169\.254\/v1"/);
 * ```
 * @example An Anthropic provider
 * ```ts
 * import { createProvider } from "./provider.ts";
 * import { resolveLlmConfig } from "./config.ts";
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
  const settings: ProviderSettings = {
    ...config,
    baseUrl: endpoint,
    // The SDKs refuse an empty key; keyless local servers ignore this one.
    apiKey: config.apiKey || "no-key",
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
