/**
 * The agent loop that runs instruction skills (`SKILL.md`, or a code module
 * with `instructions` and no `run`) inside the host: the model gets the
 * instructions as its system prompt and the arguments as the user message,
 * calls the skill's declared tools, and answers.
 *
 * The loop only sequences the conversation. Turn counting (`max_turns`),
 * `llm.*` events, the declared-tools check, `tool.*` events and the
 * sandboxed tool path are the caller's `chat` and `callTool`, so a code
 * skill's `ctx.llm` / `ctx.tools` and this loop share one implementation.
 *
 * @module
 */

import { isOutput } from "../../protocol/output.ts";
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
} from "../../protocol/chat.ts";
import type { JsonSchema } from "../../protocol/json.ts";
import {
  stripIntention,
  type ToolOffer,
  toOpenAiTools,
} from "../llm/tool_formats.ts";
import { SchemaViolationError, SkillboxError } from "../../protocol/errors.ts";
import { checkSchema, isEmptySchema } from "./schema.ts";

/** A tool the loop may offer to the model: the domain tool plus its guidance. */
export interface AgentTool extends ToolOffer {
  /** Markdown guidance for models (the tool's `prompt`). @default "" */
  readonly prompt?: string;
}

/** What running one tool gave the loop. */
export type AgentToolOutcome =
  | { ok: true; value: unknown }
  | { ok: false; message: string };

/** Options for {@link runAgentLoop}. */
export interface AgentLoopOptions {
  /** The skill's name, for messages. */
  name: string;
  /** The skill's instructions (the `SKILL.md` body). */
  instructions: string;
  /** @default "" */
  whenToUse?: string;
  /** @default "" */
  argumentHint?: string;
  /** The tools offered to the model. @default [] */
  tools?: readonly AgentTool[];
  /** The final answer must be JSON matching this, unless empty. @default {} */
  outputSchema?: JsonSchema;
  /** One model turn; throws `max_turns_exceeded` past the limit. */
  chat(request: ChatRequest): Promise<ChatResponse>;
  /** Runs one tool with the model's arguments (intention removed). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    intention: string | null,
  ): Promise<AgentToolOutcome>;
  /** Stops the loop between steps. */
  signal?: AbortSignal;
  /** Longest tool result fed back to the model, in characters. @default 32000 */
  maxToolResultChars?: number;
}

/** How the loop ended. */
export interface AgentLoopResult {
  /** The answer: parsed JSON when an output schema is set, else the text. */
  data: unknown;
  /** A `break_loop` tool result's summary, else null. */
  summary: unknown;
  /** Model turns used. */
  turns: number;
  /** Whether a tool result with `break_loop: true` ended the loop. */
  brokeLoop: boolean;
}

/**
 * Builds the system prompt: instructions, when to use, argument hint, the
 * tools' guidance and the answer format.
 *
 * @param options the skill's texts, tools and output schema
 * @returns the system prompt
 * @example
 * ```ts
 * import { buildSystemPrompt } from "./agent_loop.ts";
 * import assert from "node:assert/strict";
 * const prompt = buildSystemPrompt({
 *   name: "todo", instructions: "Find TODOs.", argumentHint: "a folder path",
 *   tools: [{ name: "grep", description: "Search", inputSchema: {}, prompt: "Use regex." }],
 *   outputSchema: { type: "object" },
 * });
 * assert.match(prompt, /Find TODOs\./);
 * assert.match(prompt, /### grep\nUse regex\./);
 * assert.match(prompt, /only a JSON value/);
 * ```
 */
