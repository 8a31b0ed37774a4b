/**
 * Tools, toolkits, tool outcomes and call events: each described once, as
 * the camelCase type skillbox code handles; its wire form (snake_case,
 * A2E-WIRE.md §3–5) is derived by `Wire<...>` and converted here. Encoders
 * emit every field the Python client requires; decoders accept what any
 * host or client sends, filling the A2E defaults.
 *
 * @module
 */

import { isPlainObject, type JsonObject } from "./json.ts";
import { MAX_PARAMETER_DEPTH, schemaToParameters } from "./parameters.ts";
import { type Wire, wireEncoder } from "./wire_names.ts";
import { list, nullableStr, num, str, strings } from "./_fields.ts";

/**
 * One event of a call (§3).
 *
 * @example Follow a call's progress from its event messages
 * ```ts
 * import { type CallEvent, decodeEvent } from "./tool.ts";
 * import { encodeEvent } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const percent = (event: CallEvent): number | null =>
 *   event.kind === "progress" && typeof event.data.pct === "number" ? event.data.pct : null;
 * const received = [
 *   encodeEvent("tool/event", "c1", { kind: "progress", data: { pct: 40 }, seq: 0 }),
 *   encodeEvent("tool/event", "c1", { kind: "log", data: { message: "halfway" }, seq: 1 }),
 * ];
 * const events = received.map(decodeEvent);
 * assert.deepEqual(events.map(percent), [40, null]);
 * assert.deepEqual(events.map((e) => e.seq), [0, 1]);
 * ```
 */
export interface CallEvent {
  /**
   * What happened: `progress`, `status`, `log`, `artifact`, or a skill kind
   * such as `llm.token`. Wire default `"status"`.
   */
  kind: string;
  /** The kind's payload, e.g. `{pct, message}` for `progress`. Wire default `{}`. */
  data: JsonObject;
  /** The event's position within its call: from 0, increasing by one. Wire default `0`. */
  seq: number;
}

/**
 * One parameter of a tool, derived from its JSON Schema (§4).
 *
 * @example Describe a tool's parameters in a prompt
 * ```ts
 * import { encodeTool, tool, type ToolParameter } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const line = (p: ToolParameter): string =>
 *   `${p.name}: ${p.enum ? p.enum.join(" | ") : p.type}${p.required ? "" : " (optional)"}`;
 * const { input_parameters } = encodeTool(tool({ name: "convert", description: "Convert a file",
 *   inputSchema: { type: "object", required: ["path"], properties: {
 *     path: { type: "string" }, to: { type: "string", enum: ["csv", "json"] } } } }));
 * assert.deepEqual(input_parameters.map(line), ["path: string", "to: csv | json (optional)"]);
 * ```
 */
export interface ToolParameter {
  /** The argument's name: its key in the tool's input object. */
  name: string;
  /** A JSON Schema type name (`string`, `number`, `object`, ...). */
  type: string;
  /** What the argument means, for agents and models; `""` when none is given. */
  description: string;
  /** Whether the tool requires the argument. Wire default `false`. */
  required: boolean;
  /** The allowed values when the schema restricts them, else `null`. */
  enum: string[] | null;
  /** The nested parameters of an `object` argument, by name, else `null`. */
  properties: Record<string, ToolParameter> | null;
}

/**
 * A tool: what agents list and call, what skills offer to a model, and what
 * the provider tool formats are derived from. On the wire it is a
 * `ToolDefinition` whose `input_parameters` are derived from `inputSchema`.
 *
 * @example Offer tools to a model, deferred ones left out
 * ```ts
 * import { type Tool, tool } from "./tool.ts";
 * import type { ChatTool } from "./chat.ts";
 * import assert from "node:assert/strict";
 * const offer = (tools: readonly Tool[]): ChatTool[] =>
 *   tools.filter((t) => !t.deferLoading)
 *     .map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
 * const offered = offer([
 *   tool({ name: "add", description: "Add numbers" }),
 *   tool({ name: "reindex", description: "Rebuild the index", deferLoading: true }),
 * ]);
 * assert.deepEqual(offered, [{ name: "add", description: "Add numbers", input_schema: { type: "object" } }]);
 * ```
 */
