/**
 * One MCP session's server: an official-SDK `Server` whose handlers drive
 * an {@link A2eLink}, so that listing, searching, configuring and calling go
 * through the dispatcher like any A2E request. Tools, skills (as tools, and
 * `SKILL.md` instructions as prompts), `search_tools` and
 * `configure_toolkit`; and the session's Agent Skills folders as `skill://`
 * resources with the Skills extension (`skills_extension.ts`), beside
 * `code_api`'s declarations. Also serves one session on stdio
 * ({@link serveMcpStdio}); `http.ts` serves sessions over HTTP.
 *
 * ## The session's catalog
 *
 * One MCP session's view of the host's tools and published skills, loaded
 * through its {@link A2eLink} on first use and kept until the host says its
 * tools changed. A skill named like a tool or a built-in MCP tool is listed
 * as `<name>_skill`.
 *
 * ## Built-in tools
 *
 * The tools skillbox adds to its MCP tool list: `search_tools` (finds any
 * tool, deferred ones included, with the same index as A2E search) and
 * `configure_toolkit` (the session's toolkit configuration).
 *
 * ## Events as notifications
 *
 * A running call's events as MCP notifications: `progress` as
 * `notifications/progress` (when the request carried a `progressToken`),
 * `log` and `status` as `notifications/message` at the matching level, a
 * skill's `llm.token` text as progress messages, coalesced (sent within
 * `coalesceMs`, never held until the end), and the other skill events
 * (`tool.started`, ...) as debug messages.
 *
 * ## The `code_api` resource
 *
 * `code_api`'s declarations as an MCP resource, `skillbox://code/api.d.ts`
 * (`text/typescript`), beside the Skills extension's resources: what
 * `run_code`'s `tools` and `skills` hold for this MCP session. A read
 * calls `code_api` through the session's host session, so it takes the one
 * call path (the session's policy, history) and says exactly what the tool
 * says. A client may subscribe to it: when the registry changes (hot
 * reload, an imported server's tools) or the session configures a
 * toolkit, it gets `notifications/resources/updated`.
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  type GetPromptRequest,
  GetPromptRequestSchema,
  type GetPromptResult,
  type JSONRPCRequest,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  type Prompt,
  type ServerNotification,
  type ServerRequest,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { OutgoingMessage } from "../capability.ts";
import type { SkillDefinition, SkillResult } from "../../protocol/skill.ts";
import {
  type CallEvent,
  parametersToSchema,
  type ToolDefinition,
  type ToolResult,
} from "../../protocol/tool.ts";
import { type A2eLink, openA2eLink } from "./a2e_link.ts";
import { StdioLineTransport } from "./stdio.ts";
import type { TransportContext } from "../transports/transport_context.ts";
import {
  type CallParams,
  errorResult,
  invalidParams,
  methodNotFound,
  readCallParams,
  skillToMcpTool,
  toCallToolResult,
  toMcpTool,
  type ToolFacts,
} from "./tool_mapping.ts";
import {
  type RemoteSkill,
  servedFolders,
  SkillFileCache,
  SKILLS_EXTENSION,
  SkillsServer,
} from "./skills_extension.ts";
import { isPlainObject } from "../../protocol/json.ts";
import { describeZodError } from "../../protocol/request_schemas.ts";
import { z } from "zod";
import { CODE_API_TOOL } from "../code/code_api.ts";

/** The version skillbox reports to MCP clients and imported servers. */
export const SERVER_VERSION = "0.1.0";

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The registry's schemas and permissions of a tool, when known. */
  facts?: (name: string) => ToolFacts | undefined;
  /** The imported servers' verified skills now. @default none */
  remoteSkills?: () => RemoteSkill[];
}

// One digest cache of skill files for every session of the process.
const SHARED_SKILL_FILES = new SkillFileCache();

// What a session's handlers work with.
interface Served {
  link: A2eLink;
  catalog: SessionCatalog;
  options: McpServerOptions;
  /** Tells a subscribed client that `code_api`'s declarations changed. */
  codeApiChanged(): void;
}

