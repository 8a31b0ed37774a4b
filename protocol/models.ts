/**
 * The A2E v1.0 data models (A2E-WIRE.md §3–6), as TypeScript interfaces with
 * snake_case fields exactly as on the wire. Code works with the camelCase
 * domain objects of `domain.ts`; `codec.ts` converts between the two.
 *
 * @module
 */

import type { SkillStatus } from "./codes.ts";

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** One parameter of a tool, derived from its JSON Schema (§4). */
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

/** A tool as listed to agents (§4). */
export interface ToolDefinition {
  /** The unique name agents call it by (`tool_name` in `tool/call/req`). */
  name: string;
  /** What the tool does, for agents and models. */
  description: string;
  /** The arguments it takes. Wire default `[]`. */
  input_parameters: ToolParameter[];
  /** The fields of the `data` it returns. Wire default `[]`. */
  output_parameters: ToolParameter[];
  /** Whether it may emit `tool/event`s while it runs. Wire default `true`. */
  streaming: boolean;
  /** Whether repeating a call with the same arguments is safe. Wire default `false`. */
  idempotent: boolean;
  /** Free-form labels, matched by `filter_tags` (all must match) and by search. Wire default `[]`. */
  tags: string[];
  /** The tool's version. Wire default `"1.0.0"`. */
  version: string;
  /** The name of the toolkit it belongs to, or `null` when none. */
  toolkit: string | null;
  /**
   * When true, list mode leaves it out: only a search (non-empty `query`)
   * with `include_deferred` finds it. Wire default `false`.
   */
  defer_loading: boolean;
}

/** One event of a call (§3). */
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

/** The outcome of a tool call (§4). */
export interface ToolResult {
  /** Whether the tool ran and succeeded; when false, `error_code` and `error` say why. */
  success: boolean;
  /** The name of the tool called. */
  tool_name: string;
  /** What the tool returned (any JSON value). Wire default `null`. */
  data: unknown;
  /** A short form of `data` the tool chose to give, for models. Wire default `null`. */
  summary: unknown;
  /** Whether `data` or `events` were cut to fit the host's limits. Wire default `false`. */
  truncated: boolean;
  /** The exit code the tool reported, or `null` when it reported none. */
  exit_code: number | null;
  /** A human-readable message when the call failed, else `null`. */
  error: string | null;
  /** An A2E error code (e.g. `tool_error`, `timeout`) when the call failed, else `null`. */
  error_code: string | null;
  /** How long the call took, in whole milliseconds. */
  duration_ms: number;
  /** The events the call emitted, in `seq` order. Wire default `[]`. */
  events: CallEvent[];
}

/** A toolkit as listed to agents (§5). */
export interface ToolkitDefinition {
  /** The unique name agents refer to it by (`toolkit_name` in `toolkit/configure/req`). */
  name: string;
  /** A short alternative name. Wire default `""`. */
  alias: string;
  /** What the toolkit offers. Wire default `""`. */
  description: string;
  /** A free-form grouping, e.g. `filesystem`. Wire default `""`. */
  category: string;
  /** Free-form labels, matched by `filter_tags`. Wire default `[]`. */
  tags: string[];
  /** An icon as SVG markup, or `null` when none. */
  icon_svg: string | null;
  /** JSON Schema of the configuration, secrets included as fields. */
  schema: JsonObject;
  /** The names of the tools it groups. */
  tools: string[];
  /** Whether the asking session has configured it. Wire default `false`. */
  configured: boolean;
  /** The toolkit's version. Wire default `"1.0.0"`. */
  version: string;
}

/** Which LLM provider a skill uses, and how (§6). */
export interface LLMConfig {
  /** Which provider to call, e.g. `openai` or `anthropic`. */
  provider_name: string;
  /** The provider's credentials (e.g. `api_key`); never sent back to a client. */
  provider_credentials: JsonObject;
  /** The Python SDK's default is `false`; skillbox treats it as `{}`. */
  provider_config: JsonObject | false | null;
  /** Whether this is the host's default provider. Wire default `false`. */
  is_default: boolean;
}

/** A skill as discovered by agents (§6). */
export interface SkillDefinition {
  /** The unique name agents call it by (`name` in `skill/call/req`). */
  name: string;
  /** The skill's version. Default `"1.0.0"`. */
  version: string;
  /** What the skill does, for agents and models. */
  description: string;
  /** Phrases that suggest using the skill. Default `[]`. */
  triggers: string[];
  /** Its lifecycle state; only `Published` skills run. Default `"Published"`. */
  status: SkillStatus;
  /** When an agent should use it. Default `""`. */
  when_to_use: string;
  /** A short hint of the arguments it expects. Default `""`. */
  argument_hint: string;
  /** Who put it there: `system` (skillbox's own), `user` or `project`. Default `"system"`. */
  source: string;
  /** The tools it may call, or `null` when it declares none. */
  tools: string[] | null;
  /** The toolkits whose tools it may call, or `null` when it declares none. */
  toolkits: string[] | null;
  /** Markdown instructions for the model, or `null`. */
  instructions: string | null;
  /** The file it was loaded from, or `null`. */
  file_path: string | null;
  /** The LLM provider it uses (credentials never included), or `null` for the host's default. */
  llm_config: LLMConfig | null;
  /** A free-form grouping, matched by `filter_categories`, or `null`. */
  category: string | null;
  /** Free-form labels, matched by `filter_tags`, or `null`. */
  tags: string[] | null;
  /** The most LLM turns a call may take, or `null` for the host's default. */
  max_turns: number | null;
  /** The longest a call may run, in seconds (the request's `timeout` can only shorten it), or `null` for no cap of its own. */
  timeout_seconds: number | null;
  /** An icon for user interfaces, or `null`. */
  icon: string | null;
  /** Free-form extra data (e.g. `blocked_reason` when `Blocked`), or `null`. */
  metadata: JsonObject | null;
  /** JSON Schema of its `arguments`. Default `{}`. */
  input_schema: JsonObject;
  /** JSON Schema of the `data` it returns. Default `{}`. */
  output_schema: JsonObject;
  /** The names of its arguments, in order, or `null`. */
  arguments: string[] | null;
}

/** The outcome of a skill call (§6). */
export interface SkillResult {
  /** Whether the skill ran and succeeded; when false, `error_code` and `error` say why. */
  success: boolean;
  /** What the skill returned (any JSON value). Wire default `null`. */
  data: unknown;
  /** A short form of `data` the skill chose to give. Wire default `null`. */
  summary: unknown;
  /** Whether `data` or `events` were cut to fit the host's limits. Wire default `false`. */
  truncated: boolean;
  /** A human-readable message when the call failed, else `null`. */
  error: string | null;
  /** An A2E error code (e.g. `skill_error`, `max_turns_exceeded`) when the call failed, else `null`. */
  error_code: string | null;
  /** How long the call took, in whole milliseconds. */
  duration_ms: number;
  /** The events the call emitted, in `seq` order. Wire default `[]`. */
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
