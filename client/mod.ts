/**
 * The skillbox client: talks A2E v1.0 to a skillbox host (or any A2E host
 * serving WebSocket) from Deno or a browser, using only web-standard APIs.
 *
 * {@link connect} performs the handshake and returns a {@link Client} whose
 * `tools`, `toolkits` and `skills` mirror the Python SDK's `ToolAPI`,
 * `ToolkitAPI` and `SkillAPI`. Tool and skill calls are promises that also
 * stream their events with `for await`.
 *
 * @example Call a tool and stream its progress
 * ```ts
 * import { connect } from "./mod.ts";
 *
 * async function fetchPage(hostUrl: string, page: string): Promise<unknown> {
 *   const client = await connect(hostUrl, { token: "secret" });
 *   try {
 *     const call = client.tools.call("fetch_page", { url: page });
 *     const progress: number[] = [];
 *     for await (const event of call.events) {
 *       if (event.kind === "progress") progress.push(Number(event.data.pct));
 *     }
 *     const result = await call;
 *     return result.success ? result.data : result.error;
 *   } finally {
 *     await client.close();
 *   }
 * }
 * ```
 *
 * @module
 */

export { connect } from "./client.ts";
export type {
  Client,
  ConnectOptions,
  PingResult,
  WebSocketConstructor,
} from "./client.ts";
export { ConnectionClosedError } from "./errors.ts";
// The client throws these and returns these models: export them here too, so
// this entrypoint is complete on its own.
export { SkillboxError, TimeoutError } from "../protocol/errors.ts";
export { ERROR_CODES, SKILL_STATUSES } from "../protocol/codes.ts";
export type { ErrorCode, SkillStatus } from "../protocol/codes.ts";
export type {
  LlmChoice,
  LLMConfig,
  Skill,
  SkillDefinition,
  SkillOutcome,
  SkillResult,
} from "../protocol/skill.ts";
export type {
  CallEvent,
  Tool,
  ToolDefinition,
  Toolkit,
  ToolkitDefinition,
  ToolOutcome,
  ToolParameter,
  ToolResult,
} from "../protocol/tool.ts";
export type { JsonObject } from "../protocol/json.ts";
export type { SnakeCase, Wire } from "../protocol/wire_names.ts";
export type {
  Call,
  CloseInfo,
  PushHandler,
  RequestOptions,
  StreamingRequestOptions,
  WireMessage,
} from "./types.ts";
export type {
  CallToolOptions,
  ListToolsOptions,
  SearchToolsOptions,
  ToolAPI,
} from "./tools.ts";
export type { ListToolkitsOptions, ToolkitAPI } from "./toolkits.ts";
export type {
  CallSkillOptions,
  DiscoverSkillsOptions,
  LlmOverride,
  SkillAPI,
} from "./skills.ts";