export function buildSystemPrompt(
  options: Pick<
    AgentLoopOptions,
    | "name"
    | "instructions"
    | "whenToUse"
    | "argumentHint"
    | "tools"
    | "outputSchema"
  >,
): string {
  const parts = [
    `You are running the skill "${options.name}". Follow its instructions.`,
    options.instructions.trim(),
  ];
  if (options.whenToUse?.trim()) {
    parts.push(`## When this skill applies\n${options.whenToUse.trim()}`);
  }
  parts.push(
    "## Arguments\nThe user message holds the skill's arguments as JSON." +
      (options.argumentHint?.trim()
        ? ` Expected: ${options.argumentHint.trim()}`
        : ""),
  );
  const tools = options.tools ?? [];
  if (tools.length > 0) {
    const guidance = tools.filter((t) => t.prompt?.trim()).map((t) =>
      `### ${t.name}\n${t.prompt!.trim()}`
    );
    parts.push(
      "## Tools\nCall the tools you need. Give every call an `intention`: " +
        "one sentence saying why you make it." +
        (guidance.length > 0 ? `\n\n${guidance.join("\n\n")}` : ""),
    );
  }
  if (!isEmptySchema(options.outputSchema)) {
    parts.push(
      "## Answer\nWhen done, reply with only a JSON value (no prose) " +
        "matching this JSON Schema:\n```json\n" +
        JSON.stringify(options.outputSchema, null, 2) + "\n```",
    );
  }
  return parts.join("\n\n");
}

/**
 * Runs the loop: model turn, tool calls, results back, until the model
 * answers without calling a tool, a tool result says `break_loop`, or
 * `chat` refuses a turn.
 *
 * @param args the skill's arguments (the user message)
 * @param options the skill, its tools, and the host's `chat` / `callTool`
 * @returns the answer and how the loop ended
 * @throws {SkillboxError} `max_turns_exceeded` from `chat`, provider
 *   failures, `schema_violation` when the answer does not match
 *   `outputSchema`, the abort reason when `signal` aborts
 * @example A one-tool run with a scripted model
 * ```ts
 * import { runAgentLoop } from "./agent_loop.ts";
 * import assert from "node:assert/strict";
 * let turn = 0;
 * const result = await runAgentLoop({ n: 2 }, {
 *   name: "double", instructions: "Double n with the tool.",
 *   tools: [{ name: "mul", description: "Multiply", inputSchema: { type: "object" } }],
 *   chat: async (req) => {
 *     turn++;
 *     const done = req.messages.some((m) => m.role === "tool");
 *     return {
 *       text: done ? "4" : "", stop_reason: done ? "end_turn" : "tool_use", turn,
 *       tool_calls: done ? [] : [{ id: "c1", name: "mul", arguments: { a: 2, b: 2, intention: "Double it" } }],
 *       usage: { input_tokens: 1, output_tokens: 1 },
 *     };
 *   },
 *   callTool: async (_name, args, intention) => {
 *     assert.equal(intention, "Double it");
 *     return { ok: true, value: Number(args.a) * Number(args.b) };
 *   },
 * });
 * assert.equal(result.data, "4");
 * assert.equal(result.turns, 2);
 * ```
 */
