/**
 * The `anthropic` provider: the Messages API through the official
 * `@anthropic-ai/sdk` client, streaming its raw events (`message_start`,
 * `content_block_start`, `content_block_delta` with `text_delta` or
 * `input_json_delta`, `content_block_stop`, `message_delta`, `message_stop`),
 * with tool calling through `tool_use` blocks.
 *
 * @module
 */

import Anthropic from "@anthropic-ai/sdk";
import type { ChatRequest } from "../../protocol/chat.ts";
import type { ChatOptions, LlmProvider, ProviderSettings } from "./provider.ts";
import { streamTurn } from "./_turn.ts";
import { fromChatTools, toAnthropicTools } from "./tool_formats.ts";

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
 * const llm = createAnthropicProvider({
 *   apiKey: "sk-ant-…",
 *   model: "claude-x",
 *   baseUrl: "https://api.anthropic.com",
 * });
 * assert.equal(llm.model, "claude-x");
 * ```
 */
// Long because `chat` is inside it (see there); the rest is a few lines.
export function createAnthropicProvider(
  options: ProviderSettings,
): LlmProvider {
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: options.maxRetries ?? 0,
    // The key given is the only credential: ANTHROPIC_AUTH_TOKEN is not read.
    fetch: options.fetch, // the SDK's default when undefined
  });
  return {
    provider: PROVIDER,
    model: options.model,
    // One streamed request as the events come (text, tool_use input
    // pieces by block, usage, stop), kept in one function so the stream's
    // state stays local to it.
    async chat(request: ChatRequest, chat: ChatOptions = {}) {
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

      const turnOptions = { ...chat, ...options, provider: PROVIDER };
      return await streamTurn(turnOptions, async (turn) => {
        let stopReason: string | null = null;
        let stopped = false;
        const stream = await client.messages.create(body, {
          signal: chat.signal,
        });
        for await (const event of stream) {
          switch (event.type) {
            case "message_start":
              turn.usage = {
                input_tokens: event.message.usage.input_tokens,
                output_tokens: event.message.usage.output_tokens,
              };
              break;
            case "content_block_start":
              // tool_use blocks by index: their input comes as JSON pieces.
              if (event.content_block.type === "tool_use") {
                const call = turn.callAt(event.index);
                call.id = turn.add(event.content_block.id);
                call.name = turn.add(event.content_block.name);
                call.args = "";
              }
              break;
            case "content_block_delta":
              if (event.delta.type === "text_delta") {
                turn.addText(event.delta.text);
              } else if (event.delta.type === "input_json_delta") {
                const call = turn.calls.get(event.index);
                const piece = turn.add(event.delta.partial_json);
                if (call) call.args += piece;
              }
              break;
            case "message_delta":
              stopReason = event.delta.stop_reason ?? stopReason;
              // `output_tokens` here is cumulative for the message.
              turn.usage.output_tokens = event.usage.output_tokens;
              break;
            case "message_stop":
              stopped = true;
              break;
          }
        }
        return stopped ? stopReason ?? "end_turn" : null;
      });
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
