/**
 * The types of the author SDK: what a drop-in module exports (tool, toolkit
 * and skill definitions) and the `ctx` its `run` receives. This file runs
 * beside untrusted code and imports only protocol types.
 *
 * @module
 */

export type { JsonSchema } from "../../protocol/json.ts";
import type { JsonSchema } from "../../protocol/json.ts";

/**
 * A schema as an author may give it: a JSON Schema object, or a zod v4
 * schema (converted with `z.toJSONSchema` when the definition is read).
 */
export type SchemaLike = JsonSchema | { readonly _zod: unknown };

export type { Permissions } from "../../protocol/permissions.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";
export type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";

/**
 * Permissions fixed in the definition, or computed from the toolkit's
 * configuration (e.g. a filesystem toolkit granting its configured `root`).
 * A function is evaluated in a sandbox with no permissions.
 */
export type PermissionsSpec =
  | Permissions
  | ((config: Record<string, unknown>) => Permissions);

/** The level of a `ctx.log` line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

export type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
} from "../../protocol/chat.ts";
import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
export type { Output } from "../../protocol/output.ts";
export { isOutput, output } from "../../protocol/output.ts";

/**
 * The capabilities a tool or skill receives: RPC stubs to the host, nothing
 * else. Events get their `seq` from the host.
 */
export interface Context {
  /** Reports progress as a `progress` event. */
  progress(pct: number, message?: string): void;
  /** Reports a status line as a `status` event. */
  status(message: string): void;
  /** Sends a `log` event. */
  log(level: LogLevel, message: string): void;
  /** Streams an artifact chunk (`bytes` as text is UTF-8 encoded). */
  artifact(
    name: string,
    mime: string,
    bytes: Uint8Array | string,
    final?: boolean,
  ): void;
  /** Tools this skill declared; the host runs each in its own sandbox. */
  tools: {
    call(name: string, args?: Record<string, unknown>): Promise<unknown>;
  };
  /** The host's LLM, with host-held credentials. Counts against `max_turns`. */
  llm: {
    chat(request: ChatRequest): Promise<ChatResponse>;
  };
  /**
   * An HTTP request the host performs (its egress broker): only to hosts in
   * the grant's `net` list, never to loopback or private addresses unless
   * the operator allows the host, with the operator's secrets for that host
   * added by the host (never visible here). Rejects when refused.
   */
  fetch(request: FetchRequest): Promise<FetchResponse>;
  /** The calling session's toolkit configuration (own toolkit only). */
  config: Record<string, unknown>;
  /** The call's `metadata` (skills), or `{}`. */
  metadata: Record<string, unknown>;
  /** Aborted on timeout, cancellation or client disconnect. */
  signal: AbortSignal;
  /** The session id. */
  session: string;
  /** The call id (the request's `id`). */
  call: string;
}

/** Fields shared by every definition. */
export interface CommonDefinition {
  /** The unique name agents call or refer to it by. */
  name: string;
  /** What it does, for agents and models. */
  description?: string;
  /** Its version, as listed to agents. @default "1.0.0" */
  version?: string;
  /** Free-form labels agents filter and search by. */
  tags?: string[];
  /** Markdown guidance for models: when to use it, argument shapes, pitfalls. */
  prompt?: string;
  /** What its code needs from the system. @default {} (no permissions beyond its own folder) */
  permissions?: PermissionsSpec;
}