export interface Tool {
  /** The unique name agents call it by. */
  readonly name: string;
  /** What the tool does, for agents and models. */
  readonly description: string;
  /** JSON Schema of its arguments (`{type: "object"}` when it takes none). */
  readonly inputSchema: JsonObject;
  /** JSON Schema of the `data` it returns (`{}` when not given). */
  readonly outputSchema: JsonObject;
  /** Whether it may emit events while it runs. */
  readonly streaming: boolean;
  /** Whether repeating a call with the same arguments is safe. */
  readonly idempotent: boolean;
  /** Free-form labels, matched by tag filters and by search. */
  readonly tags: readonly string[];
  /** The tool's version. */
  readonly version: string;
  /** The toolkit it belongs to, or `null`. */
  readonly toolkit: string | null;
  /** Left out of plain listings; found only by a search that asks for it. */
  readonly deferLoading: boolean;
}

/**
 * The outcome of one tool call (the wire's `ToolResult`); a skill call's is
 * the same without `toolName` and `exitCode` (`SkillOutcome`).
 *
 * @example Take the data, or throw the tool's failure
 * ```ts
 * import { decodeToolOutcome, type ToolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * function dataOf(outcome: ToolOutcome): unknown {
 *   if (!outcome.success) throw new Error(`${outcome.toolName} failed (${outcome.errorCode}): ${outcome.error}`);
 *   return outcome.data;
 * }
 * assert.equal(dataOf(decodeToolOutcome({ success: true, tool_name: "add", data: 3 })), 3);
 * const failed = decodeToolOutcome({ success: false, tool_name: "fetch_page", error_code: "timeout",
 *   error: "timed out after 500 ms" });
 * assert.throws(() => dataOf(failed), /fetch_page failed \(timeout\): timed out after 500 ms/);
 * ```
 */
export interface ToolOutcome {
  /**
   * Whether the tool (or skill) ran and succeeded; else `errorCode` and
   * `error` say why.
   */
  success: boolean;
  /** The tool called. */
  toolName: string;
  /** What the tool (or skill) returned (any JSON value), or `null`. */
  data: unknown;
  /** A short form of `data` the tool (or skill) chose to give, or `null`. */
  summary: unknown;
  /** Whether `data` or `events` were cut to fit the host's limits. */
  truncated: boolean;
  /** The exit code the tool reported, or `null`. */
  exitCode: number | null;
  /** A human-readable message when the call failed, else `null`. */
  error: string | null;
  /** An A2E error code when the call failed, else `null`. */
  errorCode: string | null;
  /** How long the call took, in whole milliseconds. */
  durationMs: number;
  /** The events the call emitted, in `seq` order. */
  events: CallEvent[];
}

/**
 * A toolkit as listed to agents (the wire's `ToolkitDefinition`).
 *
 * @example Read the settings a toolkit asks for
 * ```ts
 * import { decodeToolkit, type Toolkit } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const settings = (kit: Toolkit): string[] =>
 *   Object.keys((kit.schema.properties ?? {}) as Record<string, unknown>);
 * const kit = decodeToolkit({ name: "github", tools: ["open_issue"],
 *   schema: { type: "object", properties: { token: { type: "string" }, org: { type: "string" } } } });
 * assert.deepEqual(settings(kit), ["token", "org"]);
 * assert.equal(kit.configured, false);
 * ```
 */
export interface Toolkit {
  /** The unique name agents refer to it by. */
  name: string;
  /** A short alternative name, or `""`. */
  alias: string;
  /** What the toolkit offers, or `""`. */
  description: string;
  /** A free-form grouping, or `""`. */
  category: string;
  /** Free-form labels. */
  tags: string[];
  /** An icon as SVG markup, or `null`. */
  iconSvg: string | null;
  /** JSON Schema of its configuration (secrets' defaults never included). */
  schema: JsonObject;
  /** The names of the tools it groups. */
  tools: string[];
  /** Whether the asking session has configured it. */
  configured: boolean;
  /** The toolkit's version. */
  version: string;
}

