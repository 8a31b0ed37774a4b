/**
 * One MCP session's server: an official-SDK `Server` whose handlers drive
 * an {@link A2eLink}, so that listing, searching, configuring and calling go
 * through the dispatcher like any A2E request. Tools, skills (as tools, and
 * `SKILL.md` instructions as prompts), `search_tools` and
 * `configure_toolkit`.
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  ErrorCode as McpErrorCode,
  type GetPromptRequest,
  GetPromptRequestSchema,
  type GetPromptResult,
  type JSONRPCRequest,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
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
  methodNotFound,
  readCallParams,
} from "./call_params.ts";

/** The version skillbox reports to MCP clients. */
export const SERVER_VERSION = "0.1.0";

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The registry's schemas and permissions of a tool, when known. */
  facts?: (name: string) => ToolFacts | undefined;
}

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
        logging: {},
      },
    },
  );
  const served: Served = { link, catalog: new SessionCatalog(link), options };
  server.setRequestHandler(ListToolsRequestSchema, () => listTools(served));
  // Not `setRequestHandler`: its tools/call wrapper runs zod three times a
  // call (`call_params.ts` says why that matters and what stands in).
  server.fallbackRequestHandler = (
    request: JSONRPCRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ) => {
    if (request.method !== "tools/call") throw methodNotFound();
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
  if (name === CONFIGURE_TOOL.name) return await configureToolkit(link, args);
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
    throw new McpError(
      McpErrorCode.InvalidParams,
      `Prompt ${request.params.name} not found`,
    );
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

function answerToResult(
  answer: OutgoingMessage,
  failureCode: string,
): CallToolResult {
  if (answer.type === "error") {
    return errorResult(String(answer.code), String(answer.message ?? ""));
  }
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
  if (answer.type === "error") {
    return errorResult(String(answer.code), String(answer.message ?? ""));
  }
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
  if (answer.type === "error") {
    return errorResult(String(answer.code), String(answer.message ?? ""));
  }
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
