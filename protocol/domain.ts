/**
 * The domain objects of A2E as skillbox code handles them: camelCase, one
 * type per concept. The wire forms (snake_case, `models.ts`) exist only at
 * the edge; `codec.ts` converts between the two, in one place.
 *
 * @module
 */

import type { SkillStatus } from "./codes.ts";
import type { CallEvent, JsonObject } from "./models.ts";

export type { CallEvent, JsonObject } from "./models.ts";

/**
 * A tool: what agents list and call, what skills offer to a model, and what
 * the provider tool formats are derived from. On the wire it is a
 * `ToolDefinition` whose `input_parameters` are derived from `inputSchema`.
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

/** The outcome of one tool call (the wire's `ToolResult`). */
export interface ToolOutcome {
  /** Whether the tool ran and succeeded; else `errorCode` and `error` say why. */
  success: boolean;
  /** The tool called. */
  toolName: string;
  /** What the tool returned (any JSON value), or `null`. */
  data: unknown;
  /** A short form of `data` the tool chose to give, or `null`. */
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

/** A toolkit as listed to agents (the wire's `ToolkitDefinition`). */
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

/** Which LLM provider to use, and how (the wire's `LLMConfig`). */
export interface LlmChoice {
  /** The provider, e.g. `openai` or `anthropic`. */
  providerName: string;
  /** Its credentials (e.g. `api_key`); never sent back to a client. */
  providerCredentials: JsonObject;
  /** Provider options; the Python SDK sends `false` for none. */
  providerConfig: JsonObject | false | null;
  /** Whether this is the default provider. */
  isDefault: boolean;
}

/** A skill as discovered by agents (the wire's `SkillDefinition`). */
export interface Skill {
  /** The unique name agents call it by. */
  name: string;
  /** The skill's version. */
  version: string;
  /** What the skill does. */
  description: string;
  /** Phrases that suggest using it. */
  triggers: string[];
  /** Its lifecycle state; only `Published` skills run. */
  status: SkillStatus;
  /** When an agent should use it. */
  whenToUse: string;
  /** A short hint of the arguments it expects. */
  argumentHint: string;
  /** Who put it there: `system`, `user` or `project`. */
  source: string;
  /** The tools it may call, or `null`. */
  tools: string[] | null;
  /** The toolkits whose tools it may call, or `null`. */
  toolkits: string[] | null;
  /** Markdown instructions for the model, or `null`. */
  instructions: string | null;
  /** The file it was loaded from, or `null`. */
  filePath: string | null;
  /** The LLM provider it uses (no credentials), or `null`. */
  llmConfig: LlmChoice | null;
  /** A free-form grouping, or `null`. */
  category: string | null;
  /** Free-form labels, or `null`. */
  tags: string[] | null;
  /** The most LLM turns a call may take, or `null`. */
  maxTurns: number | null;
  /** The longest a call may run, in seconds, or `null`. */
  timeoutSeconds: number | null;
  /** An icon for user interfaces, or `null`. */
  icon: string | null;
  /** Free-form extra data (e.g. `blocked_reason`), or `null`. */
  metadata: JsonObject | null;
  /** JSON Schema of its arguments. */
  inputSchema: JsonObject;
  /** JSON Schema of the `data` it returns. */
  outputSchema: JsonObject;
  /** The names of its arguments, in order, or `null`. */
  arguments: string[] | null;
}

/** The outcome of one skill call (the wire's `SkillResult`). */
export interface SkillOutcome {
  /** Whether the skill ran and succeeded; else `errorCode` and `error` say why. */
  success: boolean;
  /** What the skill returned, or `null`. */
  data: unknown;
  /** A short form of `data`, or `null`. */
  summary: unknown;
  /** Whether `data` or `events` were cut to fit the host's limits. */
  truncated: boolean;
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
 * Completes a tool with the A2E defaults.
 *
 * @param fields at least `name` and `description`
 * @returns the tool, every field present
 * @example Fill defaults
 * ```ts
 * import { tool } from "./domain.ts";
 * import assert from "node:assert/strict";
 * const t = tool({ name: "add", description: "Add numbers" });
 * assert.deepEqual(t.inputSchema, { type: "object" });
 * assert.equal(t.deferLoading, false);
 * ```
 */
export function tool(
  fields: Pick<Tool, "name" | "description"> & Partial<Tool>,
): Tool {
  return {
    inputSchema: { type: "object" },
    outputSchema: {},
    streaming: true,
    idempotent: false,
    tags: [],
    version: "1.0.0",
    toolkit: null,
    deferLoading: false,
    ...fields,
  };
}

/**
 * Completes a tool outcome with the A2E defaults.
 *
 * @param fields at least `success`, `toolName` and `durationMs`
 * @returns the outcome, every field present
 * @example A failure
 * ```ts
 * import { toolOutcome } from "./domain.ts";
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
 * Completes a skill outcome with the A2E defaults.
 *
 * @param fields at least `success` and `durationMs`
 * @returns the outcome, every field present
 * @example A success
 * ```ts
 * import { skillOutcome } from "./domain.ts";
 * import assert from "node:assert/strict";
 * const o = skillOutcome({ success: true, durationMs: 12, data: { rows: 3 } });
 * assert.equal(o.errorCode, null);
 * ```
 */
export function skillOutcome(
  fields: Pick<SkillOutcome, "success" | "durationMs"> & Partial<SkillOutcome>,
): SkillOutcome {
  return {
    data: null,
    summary: null,
    truncated: false,
    error: null,
    errorCode: null,
    events: [],
    ...fields,
  };
}