/**
 * A tool as listed to agents (§4): its schemas as parameter lists.
 *
 * @example The required arguments of a listed tool
 * ```ts
 * import { encodeTool, tool, type ToolDefinition } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const required = (def: ToolDefinition): string[] =>
 *   def.input_parameters.filter((p) => p.required).map((p) => p.name);
 * const def = encodeTool(tool({ name: "add", description: "Add numbers", inputSchema: {
 *   type: "object", required: ["a", "b"],
 *   properties: { a: { type: "number" }, b: { type: "number" }, round: { type: "boolean" } } } }));
 * assert.deepEqual(required(def), ["a", "b"]);
 * assert.equal(def.defer_loading, false);
 * ```
 */
export type ToolDefinition =
  & Wire<Omit<Tool, "inputSchema" | "outputSchema">>
  & {
    /** The arguments it takes. Wire default `[]`. */
    input_parameters: ToolParameter[];
    /** The fields of the `data` it returns. Wire default `[]`. */
    output_parameters: ToolParameter[];
  };

/**
 * The outcome of a tool call as on the wire (§4).
 *
 * @example Read a failure in its wire form
 * ```ts
 * import { encodeToolOutcome, toolOutcome, type ToolResult } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const failure = (result: ToolResult): string | null =>
 *   result.success ? null : `${result.error_code} after ${result.duration_ms} ms`;
 * const wire = encodeToolOutcome(toolOutcome({ success: false, toolName: "fetch_page", durationMs: 500,
 *   errorCode: "timeout", error: "timed out" }));
 * assert.equal(failure(wire), "timeout after 500 ms");
 * ```
 */
export type ToolResult = Wire<ToolOutcome>;

/**
 * A toolkit as listed to agents (§5).
 *
 * @example Every field is on the wire, defaults filled
 * ```ts
 * import { decodeToolkit, encodeToolkit, type ToolkitDefinition } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const wire: ToolkitDefinition = encodeToolkit(decodeToolkit({ name: "fs", tools: ["read_file"] }));
 * assert.deepEqual(wire, {
 *   name: "fs", alias: "", description: "", category: "", tags: [], icon_svg: null,
 *   schema: {}, tools: ["read_file"], configured: false, version: "1.0.0",
 * });
 * ```
 */
export type ToolkitDefinition = Wire<Toolkit>;

/**
 * Completes a tool with the A2E defaults.
 *
 * @param fields at least `name` and `description`
 * @returns the tool, every field present
 * @example Fill defaults
 * ```ts
 * import { tool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const t = tool({ name: "add", description: "Add numbers" });
 * assert.deepEqual(t.inputSchema, { type: "object" });
 * assert.equal(t.deferLoading, false);
 * ```
 */
export function tool(
  fields: Pick<Tool, "name" | "description"> & Partial<Tool>,
): Tool {
  // The A2E defaults are the decoder's, but a tool given no schema takes
  // no arguments: `{type: "object"}`, not a schema rebuilt from no list.
  return { ...decodeTool({}), inputSchema: { type: "object" }, ...fields };
}

/**
 * Completes a tool outcome with the A2E defaults.
 *
 * @param fields at least `success`, `toolName` and `durationMs`
 * @returns the outcome, every field present
 * @example A failure
 * ```ts
 * import { toolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const o = toolOutcome({ success: false, toolName: "t", durationMs: 3, errorCode: "timeout" });
 * assert.equal(o.truncated, false);
 * assert.deepEqual(o.events, []);
 * ```
 */
export function toolOutcome(
  fields:
    & Pick<ToolOutcome, "success" | "toolName" | "durationMs">
    & Partial<ToolOutcome>,
): ToolOutcome {
  return {
    data: null,
    summary: null,
    truncated: false,
    exitCode: null,
    error: null,
    errorCode: null,
    events: [],
    ...fields,
  };
}

/**
 * Completes a tool definition with A2E's defaults.
 *
 * @param fields at least `name` and `description`
 * @returns a definition with every field present
 * @example Fill defaults
 * ```ts
 * import { toolDefinition } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const def = toolDefinition({ name: "add", description: "Add numbers" });
 * assert.equal(def.streaming, true);
 * assert.equal(def.toolkit, null);
 * ```
 */