/**
 * Creates the MCP server of one session; it takes the link's push messages
 * (a hot reload's `tools.changed` becomes `list_changed` notifications).
 *
 * @param link the session's host session
 * @param options where tool schemas come from
 * @returns the SDK server; connect it to a transport
 * @example
 * ```ts ignore
 * const server = createMcpServer(link);
 * await server.connect(transport);
 * ```
 */
export function createMcpServer(
  link: A2eLink,
  options: McpServerOptions = {},
): Server {
  const server = new Server(
    { name: "skillbox", version: SERVER_VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        logging: {},
        extensions: { [SKILLS_EXTENSION]: { directoryRead: true } },
      },
    },
  );
  const catalog = new SessionCatalog(link);
  const codeApi = new CodeApiResource({
    request: (message) => link.request(message),
    listed: async () => (await catalog.get()).tools.has(CODE_API_TOOL),
  });
  const codeApiChanged = () => {
    if (!codeApi.subscribed) return;
    server.sendResourceUpdated({ uri: CODE_API_URI }).catch(() => {});
  };
  const served: Served = { link, catalog, options, codeApiChanged };
  const skills = new SkillsServer({
    folders: async () =>
      servedFolders((await served.catalog.get()).skills.values()),
    // Those the session discovers, like its own folders.
    remote: async () => {
      const all = options.remoteSkills?.() ?? [];
      if (all.length === 0) return [];
      const seen = new Set(
        [...(await served.catalog.get()).skills.values()].map((s) => s.name),
      );
      return all.filter((r) => seen.has(r.name));
    },
  }, { cache: SHARED_SKILL_FILES });
  server.setRequestHandler(ListToolsRequestSchema, () => listTools(served));
  // Not `setRequestHandler`: its tools/call wrapper runs zod three times a
  // call (`tool_mapping.ts`'s `tools/call` params section says why that matters).
  server.fallbackRequestHandler = (
    request: JSONRPCRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ) => {
    if (request.method !== "tools/call") {
      const answer = codeApi.handle(
        request.method,
        request.params,
        (method, params) => skills.handle(method, params, extra.signal),
      );
      if (answer === undefined) throw methodNotFound();
      return answer as Promise<never>;
    }
    return callTool(served, readCallParams(request.params), extra);
  };
  server.setRequestHandler(
    ListPromptsRequestSchema,
    () => listPrompts(served.catalog),
  );
  server.setRequestHandler(
    GetPromptRequestSchema,
    (request: GetPromptRequest) => getPrompt(served.catalog, request),
  );
  refuseParamsAsInvalid(server);
  link.onPush = (message) => {
    if (message.type !== "invoke/event" || message.kind !== "tools.changed") {
      return;
    }
    served.catalog.reset();
    server.sendToolListChanged().catch(() => {});
    server.sendPromptListChanged().catch(() => {});
    server.sendResourceListChanged().catch(() => {});
    codeApiChanged();
  };
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => unknown;

// The SDK answers a request whose params its schema refuses (`initialize`,
// `prompts/get`, `logging/setLevel`, ...) with InternalError (-32603) and
// zod's issues as multi-line JSON: a client's own mistake, reported as the
// server's. Each handler the SDK holds (set by `setRequestHandler`, which
// throws zod's error synchronously) answers InvalidParams, in one line.
// tools/call takes the fallback handler: nothing changes on its path.
function refuseParamsAsInvalid(server: Server): void {
  const handlers = (server as unknown as {
    _requestHandlers?: Map<string, RequestHandler>;
  })._requestHandlers;
  // A private field of the pinned SDK: another version may not have it,
  // and then its own answers stand (server_test.ts notices).
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, (request, extra) => {
      try {
        return handler(request, extra);
      } catch (error) {
        // The SDK parses with `zod/v4-mini`: its errors are core's.
        if (!(error instanceof z.core.$ZodError)) throw error;
        throw invalidParams(
          `Invalid ${method} request: ${describeZodError(error as z.ZodError)}`,
        );
      }
    });
  }
}

async function listTools(served: Served): Promise<{ tools: McpTool[] }> {
  const { tools, skills } = await served.catalog.get();
  const listed: McpTool[] = [];
  for (const tool of tools.values()) {
    listed.push(toMcpTool(tool, served.options.facts?.(tool.name)));
  }
  for (const [name, skill] of skills) {
    listed.push(skillToMcpTool(skill, name));
  }
  listed.push(SEARCH_TOOL, CONFIGURE_TOOL);
  return { tools: listed };
}

