/**
 * Converts skillbox tools to the tool formats of the OpenAI Chat Completions
 * and Anthropic Messages APIs, so a model (ours or an embedder's) can be
 * offered skillbox tools. Both formats are derived here, in one place, from
 * the one domain tool type ({@link ToolOffer}, a view of `Tool`); a tool
 * listed by a host (`client.tools.list()`) is one as it is. Optionally asks the model for an `intention` (one
 * sentence: why this call) alongside each call's arguments; strip it with
 * {@link stripIntention} before the tool runs.
 *
 * @module
 */

import type { Tool } from "../../protocol/tool.ts";
import type { ChatTool } from "../../protocol/chat.ts";
import type { JsonSchema } from "../../protocol/json.ts";

/**
 * What a model is offered of a tool: a view of the domain `Tool`.
 *
 * @example Offer a bare tool and a listed one
 * ```ts
 * import { toAnthropicTools, type ToolOffer } from "./tool_formats.ts";
 * import { tool } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const readFile: ToolOffer = {
 *   name: "read_file",
 *   description: "Reads a text file",
 *   inputSchema: {
 *     $schema: "https://json-schema.org/draft/2020-12/schema",
 *     type: "object",
 *     properties: { path: { type: "string" } },
 *     required: ["path"],
 *   },
 * };
 * // A whole `Tool`, as a host lists it, is an offer as it is.
 * const listed = tool({ name: "now", description: "Tells the time" });
 * const [first, second] = toAnthropicTools([readFile, listed]);
 * assert.deepEqual(first?.input_schema, {
 *   type: "object",
 *   properties: { path: { type: "string" } },
 *   required: ["path"],
 * });
 * assert.equal(second?.name, "now");
 * ```
 */
export type ToolOffer = Pick<Tool, "name" | "description" | "inputSchema">;

/**
 * The argument name the model fills with why it makes a call.
 *
 * @example Ask for it, then take it out before the tool runs
 * ```ts
 * import {
 *   INTENTION_FIELD,
 *   stripIntention,
 *   toAnthropicTools,
 * } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const offer = {
 *   name: "read_file",
 *   description: "Reads a text file",
 *   inputSchema: { type: "object", properties: { path: { type: "string" } } },
 * };
 * const [tool] = toAnthropicTools([offer], { intention: true });
 * assert.ok(INTENTION_FIELD in (tool?.input_schema.properties ?? {}));
 * // What the model sends back; the tool gets only its own arguments.
 * const input = { path: "notes.md", [INTENTION_FIELD]: "Find the deadline" };
 * assert.deepEqual(stripIntention(input, offer).arguments, { path: "notes.md" });
 * ```
 */
export const INTENTION_FIELD = "intention";

/** The schema of the added `intention` argument. */
const INTENTION_SCHEMA: JsonSchema = {
  type: "string",
  description:
    "One sentence: why you are making this call and what you expect from it.",
};

/**
 * A JSON Schema for an object: what both APIs take as a tool's input.
 *
 * @example `type` is filled in, other keywords kept
 * ```ts
 * import { type ObjectSchema, toolInputSchema } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const schema: ObjectSchema = toolInputSchema({
 *   inputSchema: {
 *     properties: { n: { type: "integer" } },
 *     additionalProperties: false,
 *   },
 * });
 * assert.equal(schema.type, "object");
 * assert.deepEqual(schema.properties, { n: { type: "integer" } });
 * assert.equal(schema.additionalProperties, false);
 * ```
 */
export interface ObjectSchema {
  /** Always `object`. */
  type: "object";
  /** Argument name → its JSON Schema. */
  properties?: Record<string, unknown>;
  /** Names of the required arguments. */
  required?: string[];
  /** Any other JSON Schema keyword, kept as given. */
  [keyword: string]: unknown;
}

/**
 * A tool in the OpenAI Chat Completions `tools` format.
 *
 * @example The `tools` of a Chat Completions request
 * ```ts
 * import { type OpenAiTool, toOpenAiTools } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const parameters = {
 *   type: "object",
 *   properties: { a: { type: "number" }, b: { type: "number" } },
 *   required: ["a", "b"],
 * };
 * const tools: OpenAiTool[] = toOpenAiTools([
 *   { name: "add", description: "Adds two numbers", inputSchema: parameters },
 * ]);
 * const body = JSON.stringify({
 *   model: "gpt-4o-mini",
 *   messages: [{ role: "user", content: "What is 2 + 3?" }],
 *   tools,
 * });
 * assert.deepEqual(JSON.parse(body).tools, [{
 *   type: "function",
 *   function: { name: "add", description: "Adds two numbers", parameters },
 * }]);
 * ```
 */