export function toolDefinition(
  fields:
    & Pick<ToolDefinition, "name" | "description">
    & Partial<ToolDefinition>,
): ToolDefinition {
  // The decoder fills the wire defaults; encoding gives the wire form back.
  return { ...encodeTool(decodeTool({})), ...fields };
}

// The wire fields of each type are the ones its decoder fills (the
// compiler checks each decoder against its type): registry entries and
// outcomes carry more. A tool's schemas go on the wire as parameter lists.
const { inputSchema: _input, outputSchema: _output, ...toolFields } =
  decodeTool({});
const encodeToolFields = wireEncoder<
  Omit<Tool, "inputSchema" | "outputSchema">
>(toolFields);

/**
 * Encodes a tool outcome as the wire's `ToolResult`.
 *
 * @param outcome the outcome
 * @returns the wire result
 * @example
 * ```ts
 * import { encodeToolOutcome, toolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeToolOutcome(toolOutcome({ success: true, toolName: "t", durationMs: 2 }));
 * assert.equal(wire.tool_name, "t");
 * assert.equal(wire.duration_ms, 2);
 * ```
 */
export const encodeToolOutcome: (outcome: ToolOutcome) => ToolResult =
  wireEncoder(decodeToolOutcome({}));

/**
 * Encodes a toolkit as the wire's `ToolkitDefinition`.
 *
 * @param kit the toolkit
 * @returns the wire definition
 * @example
 * ```ts
 * import { encodeToolkit } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeToolkit({ name: "fs", alias: "", description: "", category: "", tags: [],
 *   iconSvg: null, schema: {}, tools: ["read_file"], configured: false, version: "1.0.0" });
 * assert.equal(wire.icon_svg, null);
 * ```
 */
export const encodeToolkit: (kit: Toolkit) => ToolkitDefinition = wireEncoder(
  decodeToolkit({}),
);

// Listing encodes the same frozen tools again and again; deriving parameters
// from a schema is the costly part, so keep it per tool object.
const encodedTools = new WeakMap<Tool, ToolDefinition>();

/**
 * Encodes a tool as the wire's `ToolDefinition`, deriving
 * `input_parameters`/`output_parameters` from its schemas.
 *
 * @param tool the tool
 * @returns the wire definition, every field present
 * @example
 * ```ts
 * import { encodeTool, tool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeTool(tool({ name: "echo", description: "Echo",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } } } }));
 * assert.equal(wire.input_parameters[0]?.name, "text");
 * assert.equal(wire.defer_loading, false);
 * ```
 */
export function encodeTool(tool: Tool): ToolDefinition {
  const hit = encodedTools.get(tool);
  if (hit) return hit;
  const wire: ToolDefinition = {
    ...encodeToolFields(tool),
    input_parameters: safeParameters(tool.inputSchema),
    output_parameters: safeParameters(tool.outputSchema),
    tags: [...tool.tags],
  };
  encodedTools.set(tool, wire);
  return wire;
}

/**
 * Decodes a wire `ToolDefinition`; its schemas are rebuilt from the
 * parameter lists.
 *
 * @param wire the definition as received
 * @returns the tool, defaults filled
 * @example
 * ```ts
 * import { decodeTool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const t = decodeTool({ name: "add", description: "Add", input_parameters: [
 *   { name: "a", type: "number", description: "", required: true, enum: null, properties: null }] });
 * assert.deepEqual(t.inputSchema.required, ["a"]);
 * ```
 */
export function decodeTool(wire: JsonObject): Tool {
  const outputs = list(wire.output_parameters);
  return {
    name: str(wire.name),
    description: str(wire.description),
    inputSchema: parametersToSchema(list(wire.input_parameters)),
    outputSchema: outputs.length === 0 ? {} : parametersToSchema(outputs),
    streaming: wire.streaming !== false,
    idempotent: wire.idempotent === true,
    tags: strings(wire.tags),
    version: str(wire.version, "1.0.0"),
    toolkit: nullableStr(wire.toolkit),
    deferLoading: wire.defer_loading === true,
  };
}

