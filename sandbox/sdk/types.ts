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
 *
 * @example Give a tool's input as zod and its output as JSON Schema
 * ```ts
 * import type { SchemaLike, ToolDef } from "./types.ts";
 * import { describeExports } from "../../protocol/describe.ts";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const input = z.object({ text: z.string(), times: z.number().int().min(1) }) satisfies SchemaLike;
 * const output: SchemaLike = { type: "object", properties: { text: { type: "string" } } };
 * const repeat = {
 *   kind: "tool",
 *   name: "repeat",
 *   description: "Repeat a text",
 *   input,
 *   output,
 *   run: ({ text, times }: z.infer<typeof input>) => ({ text: text.repeat(times) }),
 * } satisfies ToolDef<z.infer<typeof input>>;
 *
 * // Discovery lists both as JSON Schema; the sandbox converts zod with z.toJSONSchema.
 * const hooks = { zodToJsonSchema: (schema: unknown) => z.toJSONSchema(schema as z.ZodType), stringifyObject: String };
 * const [listed] = describeExports(["default"], () => repeat, hooks);
 * const listedInput = listed?.fields.input as { properties: Record<string, { type: string }>; required: string[] };
 * assert.equal(listedInput.properties.times?.type, "integer");
 * assert.deepEqual(listedInput.required, ["text", "times"]);
 * assert.deepEqual(listed?.fields.output, output);
 * ```
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
 *
 * @example Fixed permissions, and permissions from a toolkit's configuration
 * ```ts
 * import type { PermissionsSpec, ToolDef, ToolkitDef } from "./types.ts";
 * import { describeExports } from "../../protocol/describe.ts";
 * import assert from "node:assert/strict";
 *
 * const weatherNet = { net: ["api.weather.example"] } satisfies PermissionsSpec;
 * const notesRoot = ((config) => ({
 *   read: typeof config.root === "string" ? [config.root] : [],
 * })) satisfies PermissionsSpec;
 * const mod: Record<string, unknown> = {
 *   default: { kind: "toolkit", name: "notes", permissions: notesRoot } satisfies ToolkitDef,
 *   weather: {
 *     kind: "tool",
 *     name: "weather",
 *     description: "Today's weather",
 *     permissions: weatherNet,
 *     run: () => "sunny",
 *   } satisfies ToolDef,
 * };
 *
 * // Discovery lists fixed permissions; a function waits for a configuration...
 * const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
 * const listed = describeExports(Object.keys(mod), (name) => mod[name], hooks);
 * assert.deepEqual(listed.map((def) => def.permissions), ["dynamic", { net: ["api.weather.example"] }]);
 * // ...and the host calls it with each session's configuration.
 * assert.deepEqual(notesRoot({ root: "/srv/notes" }), { read: ["/srv/notes"] });
 * ```
 */
export type PermissionsSpec =
  | Permissions
  | ((config: Record<string, unknown>) => Permissions);

/**
 * The level of a `ctx.log` line.
 *
 * @example Log a warning only when it is one
 * ```ts
 * import type { Context, LogLevel, ToolDef } from "./types.ts";
 * import assert from "node:assert/strict";
 *
 * const checkDisk = {
 *   kind: "tool",
 *   name: "check_disk",
 *   description: "Say how full a disk is, warning from 90%",
 *   run({ used_pct }: { used_pct: number }, ctx: Context) {
 *     const level: LogLevel = used_pct >= 90 ? "warn" : "info";
 *     ctx.log(level, `Disk ${used_pct}% full`);
 *     return { ok: level === "info" };
 *   },
 * } satisfies ToolDef<{ used_pct: number }>;
 *
 * // A stand-in for the host's ctx, keeping only what the tool uses.
 * const lines: string[] = [];
 * const ctx = { log: (level, message) => lines.push(`${level}: ${message}`) } as Partial<Context> as Context;
 * assert.deepEqual(checkDisk.run({ used_pct: 95 }, ctx), { ok: false });
 * assert.deepEqual(checkDisk.run({ used_pct: 40 }, ctx), { ok: true });
 * assert.deepEqual(lines, ["warn: Disk 95% full", "info: Disk 40% full"]);
 * ```
 */
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
 *
 * @example Test a skill with a stand-in context
 * ```ts
 * import type { ChatRequest, Context, SkillDef } from "./types.ts";
 * import assert from "node:assert/strict";
 *
 * const haiku = {
 *   kind: "skill",
 *   name: "haiku",
 *   description: "Write a haiku about a topic",
 *   max_turns: 1,
 *   async run({ topic }: { topic: string }, ctx: Context) {
 *     ctx.progress(0, "Asking the model");
 *     const answer = await ctx.llm.chat({
 *       messages: [{ role: "user", content: `A haiku about ${topic}` }],
 *     });
 *     ctx.progress(100, "Done");
 *     return { haiku: answer.text };
 *   },
 * } satisfies SkillDef<{ topic: string }>;
 *
 * // What the host would give the skill, with a canned model answer.
 * const events: string[] = [];
 * const asked: ChatRequest[] = [];
 * const ctx: Context = {
 *   progress: (pct, message) => events.push(`${pct}% ${message ?? ""}`),
 *   status: (message) => events.push(message),
 *   log: (level, message) => events.push(`${level}: ${message}`),
 *   artifact: (name) => events.push(`artifact ${name}`),
 *   tools: { call: (name) => Promise.reject(new Error(`Tool "${name}" is not declared`)) },
 *   llm: {
 *     chat(request) {
 *       asked.push(request);
 *       const text = "Rain on the tin roof";
 *       return Promise.resolve({ text, tool_calls: [], stop_reason: "end_turn", usage: { input_tokens: 9, output_tokens: 6 }, turn: 1 });
 *     },
 *   },
 *   fetch: () => Promise.reject(new Error("No network in this test")),
 *   config: {},
 *   metadata: {},
 *   signal: new AbortController().signal,
 *   session: "test-session",
 *   call: "test-call",
 * };
 *
 * assert.deepEqual(await haiku.run({ topic: "rain" }, ctx), { haiku: "Rain on the tin roof" });
 * assert.equal(asked[0]?.messages[0]?.content, "A haiku about rain");
 * assert.deepEqual(events, ["0% Asking the model", "100% Done"]);
 * ```
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

