/**
 * The LLM chat of a skill, as `ctx.llm.chat` sends it to the host and the
 * host answers it: one request and one response per turn. Shared by the
 * author SDK (which re-exports these types) and the host's relay.
 *
 * @module
 */

import type { JsonSchema } from "./json.ts";

/**
 * A message of an LLM conversation.
 *
 * @example Answer a model's tool call with the tool's outcome
 * ```ts
 * import type { ChatMessage, ChatToolCall } from "./chat.ts";
 * import { decodeToolOutcome, type ToolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const answer = (call: ChatToolCall, outcome: ToolOutcome): ChatMessage => ({
 *   role: "tool",
 *   tool_call_id: call.id,
 *   content: outcome.success ? JSON.stringify(outcome.data) : `Error: ${outcome.error}`,
 * });
 * const call: ChatToolCall = { id: "call_1", name: "add", arguments: { a: 1, b: 2 } };
 * const messages: ChatMessage[] = [
 *   { role: "user", content: "What is 1 + 2?" },
 *   { role: "assistant", content: "", tool_calls: [call] },
 *   answer(call, decodeToolOutcome({ success: true, tool_name: "add", data: 3 })),
 * ];
 * assert.deepEqual(messages[2], { role: "tool", tool_call_id: "call_1", content: "3" });
 * ```
 */
export interface ChatMessage {
  /** Who speaks: the system prompt, the user, the model, or a tool's result. */
  role: "system" | "user" | "assistant" | "tool";
  /** The message text (for role `tool`, the tool's result as text). */
  content: string;
  /** Tool calls the assistant made (role `assistant`). */
  tool_calls?: ChatToolCall[];
  /** Which tool call this message answers (role `tool`). */
  tool_call_id?: string;
}

/**
 * A tool call requested by the model.
 *
 * @example Send a model's tool call to a host
 * ```ts
 * import type { ChatToolCall } from "./chat.ts";
 * import { encodeRequest } from "./requests.ts";
 * import assert from "node:assert/strict";
 * const toRequest = (call: ChatToolCall) =>
 *   encodeRequest({ type: "tool/call/req", sessionId: "", toolName: call.name, arguments: call.arguments,
 *     correlationId: call.id, streaming: false, timeout: 30 });
 * const wire = toRequest({ id: "call_1", name: "add", arguments: { a: 1, b: 2 } });
 * assert.equal(wire.tool_name, "add");
 * assert.deepEqual(wire.arguments, { a: 1, b: 2 });
 * assert.equal(wire.correlation_id, "call_1");
 * ```
 */
export interface ChatToolCall {
  /** The provider's id for the call; answer it with a `tool` message's `tool_call_id`. */
  id: string;
  /** The name of the tool the model calls. */
  name: string;
  /** The arguments the model gave, parsed from JSON. */
  arguments: Record<string, unknown>;
}

/**
 * A tool offered to the model.
 *
 * @example Offer a tool a host listed
 * ```ts
 * import type { ChatTool } from "./chat.ts";
 * import { decodeTool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const listed = decodeTool({ name: "echo", description: "Echo the text", input_parameters: [
 *   { name: "text", type: "string", description: "What to echo", required: true, enum: null, properties: null },
 * ] });
 * const offered: ChatTool = { name: listed.name, description: listed.description, input_schema: listed.inputSchema };
 * // The schema is rebuilt from the listed parameters.
 * assert.deepEqual(offered.input_schema, {
 *   type: "object",
 *   properties: { text: { type: "string", description: "What to echo" } },
 *   required: ["text"],
 * });
 * ```
 */
export interface ChatTool {
  /** The tool's name, as the model will call it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the arguments. */
  input_schema: JsonSchema;
}

/**
 * One request to `ctx.llm.chat`. Each call is one turn.
 *
 * @example Ask for a one-word answer
 * ```ts
 * import type { ChatRequest, ChatResponse } from "./chat.ts";
 * // `chat` is a skill's `ctx.llm.chat`.
 * async function sentiment(chat: (request: ChatRequest) => Promise<ChatResponse>, text: string): Promise<string> {
 *   const request: ChatRequest = {
 *     system: "Answer with one word: positive, negative or neutral.",
 *     messages: [{ role: "user", content: text }],
 *     max_tokens: 5,
 *     temperature: 0,
 *   };
 *   return (await chat(request)).text.trim().toLowerCase();
 * }
 * ```
 */
export interface ChatRequest {
  /** The conversation so far, oldest first. */
  messages: ChatMessage[];
  /** System prompt, placed as the provider expects. */
  system?: string;
  /** Tools offered to the model. */
  tools?: ChatTool[];
  /** The most tokens the model may generate this turn. @default the provider config's `max_tokens`, else 1024 */
  max_tokens?: number;
  /** The sampling temperature. @default the provider config's `temperature` */
  temperature?: number;
}

/**
 * The model's answer to one turn.
 *
 * @example Loop until the model stops asking for tools
 * ```ts
 * import type { ChatMessage, ChatRequest, ChatResponse, ChatTool } from "./chat.ts";
 * // `chat` and `callTool` stand for a skill's `ctx.llm.chat` and `ctx.tools.call`.
 * async function agent(
 *   chat: (request: ChatRequest) => Promise<ChatResponse>,
 *   callTool: (name: string, args: Record<string, unknown>) => Promise<unknown>,
 *   tools: ChatTool[],
 *   question: string,
 * ): Promise<string> {
 *   const messages: ChatMessage[] = [{ role: "user", content: question }];
 *   for (;;) {
 *     const response = await chat({ messages, tools });
 *     if (response.stop_reason !== "tool_use") return response.text;
 *     messages.push({ role: "assistant", content: response.text, tool_calls: response.tool_calls });
 *     for (const call of response.tool_calls) {
 *       const result = await callTool(call.name, call.arguments);
 *       messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
 *     }
 *   }
 * }
 * ```
 */
export interface ChatResponse {
  /** The text, as streamed (tokens were already sent as `llm.token`). */
  text: string;
  /** The tools the model asks to call this turn; empty when none. */
  tool_calls: ChatToolCall[];
  /** Normalized: `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, ... */
  stop_reason: string;
  /** Tokens the provider counted for this turn: prompt (`input_tokens`) and generated (`output_tokens`). */
  usage: { input_tokens: number; output_tokens: number };
  /** Which turn of the skill this was, from 1. */
  turn: number;
}
