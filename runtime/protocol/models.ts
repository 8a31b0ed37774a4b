/**
 * The A2E v1.0 data models (A2E-WIRE.md §3–6), as TypeScript interfaces with
 * snake_case fields exactly as on the wire, plus builders that fill every
 * default so that what the host sends is always complete.
 *
 * @module
 */

import type { SkillStatus } from "./codes.ts";

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** One parameter of a tool, derived from its JSON Schema (§4). */
export interface ToolParameter {
  name: string;
  /** A JSON Schema type name (`string`, `number`, `object`, ...). */
  type: string;
  description: string;
  required: boolean;
  enum: string[] | null;
  properties: Record<string, ToolParameter> | null;
}

/** A tool as listed to agents (§4). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_parameters: ToolParameter[];
  output_parameters: ToolParameter[];
  streaming: boolean;
  idempotent: boolean;
  tags: string[];
  version: string;
  toolkit: string | null;
  defer_loading: boolean;
}

/** One event of a call (§3). */
export interface CallEvent {
  kind: string;
  data: JsonObject;
  seq: number;
}

/** The outcome of a tool call (§4). */
export interface ToolResult {
  success: boolean;
  tool_name: string;
  data: unknown;
  summary: unknown;
  truncated: boolean;
  exit_code: number | null;
  error: string | null;
  error_code: string | null;
  duration_ms: number;
  events: CallEvent[];
}

/** A toolkit as listed to agents (§5). */
export interface ToolkitDefinition {
  name: string;
  alias: string;
  description: string;
  category: string;
  tags: string[];
  icon_svg: string | null;
  /** JSON Schema of the configuration, secrets included as fields. */
  schema: JsonObject;
  tools: string[];
  configured: boolean;
  version: string;
}

/** Which LLM provider a skill uses, and how (§6). */
export interface LLMConfig {
  provider_name: string;
  provider_credentials: JsonObject;
  /** The Python SDK's default is `false`; skillbox treats it as `{}`. */
  provider_config: JsonObject | false | null;
  is_default: boolean;
}

/** A skill as discovered by agents (§6). */
export interface SkillDefinition {
  name: string;
  version: string;
  description: string;
  triggers: string[];
  status: SkillStatus;
  when_to_use: string;
  argument_hint: string;
  source: string;
  tools: string[] | null;
  toolkits: string[] | null;
  instructions: string | null;
  file_path: string | null;
  llm_config: LLMConfig | null;
  category: string | null;
  tags: string[] | null;
  max_turns: number | null;
  timeout_seconds: number | null;
  icon: string | null;
  metadata: JsonObject | null;
  input_schema: JsonObject;
  output_schema: JsonObject;
  arguments: string[] | null;
}

/** The outcome of a skill call (§6). */
export interface SkillResult {
  success: boolean;
  data: unknown;
  summary: unknown;
  truncated: boolean;
  error: string | null;
  error_code: string | null;
  duration_ms: number;
  events: CallEvent[];
}

/**
 * Completes a tool definition with A2E's defaults.
 *
 * @param fields at least `name` and `description`
 * @returns a definition with every field present
 * @example Fill defaults
 * ```ts
 * import { toolDefinition } from "./models.ts";
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
  return {
    input_parameters: [],
    output_parameters: [],
    streaming: true,
    idempotent: false,
    tags: [],
    version: "1.0.0",
    toolkit: null,
    defer_loading: false,
    ...fields,
  };
}

/**
 * Completes a tool result with A2E's defaults.
 *
 * @param fields at least `success`, `tool_name` and `duration_ms`
 * @returns a result with every field present
 * @example A failure
 * ```ts
 * import { toolResult } from "./models.ts";
 * import assert from "node:assert/strict";
 * const r = toolResult({ success: false, tool_name: "t", duration_ms: 3, error_code: "timeout" });
 * assert.equal(r.truncated, false);
 * assert.deepEqual(r.events, []);
 * ```
 */
export function toolResult(
  fields:
    & Pick<ToolResult, "success" | "tool_name" | "duration_ms">
    & Partial<ToolResult>,
): ToolResult {
  return {
    data: null,
    summary: null,
    truncated: false,
    exit_code: null,
    error: null,
    error_code: null,
    events: [],
    ...fields,
  };
}

/**
 * Completes a toolkit definition with A2E's defaults.
 *
 * @param fields at least `name` and `tools`
 * @returns a definition with every field present
 * @example Fill defaults
 * ```ts
 * import { toolkitDefinition } from "./models.ts";
 * import assert from "node:assert/strict";
 * const kit = toolkitDefinition({ name: "fs", tools: ["read_file"] });
 * assert.equal(kit.configured, false);
 * ```
 */
export function toolkitDefinition(
  fields:
    & Pick<ToolkitDefinition, "name" | "tools">
    & Partial<ToolkitDefinition>,
): ToolkitDefinition {
  return {
    alias: "",
    description: "",
    category: "",
    tags: [],
    icon_svg: null,
    schema: {},
    configured: false,
    version: "1.0.0",
    ...fields,
  };
}

/**
 * Completes a skill definition with A2E's defaults.
 *
 * @param fields at least `name` and `description`
 * @returns a definition with every required field present
 * @example Fill defaults
 * ```ts
 * import { skillDefinition } from "./models.ts";
 * import assert from "node:assert/strict";
 * const s = skillDefinition({ name: "x", description: "d" });
 * assert.equal(s.status, "Published");
 * assert.deepEqual(s.input_schema, {});
 * ```
 */
export function skillDefinition(
  fields:
    & Pick<SkillDefinition, "name" | "description">
    & Partial<SkillDefinition>,
): SkillDefinition {
  return {
    version: "1.0.0",
    triggers: [],
    status: "Published",
    when_to_use: "",
    argument_hint: "",
    source: "system",
    tools: null,
    toolkits: null,
    instructions: null,
    file_path: null,
    llm_config: null,
    category: null,
    tags: null,
    max_turns: null,
    timeout_seconds: null,
    icon: null,
    metadata: null,
    input_schema: {},
    output_schema: {},
    arguments: null,
    ...fields,
  };
}

/**
 * Completes a skill result with A2E's defaults.
 *
 * @param fields at least `success` and `duration_ms`
 * @returns a result with every field present
 * @example A success
 * ```ts
 * import { skillResult } from "./models.ts";
 * import assert from "node:assert/strict";
 * const r = skillResult({ success: true, duration_ms: 12, data: { rows: 3 } });
 * assert.equal(r.error, null);
 * ```
 */
export function skillResult(
  fields: Pick<SkillResult, "success" | "duration_ms"> & Partial<SkillResult>,
): SkillResult {
  return {
    data: null,
    summary: null,
    truncated: false,
    error: null,
    error_code: null,
    events: [],
    ...fields,
  };
}
