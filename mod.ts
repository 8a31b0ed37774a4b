/**
 * skillbox: a sandboxed skill runtime for AI agents, speaking A2E v1.0.
 *
 * @example Define a tool
 * ```ts
 * import { defineTool } from "./mod.ts";
 * const add = defineTool({
 *   name: "add",
 *   description: "Add two numbers",
 *   run: (args) => Number(args.a) + Number(args.b),
 * });
 * ```
 *
 * @module
 */

export {
  PermissionDeniedError,
  SchemaViolationError,
  SkillboxError,
  TimeoutError,
} from "./protocol/errors.ts";
export type { SkillboxErrorOptions, WireError } from "./protocol/errors.ts";
export * from "./sandbox/sdk/mod.ts";
export { createHost } from "./runtime/host.ts";
export type { CallOptions } from "./runtime/transports/in_process.ts";
export type { Host, HostOptions } from "./runtime/host.ts";
export type { ListenAddress, ListenOptions } from "./runtime/host_http.ts";
export type { InProcessCalls } from "./runtime/transports/in_process.ts";
export type {
  Capability,
  Exchange,
  Handler,
  OutgoingMessage,
  SessionScope,
} from "./runtime/capability.ts";
export type { Envelope } from "./protocol/envelope.ts";
export type {
  HandshakeRequest,
  PingRequest,
  Request as A2eRequest,
  RequestEnvelope,
  RequestMap,
  RequestType,
  ShutdownRequest,
  SkillCallRequest,
  SkillDiscoverRequest,
  ToolCallRequest,
  ToolkitConfigureRequest,
  ToolkitListRequest,
  ToolListRequest,
} from "./protocol/requests.ts";
export {
  CAPABILITY_NAMES,
  ERROR_CODES,
  SKILL_STATUSES,
} from "./protocol/codes.ts";
export type {
  CapabilityName,
  ErrorCode,
  SkillStatus,
} from "./protocol/codes.ts";
export type {
  ConsoleConfig,
  EgressConfig,
  EgressSecretConfig,
  HostConfig,
  LimitsConfig,
  ListenConfig,
  SandboxConfig,
} from "./runtime/config_schema.ts";
export type { LoadReport } from "./runtime/load_report.ts";
export type { McpServersView } from "./runtime/standard_capabilities.ts";
export type { StdioOptions } from "./runtime/transports/stdio.ts";
export type { LlmConfig, LlmRules } from "./runtime/llm/config.ts";
export type { McpServerSpec } from "./runtime/mcp/imported_servers.ts";
export type { McpProcessSpec } from "./runtime/mcp/imported_process.ts";
export type { StoreConfig } from "./runtime/store/config.ts";
export {
  INTENTION_FIELD,
  stripIntention,
  toAnthropicTools,
  toOpenAiTools,
} from "./runtime/llm/tool_formats.ts";
export type {
  AnthropicTool,
  ObjectSchema,
  OpenAiTool,
  StrippedArguments,
  ToolFormatOptions,
  ToolOffer,
} from "./runtime/llm/tool_formats.ts";
export { connect, ConnectionClosedError } from "./client/mod.ts";
export type {
  Call,
  CallSkillOptions,
  CallToolOptions,
  Client,
  CloseInfo,
  ConnectOptions,
  DiscoverSkillsOptions,
  ListToolkitsOptions,
  ListToolsOptions,
  LlmOverride,
  PingResult,
  PushHandler,
  RequestOptions,
  SearchToolsOptions,
  SkillAPI,
  StreamingRequestOptions,
  ToolAPI,
  ToolkitAPI,
  WebSocketConstructor,
  WireMessage,
} from "./client/mod.ts";
export type {
  LlmChoice,
  LLMConfig,
  Skill,
  SkillDefinition,
  SkillOutcome,
  SkillResult,
} from "./protocol/skill.ts";
export type {
  CallEvent,
  Tool,
  ToolDefinition,
  Toolkit,
  ToolkitDefinition,
  ToolOutcome,
  ToolParameter,
  ToolResult,
} from "./protocol/tool.ts";
export type { JsonObject } from "./protocol/json.ts";
export type { SnakeCase, Wire } from "./protocol/wire_names.ts";
export type {
  AnsweredRequestType,
  HandshakeResponse,
  PongResponse,
  ResponseMap,
  SkillCallError,
  SkillCallResponse,
  SkillDiscoverResponse,
  ToolCallResponse,
  ToolkitConfigureResponse,
  ToolkitListResponse,
  ToolListResponse,
} from "./protocol/responses.ts";