export interface OpenAiTool {
  /** Always `function`. */
  type: "function";
  /** The function the model may call. */
  function: {
    /** The tool's name, as the model will call it. */
    name: string;
    /** What the tool does, for the model. */
    description: string;
    /** JSON Schema of the arguments. */
    parameters: ObjectSchema;
  };
}

/**
 * A tool in the Anthropic Messages `tools` format.
 *
 * @example The `tools` of a Messages request
 * ```ts
 * import { type AnthropicTool, toAnthropicTools } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const tools: AnthropicTool[] = toAnthropicTools([{
 *   name: "get_weather",
 *   description: "Gets the weather of a city",
 *   inputSchema: { properties: { city: { type: "string" } } },
 * }]);
 * const body = JSON.stringify({
 *   model: "claude-sonnet-4-5",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Is it raining in Oslo?" }],
 *   tools,
 * });
 * assert.deepEqual(JSON.parse(body).tools, [{
 *   name: "get_weather",
 *   description: "Gets the weather of a city",
 *   input_schema: { type: "object", properties: { city: { type: "string" } } },
 * }]);
 * ```
 */
export interface AnthropicTool {
  /** The tool's name, as the model will call it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the input. */
  input_schema: ObjectSchema;
}

/**
 * Options of the converters.
 *
 * @example The intention is added unless the tool has its own
 * ```ts
 * import { toOpenAiTools, type ToolFormatOptions } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const tools = [{
 *   name: "search",
 *   description: "Searches the notes",
 *   inputSchema: { type: "object", properties: { q: { type: "string" } } },
 * }, {
 *   name: "plan",
 *   description: "Plans a trip",
 *   inputSchema: {
 *     type: "object",
 *     properties: { intention: { type: "integer" } },
 *   },
 * }];
 * const options: ToolFormatOptions = { intention: true };
 * const [search, plan] = toOpenAiTools(tools, options);
 * const names = Object.keys(search?.function.parameters.properties ?? {});
 * assert.deepEqual(names, ["q", "intention"]);
 * assert.deepEqual(plan?.function.parameters.properties, {
 *   intention: { type: "integer" },
 * });
 * // Off by default.
 * const [plain] = toOpenAiTools(tools);
 * assert.deepEqual(Object.keys(plain?.function.parameters.properties ?? {}), [
 *   "q",
 * ]);
 * ```
 */
export interface ToolFormatOptions {
  /**
   * Add an optional `intention` string argument to every tool (unless the
   * tool already has an argument of that name). @default false
   */
  intention?: boolean;
}

/**
 * The object JSON Schema both APIs take as a tool's input; `$schema` is
 * noise to them and is dropped.
 *
 * @param tool the tool
 * @returns its input schema, `type: "object"` and `properties` always set
 * @example
 * ```ts
 * import { toolInputSchema } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const schema = toolInputSchema({ inputSchema: {} });
 * assert.deepEqual(schema, { type: "object", properties: {} });
 * ```
 */
export function toolInputSchema(tool: Pick<Tool, "inputSchema">): ObjectSchema {
  const { $schema: _ignored, ...rest } = tool.inputSchema;
  return {
    ...rest,
    type: "object",
    properties: (rest.properties as Record<string, unknown> | undefined) ??
      {},
  };
}

/**
 * Reads the tools a sandboxed skill offers through `ctx.llm.chat` (the SDK's
 * {@link ChatTool}, snake_case as it crossed the sandbox pipe) as
 * {@link ToolOffer}s.
 *
 * @param tools the request's tools
 * @returns the same tools, as the formats take them
 * @example
 * ```ts
 * import { fromChatTools } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const [t] = fromChatTools([{ name: "a", description: "A", input_schema: { type: "object" } }]);
 * assert.deepEqual(t?.inputSchema, { type: "object" });
 * ```
 */