// The hot path: one await on the catalog, one on the answer, one to flush.
async function callTool(
  served: Served,
  params: CallParams,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): Promise<CallToolResult> {
  const { link, catalog } = served;
  const { name, arguments: args } = params;
  if (name === SEARCH_TOOL.name) {
    return await searchTools(link, args, served.options);
  }
  if (name === CONFIGURE_TOOL.name) {
    const configured = await configureToolkit(link, args);
    if (!configured.isError) served.codeApiChanged();
    return configured;
  }
  const listed = await catalog.get();
  // A skill added since the list, or a deferred tool: look again once.
  const skill = listed.skills.get(name) ??
    (listed.tools.has(name) ? undefined : await catalog.lookAgain(name));
  const relay = new EventRelay({
    progressToken: params.progressToken,
    send: (n) => extra.sendNotification(n),
    logger: name,
  });
  const answer = await link.request(
    skill
      ? {
        type: "skill/call/req",
        name: skill.name,
        arguments: args,
        streaming: true,
      }
      : {
        type: "tool/call/req",
        tool_name: name,
        arguments: args,
        streaming: true,
      },
    { onEvent: relay.onEvent, signal: extra.signal },
  );
  await relay.flush();
  return answerToResult(answer);
}

async function listPrompts(
  catalog: SessionCatalog,
): Promise<{ prompts: Prompt[] }> {
  const prompts: Prompt[] = [];
  for (const skill of (await catalog.get()).skills.values()) {
    if (!skill.instructions) continue;
    prompts.push({
      name: skill.name,
      title: skill.name,
      description: skill.description,
      arguments: (skill.arguments ?? []).map((a) => ({ name: a })),
    });
  }
  return { prompts };
}

async function getPrompt(
  catalog: SessionCatalog,
  request: GetPromptRequest,
): Promise<GetPromptResult> {
  const skill = [...(await catalog.get()).skills.values()].find((s) =>
    s.name === request.params.name && s.instructions
  );
  if (!skill) {
    throw invalidParams(`Prompt "${request.params.name}" not found`);
  }
  const args = Object.entries(request.params.arguments ?? {});
  const text = skill.instructions +
    (args.length > 0
      ? "\n\nArguments:\n" + args.map(([k, v]) => `- ${k}: ${v}`).join("\n")
      : "");
  return {
    description: skill.description,
    messages: [{ role: "user", content: { type: "text", text } }],
  };
}

// An A2E error as an MCP client reads it: the A2E message type the host
// names ("Cannot handle \"toolkit/configure/req\": ...") becomes what the
// client asked for (a method or a built-in tool).
function a2eError(answer: OutgoingMessage, asked: string): CallToolResult {
  const message = String(answer.message ?? "").replace(
    /"[a-z_]+\/[a-z_]+\/(req|resp)"/g,
    `"${asked}"`,
  );
  return errorResult(String(answer.code), message);
}

function answerToResult(answer: OutgoingMessage): CallToolResult {
  if (answer.type === "error") return a2eError(answer, "tools/call");
  if (answer.type === "skill/call/resp") {
    const data = answer.data as SkillResult | null;
    if (!data) {
      const error = (answer.error ?? {}) as Record<string, unknown>;
      return errorResult(
        String(error.code ?? "skill_error"),
        String(error.message ?? "The skill returned no result"),
      );
    }
    return toCallToolResult(data);
  }
  return toCallToolResult(answer.data as ToolResult);
}

async function searchTools(
  link: A2eLink,
  args: Record<string, unknown>,
  options: McpServerOptions,
): Promise<CallToolResult> {
  const query = typeof args.query === "string" ? args.query.trim() : "";
  if (query === "") {
    return errorResult("schema_violation", 'search_tools needs a "query"');
  }
  const limit = typeof args.limit === "number" && args.limit > 0
    ? Math.min(Math.floor(args.limit), 50)
    : 10;
  const answer = await link.request({
    type: "tool/list/req",
    query,
    include_deferred: true,
  });
  if (answer.type === "error") return a2eError(answer, SEARCH_TOOL.name);
  const tools = (answer.tools as ToolDefinition[]).slice(0, limit).map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: options.facts?.(t.name)?.inputSchema ??
      parametersToSchema(t.input_parameters),
  }));
  const text = tools.length === 0
    ? `No tool matches "${query}"`
    : tools.map((t) => `${t.name}: ${t.description}`).join("\n");
  return { content: [{ type: "text", text }], structuredContent: { tools } };
}