/**
 * Fields shared by every definition.
 *
 * @example Give a module's tools the same version, tags and permissions
 * ```ts
 * import type { CommonDefinition, ToolDef } from "./types.ts";
 * import { describeExports } from "../../protocol/describe.ts";
 * import assert from "node:assert/strict";
 *
 * const shared = {
 *   version: "2.1.0",
 *   tags: ["text"],
 *   permissions: { read: ["dictionaries"] },
 * } satisfies Omit<CommonDefinition, "name">;
 * const mod: Record<string, unknown> = {
 *   lower: { ...shared, kind: "tool", name: "lower", description: "Lower-case a text", run: ({ text }) => text.toLowerCase() } satisfies ToolDef<{ text: string }>,
 *   upper: { ...shared, kind: "tool", name: "upper", description: "Upper-case a text", run: ({ text }) => text.toUpperCase() } satisfies ToolDef<{ text: string }>,
 * };
 *
 * // Discovery lists the shared fields with each tool.
 * const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
 * const listed = describeExports(Object.keys(mod), (name) => mod[name], hooks);
 * assert.deepEqual(listed.map((def) => [def.name, def.fields.version, def.fields.tags]), [
 *   ["lower", "2.1.0", ["text"]],
 *   ["upper", "2.1.0", ["text"]],
 * ]);
 * assert.deepEqual(listed[0]?.permissions, { read: ["dictionaries"] });
 * ```
 */
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

/**
 * A tool: one operation an agent can call.
 *
 * @example A tool module, run with a stand-in context
 * ```ts
 * import type { Context, ToolDef } from "./types.ts";
 * import assert from "node:assert/strict";
 *
 * interface Args {
 *   text: string;
 *   width?: number;
 * }
 *
 * // The module's default export.
 * const wrapText = {
 *   kind: "tool",
 *   name: "wrap_text",
 *   description: "Wrap a text to a line width",
 *   input: {
 *     type: "object",
 *     properties: { text: { type: "string" }, width: { type: "integer", minimum: 1 } },
 *     required: ["text"],
 *   },
 *   idempotent: true,
 *   run(args: Args, ctx: Context) {
 *     const width = args.width ?? 80;
 *     const lines: string[] = [];
 *     for (const word of args.text.split(/\s+/)) {
 *       const last = lines.at(-1);
 *       if (last !== undefined && last.length + 1 + word.length <= width) {
 *         lines[lines.length - 1] = `${last} ${word}`;
 *       } else {
 *         lines.push(word);
 *       }
 *     }
 *     ctx.status(`${lines.length} lines`);
 *     return { lines };
 *   },
 * } satisfies ToolDef<Args>;
 *
 * const statuses: string[] = [];
 * const ctx = { status: (message) => statuses.push(message) } as Partial<Context> as Context;
 * assert.deepEqual(wrapText.run({ text: "one two three", width: 7 }, ctx), { lines: ["one two", "three"] });
 * assert.deepEqual(statuses, ["2 lines"]);
 * ```
 */
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

