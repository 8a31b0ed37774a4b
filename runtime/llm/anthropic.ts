/**
 * The `anthropic` provider: the Messages API through the official
 * `@anthropic-ai/sdk` client, streaming its raw events (`message_start`,
 * `content_block_start`, `content_block_delta` with `text_delta` or
 * `input_json_delta`, `content_block_stop`, `message_delta`, `message_stop`),
 * with tool calling through `tool_use` blocks.
 *
 * @module
 */

import Anthropic, { APIError } from "@anthropic-ai/sdk";
import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import type { ChatOptions, LlmProvider, ProviderSettings } from "./provider.ts";
import {
  type ApiErrorFields,
  mapProviderError,
  type StreamedCall,
  toolCallsOf,
  truncatedStreamError,
  TurnBounds,
} from "./_turn.ts";
import { fromChatTools, toAnthropicTools } from "./tool_formats.ts";
import { OFFICIAL_BASE_URLS } from "./config.ts";

const PROVIDER = "anthropic";
const DEFAULT_MAX_TOKENS = 1024;

type MessageParam = Anthropic.MessageParam;
type Block = Exclude<MessageParam["content"], string>[number];

/**
 * Creates a provider for the Anthropic Messages API.
 *
 * @param options key, model, base URL and defaults
 * @returns a provider that streams each turn
 * @example Configure it (no request is made here)
 * ```ts
 * import { createAnthropicProvider } from "./anthropic.ts";
 * import assert from "node:assert/strict";
 * const llm = createAnthropicProvider({ apiKey: "sk-ant-…", model: "claude-x" });
 * assert.equal(llm.model, "claude-x");
 * ```
 */
// Long because `chat` is inside it (see there); the rest is a few lines.
export function createAnthropicProvider(
  options: ProviderSettings,
): LlmProvider {
  // Given even when unset, so ANTHROPIC_BASE_URL is not read.
  const baseUrl = options.baseUrl ?? OFFICIAL_BASE_URLS[PROVIDER];
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: baseUrl,
    maxRetries: options.maxRetries ?? 0,
    // The key given is the only credential: ANTHROPIC_AUTH_TOKEN is not read.
    fetch: options.fetch, // the SDK's default when undefined
  });
  return {
    provider: PROVIDER,
    model: options.model,
    // Long (about 85 lines): one streamed request as the events come
    // (text, tool_use input pieces by block, usage, stop), kept in one
    // function so the stream's state stays local to it.
    async chat(request: ChatRequest, chat: ChatOptions = {}) {
      const { signal, onToken } = chat;
      const temperature = request.temperature ?? options.temperature;
      const { system, messages } = toAnthropicMessages(request);
      const body: Anthropic.MessageCreateParamsStreaming = {
        model: options.model,
        max_tokens: request.max_tokens ?? options.maxTokens ??
          DEFAULT_MAX_TOKENS,
        messages,
        stream: true,
        ...(system ? { system } : {}),
        ...(temperature === undefined ? {} : { temperature }),
        ...(request.tools?.length
          ? { tools: toAnthropicTools(fromChatTools(request.tools)) }
          : {}),
      };

      let text = "";
      let stopReason: string | null = null;
      let stopped = false;
      const usage = { input_tokens: 0, output_tokens: 0 };
      // Content blocks by index: tool_use input arrives as JSON pieces.
      const tools = new Map<number, StreamedCall>();
      // Throwing inside the loop ends the SDK's stream, which aborts the
      // request: the provider's connection is closed.
      const bounds = new TurnBounds(PROVIDER, options.limits);
      try {
        const stream = await client.messages.create(body, { signal });
        for await (const event of stream) {
          switch (event.type) {
            case "message_start":
              usage.input_tokens = event.message.usage.input_tokens;
              usage.output_tokens = event.message.usage.output_tokens;
              break;
            case "content_block_start":
              if (event.content_block.type === "tool_use") {
                if (!tools.has(event.index)) bounds.call();
                bounds.add(event.content_block.id);
                bounds.add(event.content_block.name);
                tools.set(event.index, {
                  id: event.content_block.id,
                  name: event.content_block.name,
                  args: "",
                });
              }
              break;
            case "content_block_delta":
              if (event.delta.type === "text_delta") {
                bounds.add(event.delta.text);
                text += event.delta.text;
                onToken?.(event.delta.text);
              } else if (event.delta.type === "input_json_delta") {
                const tool = tools.get(event.index);
                bounds.add(event.delta.partial_json);
                if (tool) tool.args += event.delta.partial_json;
              }
              break;
            case "message_delta":
              stopReason = event.delta.stop_reason ?? stopReason;
              // `output_tokens` here is cumulative for the message.
              usage.output_tokens = event.usage.output_tokens;
              break;
            case "message_stop":
              stopped = true;
              break;
          }
        }
      } catch (error) {
        // A timeout or cancellation surfaces as itself, not as a failure.
        signal?.throwIfAborted();
        throw mapProviderError(PROVIDER, error, { baseUrl, readApiError });
      }
      // The SDK ends the iteration quietly on abort: say it was aborted.
      signal?.throwIfAborted();
      if (!stopped) throw truncatedStreamError(PROVIDER);

      return {
        text,
        tool_calls: toolCallsOf(PROVIDER, tools),
        stop_reason: stopReason ?? "end_turn",
        usage,
        turn: chat.turn ?? 1,
      } satisfies ChatResponse;
    },
  };
}

/**
 * Maps our history to Messages API turns: system text goes to `system`,
 * assistant tool calls become `tool_use` blocks, tool results become
 * `tool_result` blocks in a user turn, and consecutive same-role turns are
 * merged (the API wants user and assistant to alternate).
 */
function toAnthropicMessages(
  request: ChatRequest,
): { system: string; messages: MessageParam[] } {
  const system: string[] = request.system ? [request.system] : [];
  const messages: { role: "user" | "assistant"; content: Block[] }[] = [];
  const push = (role: "user" | "assistant", blocks: Block[]) => {
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of request.messages) {
    switch (message.role) {
      case "system":
        system.push(message.content);
        break;
      case "user":
        push("user", [{ type: "text", text: message.content }]);
        break;
      case "assistant": {
        const blocks: Block[] = message.content
          ? [{ type: "text", text: message.content }]
          : [];
        for (const call of message.tool_calls ?? []) {
          blocks.push({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: call.arguments,
          });
        }
        push("assistant", blocks);
        break;
      }
      case "tool":
        push("user", [{
          type: "tool_result",
          tool_use_id: message.tool_call_id ?? "",
          content: message.content,
        }]);
        break;
    }
  }
  return { system: system.join("\n\n"), messages };
}

/**
 * Reads the Anthropic SDK's HTTP error: the SDK has already taken the
 * message and type out of its body (`{type: "error", error: {type, message}}`).
 */
function readApiError(error: unknown): ApiErrorFields | undefined {
  if (!(error instanceof APIError)) return undefined;
  return {
    status: error.status,
    // Typed a string, but copied from the body as it came.
    message: typeof error.apiMessage === "string"
      ? error.apiMessage
      : undefined,
    type: error.type ?? undefined,
    hasBody: error.error !== undefined,
  };
}