async function configureToolkit(
  link: A2eLink,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const toolkit = typeof args.toolkit === "string" ? args.toolkit : "";
  const config = isPlainObject(args.config) ? args.config : {};
  const answer = await link.request({
    type: "toolkit/configure/req",
    toolkit_name: toolkit,
    config,
  });
  if (answer.type === "error") return a2eError(answer, CONFIGURE_TOOL.name);
  const status = String(answer.status ?? "error");
  const message = answer.message === null || answer.message === undefined
    ? null
    : String(answer.message);
  // The config is never echoed: it may hold secrets.
  const structured = { toolkit, status, message };
  const text = status === "ok"
    ? `Toolkit "${toolkit}" configured`
    : `Cannot configure toolkit "${toolkit}": ${message ?? status}`;
  return {
    content: [{ type: "text", text }],
    structuredContent: structured,
    ...(status === "ok" ? {} : { isError: true }),
  };
}

/** The tools and skills listed to one MCP session. */
export interface Catalog {
  /** By name. */
  tools: Map<string, ToolDefinition>;
  /** By MCP name. */
  skills: Map<string, SkillDefinition>;
}

/**
 * A session's catalog, loaded once and reloaded after {@link reset}.
 *
 * @example A skill named like a tool is listed as `<name>_skill`
 * ```ts
 * import { SessionCatalog } from "./server.ts";
 * import type { A2eLink } from "./a2e_link.ts";
 * import assert from "node:assert/strict";
 * const envelope = { id: "x", version: "1", ts: 0, req_id: "r" };
 * const link: A2eLink = {
 *   inFlight: 0, close() {},
 *   request: (m) => Promise.resolve(m.type === "tool/list/req"
 *     ? { ...envelope, type: "tool/list/resp", tools: [{ name: "echo" }] }
 *     : { ...envelope, type: "skill/discover/resp",
 *       skills: [{ name: "echo", status: "Published" }] }),
 * };
 * const catalog = await new SessionCatalog(link).get();
 * assert.deepEqual([...catalog.skills.keys()], ["echo_skill"]);
 * ```
 */
export class SessionCatalog {
  #link: A2eLink;
  #cached: Promise<Catalog> | null = null;
  // Names looked up again once and still unlisted (deferred tools): not
  // reloaded on every call; forgotten with the catalog on a change. The
  // client names them: past MAX_UNLISTED, the oldest is forgotten.
  #unlisted = new Set<string>();

  /** @param link the session's host session */
  constructor(link: A2eLink) {
    this.#link = link;
  }

  /**
   * The catalog, loading it on first use.
   *
   * @returns the tools and skills
   */
  get(): Promise<Catalog> {
    return this.#cached ??= loadCatalog(this.#link);
  }

  /** Forgets the catalog: the host's tools changed. */
  reset(): void {
    this.#cached = null;
    this.#unlisted = new Set();
  }

