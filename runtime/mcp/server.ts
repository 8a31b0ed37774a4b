/**
 * One MCP session's server: an official-SDK `Server` whose handlers drive
 * an {@link A2eLink}, so that listing, searching, configuring and calling go
 * through the dispatcher like any A2E request. Tools, skills (as tools, and
 * `SKILL.md` instructions as prompts), `search_tools` and
 * `configure_toolkit`; and the session's Agent Skills folders as `skill://`
 * resources with the Skills extension (`skills_extension.ts`), beside
 * `code_api`'s declarations (`code_api_resource.ts`).
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
  type Prompt,
  type ServerNotification,
  type ServerRequest,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { OutgoingMessage } from "../capability.ts";
import type { SkillResult } from "../../protocol/skill.ts";
import type { ToolDefinition, ToolResult } from "../../protocol/tool.ts";
import type { A2eLink } from "./a2e_link.ts";
import { SessionCatalog } from "./catalog.ts";
import { createEventRelay } from "./notifications.ts";
import {
  errorResult,
  parametersToSchema,
  skillToMcpTool,
  toCallToolResult,
  toMcpTool,
  type ToolFacts,
} from "./tool_mapping.ts";
import { CONFIGURE_TOOL, SEARCH_TOOL } from "./builtin_tools.ts";
import {
  type CallParams,
  invalidParams,
  methodNotFound,
  readCallParams,
} from "./call_params.ts";
import {
  type RemoteSkill,
  servedFolders,
  SkillFileCache,
  SKILLS_EXTENSION,
  SkillsServer,
} from "./skills_extension.ts";
import { CODE_API_URI, CodeApiResource } from "./code_api_resource.ts";

/** The version skillbox reports to MCP clients. */
export const SERVER_VERSION = "0.1.0";

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The registry's schemas and permissions of a tool, when known. */
  facts?: (name: string) => ToolFacts | undefined;
  /** The host's digest cache of skill files. @default one per process */
  skillFiles?: SkillFileCache;
  /** Skills per page of `skills/list`. @default 100 */
  skillsPageSize?: number;
  /** The imported servers' verified skills now. @default none */
  remoteSkills?: () => RemoteSkill[];
}

const SHARED_SKILL_FILES = new SkillFileCache();

/** A session's MCP server and what its transport must tell it. */
export interface McpSessionServer {
  /** The SDK server; connect it to a transport. */
  readonly server: Server;
  /** Call with each push message of the host session (hot reload). */
  onPush(message: OutgoingMessage): void;
}

// What a session's handlers work with.
interface Served {
  link: A2eLink;
  catalog: SessionCatalog;
  options: McpServerOptions;
  /** Tells a subscribed client that `code_api`'s declarations changed. */
  codeApiChanged(): void;
}

/**
 * Creates the MCP server of one session.
 *
 * @param link the session's host session
 * @param options where tool schemas come from
 * @returns the server and its push hook
 * @example
 * ```ts ignore
 * const { server } = createMcpServer(link);
 * await server.connect(transport);
 * ```
 */
export function createMcpServer(
  link: A2eLink,
  options: McpServerOptions = {},
): McpSessionServer {
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
    listed: async () => (await catalog.get()).tools.has("code_api"),
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
  }, {
    cache: options.skillFiles ?? SHARED_SKILL_FILES,
    pageSize: options.skillsPageSize,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => listTools(served));
  // Not `setRequestHandler`: its tools/call wrapper runs zod three times a
  // call (`call_params.ts` says why that matters and what stands in).
  server.fallbackRequestHandler = (
    request: JSONRPCRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ) => {
    if (request.method !== "tools/call") {
      const answer = codeApi.handle(
        request.method,
        request.params,
        (method, params) => skills.handle(method, params),
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
  return {
    server,
    onPush(message) {
      if (message.type !== "invoke/event" || message.kind !== "tools.changed") {
        return;
      }
      served.catalog.reset();
      server.sendToolListChanged().catch(() => {});
      server.sendPromptListChanged().catch(() => {});
      server.sendResourceListChanged().catch(() => {});
      codeApiChanged();
    },
  };
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
  const relay = createEventRelay({
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
  return answerToResult(answer, skill ? "skill_error" : "tool_error");
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

function answerToResult(
  answer: OutgoingMessage,
  failureCode: string,
): CallToolResult {
  if (answer.type === "error") return a2eError(answer, "tools/call");
  if (answer.type === "skill/call/resp") {
    const data = answer.data as SkillResult | null;
    if (!data) {
      const error = (answer.error ?? {}) as Record<string, unknown>;
      return errorResult(
        String(error.code ?? failureCode),
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
  const config = typeof args.config === "object" && args.config !== null &&
      !Array.isArray(args.config)
    ? args.config
    : {};
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