/**
 * Rebuilds an object JSON Schema from A2E tool parameters.
 *
 * @param parameters the parameters (anything else in the list is skipped)
 * @param depth how deep this list is nested: past
 *   {@link MAX_PARAMETER_DEPTH}, which no encoder writes, nested lists are
 *   left out (a hostile host's nesting must not take the stack) @default 0
 * @returns `{type: "object", properties, required}`
 * @example
 * ```ts
 * import { parametersToSchema } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const s = parametersToSchema([{ name: "q", type: "string", description: "Query",
 *   required: false, enum: ["a"], properties: null }]);
 * assert.deepEqual(s.properties, { q: { type: "string", description: "Query", enum: ["a"] } });
 * ```
 */
export function parametersToSchema(
  parameters: readonly unknown[],
  depth = 0,
): JsonObject {
  // Entries, not assignments: a host's parameter named `__proto__` would
  // set the prototype of a plain object where that setter exists.
  const properties: [string, JsonObject][] = [];
  const required: string[] = [];
  for (const item of parameters) {
    if (!isPlainObject(item) || typeof item.name !== "string") continue;
    const parameter = item as Partial<ToolParameter>;
    const schema: JsonObject = {
      type: str(parameter.type, "any"),
      description: str(parameter.description),
    };
    if (Array.isArray(parameter.enum)) schema.enum = parameter.enum;
    if (isPlainObject(parameter.properties) && depth < MAX_PARAMETER_DEPTH) {
      const nested = parametersToSchema(
        Object.values(parameter.properties),
        depth + 1,
      );
      schema.properties = nested.properties;
      schema.required = nested.required;
    }
    properties.push([item.name, schema]);
    if (parameter.required === true) required.push(item.name);
  }
  return {
    type: "object",
    properties: Object.fromEntries(properties),
    required,
  };
}

/**
 * Decodes a wire `ToolResult`.
 *
 * @param wire the result as received
 * @returns the outcome, defaults filled
 * @example
 * ```ts
 * import { decodeToolOutcome } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const o = decodeToolOutcome({ success: false, tool_name: "t", duration_ms: 1, error_code: "timeout" });
 * assert.equal(o.errorCode, "timeout");
 * ```
 */
export function decodeToolOutcome(wire: JsonObject): ToolOutcome {
  return {
    success: wire.success === true,
    toolName: str(wire.tool_name),
    data: wire.data ?? null,
    summary: wire.summary ?? null,
    truncated: wire.truncated === true,
    exitCode: typeof wire.exit_code === "number" ? wire.exit_code : null,
    error: nullableStr(wire.error),
    errorCode: nullableStr(wire.error_code),
    durationMs: num(wire.duration_ms),
    events: list(wire.events).filter(isPlainObject).map(decodeEvent),
  };
}

/**
 * Decodes a wire `ToolkitDefinition`.
 *
 * @param wire the definition as received
 * @returns the toolkit, defaults filled
 * @example
 * ```ts
 * import { decodeToolkit } from "./tool.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeToolkit({ name: "fs", tools: [], icon_svg: "<svg/>" }).iconSvg, "<svg/>");
 * ```
 */
export function decodeToolkit(wire: JsonObject): Toolkit {
  return {
    name: str(wire.name),
    alias: str(wire.alias),
    description: str(wire.description),
    category: str(wire.category),
    tags: strings(wire.tags),
    iconSvg: nullableStr(wire.icon_svg),
    schema: isPlainObject(wire.schema) ? wire.schema : {},
    tools: strings(wire.tools),
    configured: wire.configured === true,
    version: str(wire.version, "1.0.0"),
  };
}

/**
 * Reads an event's `kind`, `data` and `seq`, with A2E's defaults.
 *
 * @param wire the event (a message, or an entry of a result's `events`)
 * @returns the event
 * @example
 * ```ts
 * import { decodeEvent } from "./tool.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeEvent({}), { kind: "status", data: {}, seq: 0 });
 * ```
 */
export function decodeEvent(wire: JsonObject): CallEvent {
  return {
    kind: str(wire.kind, "status"),
    data: isPlainObject(wire.data) ? wire.data : {},
    seq: num(wire.seq),
  };
}

function safeParameters(schema: JsonObject): ToolParameter[] {
  try {
    return schemaToParameters(schema);
  } catch {
    // A schema the converter cannot read still validates calls; the agent
    // just sees no parameter list.
    return [];
  }
}