  /**
   * The skill a call to `name` runs, when `name` is in neither list of
   * `catalog`: a skill added since the list, or a deferred tool. Looks again
   * once per name until the next {@link reset}.
   *
   * @param name the called MCP name
   * @returns the skill, or undefined for a tool
   */
  async lookAgain(name: string): Promise<SkillDefinition | undefined> {
    if (this.#unlisted.has(name)) return undefined;
    // The catalog only: reset() would forget the other unlisted names, and
    // a client alternating two deferred tools would reload on every call.
    this.#cached = null;
    const skill = (await this.get()).skills.get(name);
    if (!skill) {
      if (this.#unlisted.size >= MAX_UNLISTED) {
        this.#unlisted.delete(this.#unlisted.values().next().value!);
      }
      this.#unlisted.add(name);
    }
    return skill;
  }
}

// Unlisted names one session's catalog remembers.
const MAX_UNLISTED = 256;

async function loadCatalog(link: A2eLink): Promise<Catalog> {
  const [toolsAnswer, skillsAnswer] = await Promise.all([
    link.request({ type: "tool/list/req" }),
    link.request({ type: "skill/discover/req" }),
  ]);
  const listed = toolsAnswer.type === "tool/list/resp"
    ? toolsAnswer.tools as ToolDefinition[]
    : [];
  const tools = new Map(listed.map((tool) => [tool.name, tool]));
  const skills = new Map<string, SkillDefinition>();
  if (skillsAnswer.type === "skill/discover/resp") {
    for (const skill of skillsAnswer.skills as SkillDefinition[]) {
      if (skill.status !== "Published") continue;
      const reserved = tools.has(skill.name) ||
        skill.name === SEARCH_TOOL.name || skill.name === CONFIGURE_TOOL.name;
      skills.set(reserved ? `${skill.name}_skill` : skill.name, skill);
    }
  }
  return { tools, skills };
}

/**
 * `search_tools`: a query in, names, descriptions and input schemas out.
 *
 * @example
 * ```ts
 * import { SEARCH_TOOL } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(SEARCH_TOOL.name, "search_tools");
 * ```
 */
export const SEARCH_TOOL: McpTool = {
  name: "search_tools",
  title: "Search tools",
  description:
    "Search every skillbox tool, including deferred ones not in the tool list, by what it does. Returns names, descriptions and input schemas; call a found tool by its name.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "Words describing the task" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: 50,
        description: "How many tools to return (default 10)",
      },
    },
    required: ["query"],
  },
  outputSchema: {
    type: "object",
    properties: {
      tools: {
        type: "array",
        items: {
          type: "object",
          properties: {
            name: { type: "string" },
            description: { type: "string" },
            inputSchema: { type: "object" },
          },
          required: ["name", "description", "inputSchema"],
        },
      },
    },
    required: ["tools"],
  },
  annotations: {
    title: "Search tools",
    readOnlyHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
};

/**
 * `configure_toolkit`: sets this session's configuration of a toolkit,
 * validated against the toolkit's schema; secrets are never echoed.
 *
 * @example
 * ```ts
 * import { CONFIGURE_TOOL } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(CONFIGURE_TOOL.inputSchema.required, ["toolkit", "config"]);
 * ```
 */