// Long (about 100 lines): the loop reads as the conversation goes (ask the
// model, accept or repair its answer, call the tools it asked for); split,
// its state (messages, turns, the pending repair) would be passed around.
export async function runAgentLoop(
  args: Record<string, unknown>,
  options: AgentLoopOptions,
): Promise<AgentLoopResult> {
  const tools = options.tools ?? [];
  const byName = new Map(tools.map((t) => [t.name, t]));
  const offered: ChatTool[] = tools.map((t) => ({
    name: t.name,
    description: t.description,
    // The converters add `intention` unless the tool has its own; reuse
    // them so the schema offered is the one stripIntention expects.
    input_schema: toOpenAiTools([t], { intention: true })[0]!.function
      .parameters,
  }));
  const system = buildSystemPrompt(options);
  const messages: ChatMessage[] = [{
    role: "user",
    content: Object.keys(args).length === 0
      ? "(no arguments)"
      : JSON.stringify(args, null, 2),
  }];
  const limit = options.maxToolResultChars ?? 32_000;
  let turns = 0;
  // Set while the model gets its one chance to fix a malformed answer.
  let violation: SchemaViolationError | null = null;

  while (true) {
    options.signal?.throwIfAborted();
    let response: ChatResponse;
    try {
      response = await options.chat({
        system,
        messages: [...messages],
        tools: offered.length > 0 ? offered : undefined,
      });
    } catch (error) {
      // Out of turns while repairing: the bad answer is the real failure.
      if (
        violation && error instanceof SkillboxError &&
        error.code === "max_turns_exceeded"
      ) throw violation;
      throw error;
    }
    turns++;
    options.signal?.throwIfAborted();
    if (response.tool_calls.length === 0) {
      try {
        return {
          data: parseFinalAnswer(response.text, options.outputSchema ?? {}),
          summary: null,
          turns,
          brokeLoop: false,
        };
      } catch (error) {
        // One chance to fix the format, if a turn is left.
        if (violation || !(error instanceof SchemaViolationError)) throw error;
        violation = error;
        messages.push({ role: "assistant", content: response.text });
        messages.push({
          role: "user",
          content:
            `Your answer was rejected: ${error.message}. Reply again with only the corrected JSON.`,
        });
        continue;
      }
    }
    messages.push({
      role: "assistant",
      content: response.text,
      tool_calls: response.tool_calls,
    });
    for (const call of response.tool_calls) {
      options.signal?.throwIfAborted();
      const tool = byName.get(call.name);
      const { arguments: toolArgs, intention } = stripIntention(
        call.arguments,
        tool,
      );
      const outcome: AgentToolOutcome = tool
        ? await options.callTool(call.name, toolArgs, intention)
        : {
          ok: false,
          message: `Tool "${call.name}" is not available to this skill`,
        };
      if (outcome.ok && isOutput(outcome.value) && outcome.value.break_loop) {
        return {
          data: outcome.value.data ?? null,
          summary: outcome.value.summary ?? null,
          turns,
          brokeLoop: true,
        };
      }
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: outcome.ok
          ? clip(toText(outcome.value), limit)
          : `Error: ${outcome.message}`,
      });
    }
  }
}

function toText(value: unknown): string {
  if (isOutput(value)) value = value.data;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}

function clip(text: string, limit: number): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}\n[cut: ${text.length - limit} more characters]`;
}

/**
 * Reads a model's final answer: the text itself when there is no output
 * schema, else the JSON in it (a ```json fence or surrounding prose is
 * tolerated), validated against the schema.
 *
 * @param text the model's answer
 * @param schema the skill's output schema (`{}` for none)
 * @returns the text, or the parsed and valid JSON value
 * @throws {SchemaViolationError} when no JSON can be read or it does not match
 * @example
 * ```ts
 * import { parseFinalAnswer } from "./agent_loop.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", required: ["count"], properties: { count: { type: "integer" } } };
 * assert.deepEqual(parseFinalAnswer('Done:\n```json\n{"count": 3}\n```', schema), { count: 3 });
 * assert.throws(() => parseFinalAnswer('{"count": "x"}', schema), /field "\/count"/);
 * assert.equal(parseFinalAnswer("plain", {}), "plain");
 * ```
 */
export function parseFinalAnswer(text: string, schema: JsonSchema): unknown {
  if (isEmptySchema(schema)) return text;
  const value = extractJson(text);
  if (value === undefined) {
    throw new SchemaViolationError(
      `The final answer is not JSON matching output_schema: "${
        text.length > 120 ? `${text.slice(0, 120)}…` : text
      }"`,
    );
  }
  const problem = checkSchema(schema, value);
  if (problem !== null) {
    throw new SchemaViolationError(
      `The final answer does not match output_schema: ${problem}`,
    );
  }
  return value;
}

function extractJson(text: string): unknown {
  const candidates: string[] = [];
  const fence = /```(?:json|JSON)?\s*\n([\s\S]*?)```/.exec(text);
  if (fence?.[1]) candidates.push(fence[1]);
  candidates.push(text.trim());
  for (const [open, close] of [["{", "}"], ["[", "]"]] as const) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  }
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next reading
    }
  }
  return undefined;
}
