/**
 * The contract between the skills capability and an LLM provider: one
 * streaming chat turn at a time.
 *
 * @module
 */

import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";

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
