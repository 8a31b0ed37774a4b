/**
 * The `openai` provider: the Chat Completions API through the official
 * `openai` client, streaming, with tool calling. Any compatible server
 * (Ollama, vLLM, llama.cpp server, OpenRouter, ...) works through `base_url`.
 *
 * @module
 */

import OpenAI from "openai";
import type { ChatMessage, ChatRequest } from "../../protocol/chat.ts";
import type { ChatOptions, LlmProvider, ProviderSettings } from "./provider.ts";
import { streamTurn } from "./_turn.ts";
import { fromChatTools, toOpenAiTools } from "./tool_formats.ts";
import { sameBaseUrl } from "./config.ts";

const PROVIDER = "openai";

/**
 * OpenAI `finish_reason` → the normalized `stop_reason`. A Map: the server
 * names the key, and an object's lookup of "constructor" finds Object.
 */
const STOP_REASONS = new Map<unknown, string>([
  ["stop", "end_turn"],
  ["tool_calls", "tool_use"],
  ["function_call", "tool_use"],
  ["length", "max_tokens"],
]);

/**
 * Creates a provider for the OpenAI Chat Completions API.
 *
 * @param options key, model, base URL and defaults
 * @returns a provider that streams each turn
 * @example Point it at a local compatible server (no request is made here)
 * ```ts
 * import { createOpenAiProvider } from "./openai.ts";
 * import assert from "node:assert/strict";
 * const llm = createOpenAiProvider({
 *   apiKey: "unused",
 *   model: "llama3.2",
 *   baseUrl: "http://127.0.0.1:11434/v1",
 * });
 * assert.equal(llm.provider, "openai");
 * ```
 */
// Long because `chat`, one streamed request handled as its chunks come
// (text, tool-call pieces, usage, finish), is inside it, sharing the
// client and the tokens field chosen once per provider.
export function createOpenAiProvider(
  options: ProviderSettings,
): LlmProvider {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: options.maxRetries ?? 0,
    // Nothing from the host's environment rides along (OPENAI_ORG_ID...).
    organization: null,
    project: null,
    adminAPIKey: null,
    fetch: options.fetch, // the SDK's default when undefined
  });
  // The official API rejects `max_tokens` for reasoning models; compatible
  // servers (Ollama, vLLM, llama.cpp) may not know `max_completion_tokens`.
  const tokensField = sameBaseUrl(PROVIDER, options.baseUrl, undefined)
    ? "max_completion_tokens"
    : "max_tokens";

  return {
    provider: PROVIDER,
    model: options.model,
    async chat(request: ChatRequest, chat: ChatOptions = {}) {
      const maxTokens = request.max_tokens ?? options.maxTokens;
      const temperature = request.temperature ?? options.temperature;
      const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
        model: options.model,
        // The system prompt first.
        messages: [
          ...(request.system
            ? [{ role: "system" as const, content: request.system }]
            : []),
          ...request.messages.map(toOpenAiMessage),
        ],
        stream: true,
        stream_options: { include_usage: true },
        ...(maxTokens === undefined ? {} : { [tokensField]: maxTokens }),
        ...(temperature === undefined ? {} : { temperature }),
        ...(request.tools?.length
          ? { tools: toOpenAiTools(fromChatTools(request.tools)) }
          : {}),
      };

      const turnOptions = { ...chat, ...options, provider: PROVIDER };
      return await streamTurn(turnOptions, async (turn) => {
        let finish: string | null = null;
        const stream = await client.chat.completions.create(body, {
          signal: chat.signal,
        });
        for await (const chunk of stream) {
          if (chunk.usage) {
            turn.usage = {
              input_tokens: chunk.usage.prompt_tokens,
              output_tokens: chunk.usage.completion_tokens,
            };
          }
          const choice = chunk.choices[0];
          if (!choice) continue;
          const delta = choice.delta;
          if (delta?.content) turn.addText(delta.content);
          // A call's id and name come in its first delta; its arguments
          // arrive in pieces, matched up by `index`.
          for (const part of delta?.tool_calls ?? []) {
            const call = turn.callAt(part.index);
            if (part.id) call.id = turn.add(part.id);
            if (part.function?.name) call.name += turn.add(part.function.name);
            if (part.function?.arguments) {
              call.args += turn.add(part.function.arguments);
            }
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
        return finish === null ? null : STOP_REASONS.get(finish) ?? finish;
      });
    },
  };
}

/** Maps one message of our history to a Chat Completions message. */
function toOpenAiMessage(
  message: ChatMessage,
): OpenAI.Chat.ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      if (!message.tool_calls?.length) {
        return { role: "assistant", content: message.content };
      }
      return {
        role: "assistant",
        // The API wants null, not "", beside tool calls with no text.
        content: message.content || null,
        tool_calls: message.tool_calls.map((call) => ({
          id: call.id,
          type: "function",
          function: {
            name: call.name,
            arguments: JSON.stringify(call.arguments),
          },
        })),
      };
    case "tool":
      return {
        role: "tool",
        tool_call_id: message.tool_call_id ?? "",
        content: message.content,
      };
  }
}
