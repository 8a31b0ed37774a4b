/**
 * The codec of tools, tool outcomes, toolkits and events: each camelCase
 * domain object (`domain.ts`) to its snake_case wire form (`models.ts`) and
 * back. Encoders emit every field the Python client requires; decoders
 * accept what any host or client sends, filling the A2E defaults.
 *
 * @module
 */

import type {
  CallEvent,
  JsonObject,
  Tool,
  Toolkit,
  ToolOutcome,
} from "./domain.ts";
import type {
  ToolDefinition,
  ToolkitDefinition,
  ToolParameter,
  ToolResult,
} from "./models.ts";
import { schemaToParameters } from "./parameters.ts";
import { isObject, list, nullableStr, num, str, strings } from "./_fields.ts";

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
 * import { encodeTool } from "./tool_codec.ts";
 * import { tool } from "./domain.ts";
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
    name: tool.name,
    description: tool.description,
    input_parameters: safeParameters(tool.inputSchema),
    output_parameters: safeParameters(tool.outputSchema),
    streaming: tool.streaming,
    idempotent: tool.idempotent,
    tags: [...tool.tags],
    version: tool.version,
    toolkit: tool.toolkit,
    defer_loading: tool.deferLoading,
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
 * import { decodeTool } from "./tool_codec.ts";
 * import assert from "node:assert/strict";
 * const t = decodeTool({ name: "add", description: "Add", input_parameters: [
 *   { name: "a", type: "number", description: "", required: true, enum: null, properties: null }] });
 * assert.deepEqual(t.inputSchema.required, ["a"]);
 * ```
 */
export function decodeTool(wire: JsonObject): Tool {
  return {
    name: str(wire.name),
    description: str(wire.description),
    inputSchema: parametersToSchema(list(wire.input_parameters)),
    outputSchema: list(wire.output_parameters).length === 0
      ? {}
      : parametersToSchema(list(wire.output_parameters)),
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
 * @returns `{type: "object", properties, required}`
 * @example
 * ```ts
 * import { parametersToSchema } from "./tool_codec.ts";
 * import assert from "node:assert/strict";
 * const s = parametersToSchema([{ name: "q", type: "string", description: "Query",
 *   required: false, enum: ["a"], properties: null }]);
 * assert.deepEqual(s.properties, { q: { type: "string", description: "Query", enum: ["a"] } });
 * ```
 */
export function parametersToSchema(parameters: readonly unknown[]): JsonObject {
  const properties: Record<string, JsonObject> = {};
  const required: string[] = [];
  for (const item of parameters) {
    if (!isObject(item) || typeof item.name !== "string") continue;
    const parameter = item as Partial<ToolParameter>;
    const schema: JsonObject = {
      type: str(parameter.type, "any"),
      description: str(parameter.description),
    };
    if (Array.isArray(parameter.enum)) schema.enum = parameter.enum;
    if (isObject(parameter.properties)) {
      const nested = parametersToSchema(Object.values(parameter.properties));
      schema.properties = nested.properties;
      schema.required = nested.required;
    }
    properties[item.name] = schema;
    if (parameter.required === true) required.push(item.name);
  }
  return { type: "object", properties, required };
}

/**
 * Encodes a tool outcome as the wire's `ToolResult`.
 *
 * @param outcome the outcome
 * @returns the wire result
 * @example
 * ```ts
 * import { encodeToolOutcome } from "./tool_codec.ts";
 * import { toolOutcome } from "./domain.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeToolOutcome(toolOutcome({ success: true, toolName: "t", durationMs: 2 }));
 * assert.equal(wire.tool_name, "t");
 * assert.equal(wire.duration_ms, 2);
 * ```
 */
export function encodeToolOutcome(outcome: ToolOutcome): ToolResult {
  return {
    success: outcome.success,
    tool_name: outcome.toolName,
    data: outcome.data,
    summary: outcome.summary,
    truncated: outcome.truncated,
    exit_code: outcome.exitCode,
    error: outcome.error,
    error_code: outcome.errorCode,
    duration_ms: outcome.durationMs,
    events: outcome.events,
  };
}

/**
 * Decodes a wire `ToolResult`.
 *
 * @param wire the result as received
 * @returns the outcome, defaults filled
 * @example
 * ```ts
 * import { decodeToolOutcome } from "./tool_codec.ts";
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
    events: list(wire.events).filter(isObject).map(decodeEventFields),
  };
}

/**
 * Encodes a toolkit as the wire's `ToolkitDefinition`.
 *
 * @param kit the toolkit
 * @returns the wire definition
 * @example
 * ```ts
 * import { encodeToolkit } from "./tool_codec.ts";
 * import assert from "node:assert/strict";
 * const wire = encodeToolkit({ name: "fs", alias: "", description: "", category: "", tags: [],
 *   iconSvg: null, schema: {}, tools: ["read_file"], configured: false, version: "1.0.0" });
 * assert.equal(wire.icon_svg, null);
 * ```
 */
export function encodeToolkit(kit: Toolkit): ToolkitDefinition {
  return {
    name: kit.name,
    alias: kit.alias,
    description: kit.description,
    category: kit.category,
    tags: kit.tags,
    icon_svg: kit.iconSvg,
    schema: kit.schema,
    tools: kit.tools,
    configured: kit.configured,
    version: kit.version,
  };
}

/**
 * Decodes a wire `ToolkitDefinition`.
 *
 * @param wire the definition as received
 * @returns the toolkit, defaults filled
 * @example
 * ```ts
 * import { decodeToolkit } from "./tool_codec.ts";
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
    schema: isObject(wire.schema) ? wire.schema : {},
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
 * import { decodeEventFields } from "./tool_codec.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeEventFields({}), { kind: "status", data: {}, seq: 0 });
 * ```
 */
export function decodeEventFields(wire: JsonObject): CallEvent {
  return {
    kind: str(wire.kind, "status"),
    data: isObject(wire.data) ? wire.data : {},
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