export const CONFIGURE_TOOL: McpTool = {
  name: "configure_toolkit",
  title: "Configure toolkit",
  description:
    "Configure a skillbox toolkit for this session (e.g. a root folder or an API key). The config is validated against the toolkit's schema and never echoed back.",
  inputSchema: {
    type: "object",
    properties: {
      toolkit: { type: "string", description: "The toolkit's name" },
      config: { type: "object", description: "The configuration" },
    },
    required: ["toolkit", "config"],
  },
  outputSchema: {
    type: "object",
    properties: {
      toolkit: { type: "string" },
      status: { type: "string" },
      message: { type: ["string", "null"] },
    },
    required: ["toolkit", "status"],
  },
  annotations: {
    title: "Configure toolkit",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
};

/** Options of {@link EventRelay}. */
export interface EventRelayOptions {
  /** The request's `_meta.progressToken`, if any. */
  progressToken?: string | number;
  /** Sends one notification related to the request. */
  send: (notification: ServerNotification) => Promise<void>;
  /** The `logger` name of log messages (the tool or skill). */
  logger: string;
  /** How long token text may wait to be joined with more. @default 25 */
  coalesceMs?: number;
}

// MCP's levels, and the two a skill may name otherwise. A Map: a level
// such as "constructor" must not find Object's prototype.
const LEVELS = new Map<string, LoggingLevel>([
  ...LoggingLevelSchema.options.map((l: LoggingLevel) => [l, l] as const),
  ["trace", "debug"],
  ["warn", "warning"],
]);

/**
 * Turns one call's events into notifications.
 *
 * @example Progress becomes a progress notification
 * ```ts
 * import { EventRelay } from "./server.ts";
 * import assert from "node:assert/strict";
 * const sent: unknown[] = [];
 * const relay = new EventRelay({ progressToken: 7, logger: "t",
 *   send: (n) => { sent.push(n); return Promise.resolve(); } });
 * relay.onEvent({ kind: "progress", data: { pct: 50, message: "half" }, seq: 0 });
 * await relay.flush();
 * assert.deepEqual(sent, [{ method: "notifications/progress",
 *   params: { progressToken: 7, progress: 50, total: 100, message: "half" } }]);
 * ```
 */
export class EventRelay {
  #options: EventRelayOptions;
  #coalesceMs: number;
  #sending: Promise<void> = Promise.resolve();
  // MCP asks that progress increase with every notification.
  #last = 0;
  #tokens = "";
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** @param options the progress token, the sender and the logger name */
  constructor(options: EventRelayOptions) {
    this.#options = options;
    this.#coalesceMs = options.coalesceMs ?? 25;
  }

  /** Relays one event; handed out unbound, hence an arrow field. */
  readonly onEvent = (event: CallEvent): void => {
    const data = event.data;
    switch (event.kind) {
      case "progress": {
        this.#flushTokens();
        const pct = Number(data.pct);
        this.#progress(Number.isFinite(pct) ? pct : null, text(data.message));
        return;
      }
      case "status":
        this.#flushTokens();
        this.#log("info", text(data.message));
        return;
      case "log":
        this.#flushTokens();
        this.#log(
          LEVELS.get(text(data.level).toLowerCase()) ?? "info",
          text(data.message),
        );
        return;
      case "llm.token":
        if (this.#options.progressToken === undefined) return;
        this.#tokens += text(data.text);
        this.#timer ??= setTimeout(this.#flushTokens, this.#coalesceMs);
        return;
      case "artifact":
        return; // Artifacts arrive whole in the result.
      default:
        this.#flushTokens();
        this.#log("debug", { kind: event.kind, ...data });
    }
  };

  /**
   * Sends buffered token text now; call before sending the result.
   *
   * @returns resolves once every notification so far was sent
   */
  flush(): Promise<void> {
    this.#flushTokens();
    return this.#sending;
  }

  #send(notification: ServerNotification): void {
    // In order, and a client gone mid-call must not fail the call.
    this.#sending = this.#sending.then(() => this.#options.send(notification))
      .catch(() => {});
  }

  #progress(value: number | null, message: string): void {
    const token = this.#options.progressToken;
    if (token === undefined) return;
    const next = value !== null && value > this.#last
      ? value
      : this.#last + 0.001;
    this.#last = next;
    this.#send({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: next,
        ...(value !== null ? { total: 100 } : {}),
        ...(message ? { message } : {}),
      },
    });
  }

  #log(level: LoggingLevel, data: unknown): void {
    this.#send({
      method: "notifications/message",
      params: { level, logger: this.#options.logger, data },
    });
  }

  // An arrow field: it is the coalescing timer's callback.
  #flushTokens = (): void => {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#tokens === "") return;
    const text = this.#tokens;
    this.#tokens = "";
    this.#progress(null, text);
  };
}

// An event's field as text: a tool passes some on as it gave them, and
// String() would call an object's own `toString` (and throw when it is
// no function, losing the event); JSON cannot hold a BigInt or a cycle.
function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

/** The resource's URI. */
export const CODE_API_URI = "skillbox://code/api.d.ts";

/** What the resource needs of its session: its link's `request`, and more. */
export interface CodeApiSource extends Pick<A2eLink, "request"> {
  /** Whether the session may call `code_api` now (it is in its tool list). */
  listed(): Promise<boolean>;
}

/**
 * Answers the resource's methods in front of another resource server (the
 * Skills extension's), and tells whether a change must be notified.
 *
 * @example The resource is listed first, then the other server's
 * ```ts
 * import { CODE_API_URI, CodeApiResource } from "./server.ts";
 * import assert from "node:assert/strict";
 * const resource = new CodeApiResource({
 *   request: () => Promise.reject(new Error("unused")),
 *   listed: () => Promise.resolve(true),
 * });
 * const next = () => Promise.resolve({ resources: [{ uri: "skill://a/SKILL.md" }] });
 * const listed = await resource.handle("resources/list", {}, next) as { resources: { uri: string }[] };
 * assert.deepEqual(listed.resources.map((r) => r.uri), [CODE_API_URI, "skill://a/SKILL.md"]);
 * ```
 */