/**
 * A toolkit: tools sharing a configuration.
 *
 * @example A toolkit with a secret, and a tool of it reading the configuration
 * ```ts
 * import type { Context, FetchRequest, ToolDef, ToolkitDef } from "./types.ts";
 * import assert from "node:assert/strict";
 *
 * // toolkit.ts in the toolkit's folder.
 * const github = {
 *   kind: "toolkit",
 *   name: "github",
 *   description: "GitHub's REST API",
 *   config: {
 *     type: "object",
 *     properties: { token: { type: "string", secret: true }, org: { type: "string" } },
 *     required: ["token", "org"],
 *   },
 *   permissions: { net: ["api.github.com"] },
 * } satisfies ToolkitDef;
 *
 * // list_repos.ts beside it: ctx.config is the session's configuration of github.
 * const listRepos = {
 *   kind: "tool",
 *   name: "list_repos",
 *   toolkit: github.name,
 *   description: "List the configured organization's repositories",
 *   async run(_args: Record<string, never>, ctx: Context) {
 *     const response = await ctx.fetch({
 *       url: `https://api.github.com/orgs/${ctx.config.org}/repos`,
 *       headers: { authorization: `Bearer ${ctx.config.token}` },
 *     });
 *     const repos: { name: string }[] = JSON.parse(atob(response.bodyBase64));
 *     return repos.map((repo) => repo.name);
 *   },
 * } satisfies ToolDef<Record<string, never>>;
 *
 * // A stand-in ctx: a session's configuration and a canned answer.
 * const sent: FetchRequest[] = [];
 * const ctx = {
 *   config: { token: "ghp_test", org: "denoland" },
 *   fetch(request) {
 *     sent.push(request);
 *     const body = btoa(JSON.stringify([{ name: "deno" }, { name: "std" }]));
 *     return Promise.resolve({ url: request.url, status: 200, statusText: "OK", headers: {}, bodyBase64: body, truncated: false, redirects: [] });
 *   },
 * } as Partial<Context> as Context;
 * assert.deepEqual(await listRepos.run({}, ctx), ["deno", "std"]);
 * assert.equal(sent[0]?.url, "https://api.github.com/orgs/denoland/repos");
 * assert.equal(sent[0]?.headers?.authorization, "Bearer ghp_test");
 * ```
 */
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

/**
 * A skill: a versioned multi-step procedure.
 *
 * @example A skill that calls the tools it declares
 * ```ts
 * import type { Context, SkillDef } from "./types.ts";
 * import assert from "node:assert/strict";
 *
 * const countTodos = {
 *   kind: "skill",
 *   name: "count_todos",
 *   description: "Count the TODO markers in a file",
 *   triggers: ["how many todos"],
 *   tools: ["read_file"],
 *   input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
 *   timeout_seconds: 30,
 *   async run({ path }: { path: string }, ctx: Context) {
 *     const file = await ctx.tools.call("read_file", { path }) as { content: string };
 *     const todos = file.content.split("\n").filter((line) => line.includes("TODO"));
 *     ctx.progress(100, `${todos.length} found`);
 *     return { path, todos: todos.length };
 *   },
 * } satisfies SkillDef<{ path: string }>;
 *
 * // A stand-in ctx whose read_file returns a canned file.
 * const calls: string[] = [];
 * const ctx = {
 *   tools: {
 *     call(name: string, args?: Record<string, unknown>) {
 *       calls.push(`${name} ${JSON.stringify(args)}`);
 *       return Promise.resolve({ content: "// TODO: a\nok\n// TODO: b" });
 *     },
 *   },
 *   progress() {},
 * } as Partial<Context> as Context;
 * assert.deepEqual(await countTodos.run({ path: "main.ts" }, ctx), { path: "main.ts", todos: 2 });
 * assert.deepEqual(calls, ['read_file {"path":"main.ts"}']);
 * ```
 */
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

/**
 * Any definition a module may export.
 *
 * @example Tell which definitions of a module run code
 * ```ts
 * import type { Definition } from "./types.ts";
 * import { describeExports } from "../../protocol/describe.ts";
 * import assert from "node:assert/strict";
 *
 * function runsCode(def: Definition): boolean {
 *   // Toolkits never run; a skill without `run` is driven by its instructions.
 *   return def.kind !== "toolkit" && def.run !== undefined;
 * }
 *
 * const mod: Record<string, Definition> = {
 *   default: { kind: "tool", name: "now", description: "The time", run: () => new Date().toISOString() },
 *   notes: { kind: "toolkit", name: "notes", description: "Notes on disk" },
 *   triage: { kind: "skill", name: "triage", description: "Sort the notes", instructions: "List the notes, then ..." },
 * };
 * assert.deepEqual(Object.values(mod).map(runsCode), [true, false, false]);
 *
 * // Discovery agrees.
 * const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
 * const listed = describeExports(Object.keys(mod), (name) => mod[name], hooks);
 * assert.deepEqual(listed.map((def) => def.runnable), [true, false, false]);
 * ```
 */
export type Definition = ToolDef | ToolkitDef | SkillDef;
