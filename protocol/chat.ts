/**
 * The LLM chat of a skill, as `ctx.llm.chat` sends it to the host and the
 * host answers it: one request and one response per turn. Shared by the
 * author SDK (which re-exports these types) and the host's relay.
 *
 * @module
 */

import type { JsonSchema } from "./json.ts";

/** A message of an LLM conversation. */
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

/** A tool call requested by the model. */
export interface ChatToolCall {
  /** The provider's id for the call; answer it with a `tool` message's `tool_call_id`. */
  id: string;
  /** The name of the tool the model calls. */
  name: string;
  /** The arguments the model gave, parsed from JSON. */
  arguments: Record<string, unknown>;
}

/** A tool offered to the model. */
export interface ChatTool {
  /** The tool's name, as the model will call it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the arguments. */
  input_schema: JsonSchema;
}

/** One request to `ctx.llm.chat`. Each call is one turn. */
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

/** The model's answer to one turn. */
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