export function fromChatTools(tools: readonly ChatTool[]): ToolOffer[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.input_schema,
  }));
}

/**
 * Converts tools to the OpenAI Chat Completions `tools` format.
 *
 * @param tools the tools (domain `Tool`s, or any {@link ToolOffer})
 * @param options `intention`
 * @returns one `{type: "function", function}` entry per tool
 * @example With the intention field
 * ```ts
 * import { toOpenAiTools } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const [tool] = toOpenAiTools([{
 *   name: "add",
 *   description: "Adds two numbers",
 *   inputSchema: { type: "object", properties: { a: { type: "number" } } },
 * }], { intention: true });
 * assert.equal(tool?.function.name, "add");
 * assert.ok("intention" in (tool?.function.parameters.properties as object));
 * ```
 */
export function toOpenAiTools(
  tools: readonly ToolOffer[],
  options: ToolFormatOptions = {},
): OpenAiTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: withIntention(toolInputSchema(tool), options),
    },
  }));
}

/**
 * Converts tools to the Anthropic Messages `tools` format.
 *
 * @param tools the tools (domain `Tool`s, or any {@link ToolOffer})
 * @param options `intention`
 * @returns one `{name, description, input_schema}` entry per tool
 * @example
 * ```ts
 * import { toAnthropicTools } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const [tool] = toAnthropicTools([{
 *   name: "add",
 *   description: "Adds two numbers",
 *   inputSchema: { properties: { a: { type: "number" } } },
 * }]);
 * assert.equal(tool?.input_schema.type, "object");
 * ```
 */
export function toAnthropicTools(
  tools: readonly ToolOffer[],
  options: ToolFormatOptions = {},
): AnthropicTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: withIntention(toolInputSchema(tool), options),
  }));
}

/**
 * The arguments without the intention, and the intention.
 *
 * @example A tool's own `intention` argument is left alone
 * ```ts
 * import { type StrippedArguments, stripIntention } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const plan = {
 *   name: "plan",
 *   description: "Plans a trip",
 *   inputSchema: {
 *     type: "object",
 *     properties: { intention: { type: "string" } },
 *   },
 * };
 * const own: StrippedArguments = stripIntention({ intention: "Rome" }, plan);
 * assert.deepEqual(own, { arguments: { intention: "Rome" }, intention: null });
 * assert.equal(stripIntention({ path: "a.txt" }).intention, null);
 * ```
 */
export interface StrippedArguments {
  /** The arguments to pass to the tool. */
  arguments: Record<string, unknown>;
  /** The model's stated reason, or null when it gave none. */
  intention: string | null;
}

/**
 * Removes the `intention` the model added to a tool call's arguments, so the
 * tool only sees its own arguments. When the tool's own schema declares an
 * `intention` argument it is the tool's, and is kept.
 *
 * @param args the arguments the model sent
 * @param tool the tool called, to tell whether `intention` is its own
 * @returns the tool's arguments and the intention (null when absent)
 * @example
 * ```ts
 * import { stripIntention } from "./tool_formats.ts";
 * import assert from "node:assert/strict";
 * const out = stripIntention({ path: "a.txt", intention: "Read the notes" });
 * assert.deepEqual(out.arguments, { path: "a.txt" });
 * assert.equal(out.intention, "Read the notes");
 * ```
 */
export function stripIntention(
  args: Record<string, unknown>,
  tool?: ToolOffer,
): StrippedArguments {
  if (!(INTENTION_FIELD in args) || (tool && ownsIntention(tool))) {
    return { arguments: args, intention: null };
  }
  const { [INTENTION_FIELD]: value, ...rest } = args;
  return {
    arguments: rest,
    intention: typeof value === "string" ? value : null,
  };
}

function ownsIntention(tool: ToolOffer): boolean {
  const properties = toolInputSchema(tool).properties;
  return typeof properties === "object" && properties !== null &&
    INTENTION_FIELD in properties;
}

function withIntention(
  schema: ObjectSchema,
  options: ToolFormatOptions,
): ObjectSchema {
  if (!options.intention) return schema;
  const properties = schema.properties ?? {};
  if (INTENTION_FIELD in properties) return schema;
  return {
    ...schema,
    properties: { ...properties, [INTENTION_FIELD]: INTENTION_SCHEMA },
  };
}