export class CodeApiResource {
  #source: CodeApiSource;
  #subscribed = false;

  /** @param source the session's requests and tool list */
  constructor(source: CodeApiSource) {
    this.#source = source;
  }

  /** Whether the client subscribed to the resource. */
  get subscribed(): boolean {
    return this.#subscribed;
  }

  /**
   * Answers a resource method, passing the rest on to `next`.
   *
   * @param method the JSON-RPC method
   * @param params its params
   * @param next the other resource server's `handle`
   * @returns the answer, or `next`'s (undefined: not a method served here)
   * @throws {Error} `InvalidParams` for a subscription to another resource
   */
  handle(
    method: string,
    params: unknown,
    next: (method: string, params: unknown) => Promise<unknown> | undefined,
  ): Promise<unknown> | undefined {
    const p = isPlainObject(params) ? params : {};
    switch (method) {
      case "resources/list":
        return this.#list(p, next(method, params));
      case "resources/read":
        return p.uri === CODE_API_URI ? this.#read() : next(method, params);
      case "resources/subscribe":
      case "resources/unsubscribe":
        if (p.uri !== CODE_API_URI) {
          // Never String(): an own `toString` key would throw.
          throw invalidParams(
            `Resource ${
              JSON.stringify(p.uri) ?? "undefined"
            } offers no subscription: only "${CODE_API_URI}" does`,
          );
        }
        this.#subscribed = method === "resources/subscribe";
        return Promise.resolve({});
    }
    return next(method, params);
  }

  async #list(
    params: Record<string, unknown>,
    rest: Promise<unknown> | undefined,
  ): Promise<unknown> {
    const answer = (await rest) as { resources?: unknown[] } | undefined;
    const resources = answer?.resources ?? [];
    // On the first page only, and only when the session may call the tool.
    if (params.cursor !== undefined || !(await this.#source.listed())) {
      return { ...answer, resources };
    }
    return {
      ...answer,
      resources: [{
        uri: CODE_API_URI,
        name: "code_api",
        title: "run_code API",
        description:
          "TypeScript declarations of what run_code's `tools` and `skills` globals hold for this session",
        mimeType: "text/typescript",
      }, ...resources],
    };
  }

  async #read(): Promise<unknown> {
    const answer = await this.#source.request({
      type: "tool/call/req",
      tool_name: CODE_API_TOOL,
      arguments: {},
    });
    const result = answer.type === "tool/call/resp"
      ? answer.data as ToolResult
      : null;
    const data = result?.success ? result.data : null;
    if (!isPlainObject(data) || typeof data.declarations !== "string") {
      const why = answer.type === "error"
        ? String(answer.message)
        : result?.error ?? "no declarations";
      throw invalidParams(`Cannot read "${CODE_API_URI}": ${why}`);
    }
    return {
      contents: [{
        uri: CODE_API_URI,
        mimeType: "text/typescript",
        text: data.declarations,
      }],
    };
  }
}

/**
 * Serves one MCP session on the process's stdin and stdout
 * (`deno run host --mcp`), trusted like `--stdio` (no token). Logs go to
 * stderr; the session ends, cancelling its calls, when stdin closes.
 *
 * @param context the host as transports see it
 * @param options tool facts
 * @returns resolves once stdin has closed
 * @throws {Error} when the host refuses a session (full or closing)
 * @example
 * ```ts ignore
 * await serveMcpStdio(context);
 * ```
 */
export async function serveMcpStdio(
  context: TransportContext,
  options: McpServerOptions = {},
): Promise<void> {
  const link = openA2eLink(context);
  if (typeof link === "string") {
    throw new Error(`Cannot serve MCP on stdio: ${link}`);
  }
  const server = createMcpServer(link, options);
  const closed = Promise.withResolvers<void>();
  server.onclose = () => {
    link.close("stdin closed");
    closed.resolve();
  };
  server.onerror = (error: Error) => context.log(`MCP stdio: ${error.message}`);
  const transport = new StdioLineTransport({
    maxLineBytes: context.dispatcher.maxMessageBytes,
  });
  await server.connect(transport);
  await closed.promise;
}