/** A tool: one operation an agent can call. */
export interface ToolDef<Args = Record<string, unknown>>
  extends CommonDefinition {
  /** Marks a tool definition; set by `defineTool`. */
  kind: "tool";
  /** What the tool does, for agents and models (required for tools). */
  description: string;
  /** Input schema (zod or JSON Schema). Alias: `input_schema`. */
  input?: SchemaLike;
  /** Output schema (zod or JSON Schema). Alias: `output_schema`. */
  output?: SchemaLike;
  /** Whether it may emit events while it runs (wire `streaming`). @default true */
  streaming?: boolean;
  /** Whether repeating a call with the same arguments is safe. @default false */
  idempotent?: boolean;
  /** Found only by search when true. @default false */
  defer_loading?: boolean;
  /**
   * The toolkit it belongs to; set automatically in a toolkit's folder. It
   * may only name that toolkit (or one defined beside it, in its own
   * folder): naming another refuses the tool at load.
   */
  toolkit?: string;
  /** `"per-call"` forces a fresh worker for every call. @default "warm" */
  isolation?: "warm" | "per-call";
  /**
   * Set on a tool that runs code the client sent (as `eval_typescript`
   * does): its calls run in sandbox processes of the calling session only,
   * never beside another session's or the author's other work. @default false
   */
  runs_client_code?: boolean;
  /**
   * Runs the tool in its sandbox; the return value (or an {@link Output})
   * becomes the result's `data`; a throw fails the call with `tool_error`.
   */
  run(args: Args, ctx: Context): unknown;
}

/** A toolkit: tools sharing a configuration. */
export interface ToolkitDef extends CommonDefinition {
  /** Marks a toolkit definition; set by `defineToolkit`. */
  kind: "toolkit";
  /** A short alternative name. @default "" */
  alias?: string;
  /** A free-form grouping, e.g. `filesystem`. @default "" */
  category?: string;
  /** An icon as SVG markup. @default null */
  icon_svg?: string;
  /** Configuration schema; fields with `secret: true` are never echoed. */
  config?: SchemaLike;
  /**
   * Loose tools (in no toolkit's folder) below this toolkit's own folder
   * that belong to it; a tool elsewhere cannot be claimed.
   */
  tools?: string[];
}

/** A skill: a versioned multi-step procedure. */
export interface SkillDef<Args = Record<string, unknown>>
  extends CommonDefinition {
  /** Marks a skill definition; set by `defineSkill`. */
  kind: "skill";
  /** What the skill does, for agents and models (required for skills). */
  description: string;
  /** Phrases that suggest using the skill. @default [] */
  triggers?: string[];
  /** The tools it may call through `ctx.tools`. @default null (none) */
  tools?: string[];
  /** The toolkits whose tools it may call. @default null (none) */
  toolkits?: string[];
  /** Schema of its arguments (zod or JSON Schema). Alias: `input`. @default {} */
  input_schema?: SchemaLike;
  /** Schema of the `data` it returns (zod or JSON Schema). Alias: `output`. @default {} */
  output_schema?: SchemaLike;
  /** Markdown instructions for the model; a skill without `run` is driven by these. */
  instructions?: string;
  /**
   * The LLM provider it uses (the wire's `LLMConfig`); missing credentials and
   * settings come from the host's entry for the same provider.
   * @default the host's default provider
   */
  llm_config?: {
    /** Which provider to call, e.g. `openai` or `anthropic`. */
    provider_name: string;
    /** The provider's credentials. @default the host's, for the same provider */
    provider_credentials?: Record<string, unknown>;
    /** `model`, `max_tokens`, `temperature`, ... @default the host's, for the same provider */
    provider_config?: Record<string, unknown>;
  };
  /** The names of its arguments, in order. @default the keys of `input_schema.properties` */
  arguments?: string[];
  /** When an agent should use it. @default "" */
  when_to_use?: string;
  /** A short hint of the arguments it expects. @default "" */
  argument_hint?: string;
  /** A free-form grouping agents filter by. @default null */
  category?: string;
  /** The most LLM turns a call may take (capped by the host's `maxTurns`). @default the host's `defaultMaxTurns` */
  max_turns?: number;
  /** The longest a call may run, in seconds. @default no cap beyond the request's `timeout` */
  timeout_seconds?: number;
  /** An icon for user interfaces. @default null */
  icon?: string;
  /** Free-form extra data listed with the skill. @default {} */
  metadata?: Record<string, unknown>;
  /** `"per-call"` forces a fresh worker for every call. @default "warm" */
  isolation?: "warm" | "per-call";
  /** Omitted for instruction-only skills, which the host's agent loop runs. */
  run?(args: Args, ctx: Context): unknown;
}

/** Any definition a module may export. */
export type Definition = ToolDef | ToolkitDef | SkillDef;
