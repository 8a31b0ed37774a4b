/**
 * The tools capability as the client sees it (A2E-WIRE.md §4), named after
 * the Python SDK's `ToolAPI`.
 *
 * @module
 */

import type { JsonObject } from "../protocol/json.ts";
import type { Tool, ToolOutcome } from "../protocol/tool.ts";
import type { Call, RequestOptions, StreamingRequestOptions } from "./types.ts";

/**
 * Options of {@link ToolAPI.list} (`tool/list/req`).
 *
 * @example List the file tools tagged csv, deferred ones included
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { Tool } from "../protocol/tool.ts";
 *
 * async function csvTools(client: Client): Promise<Tool[]> {
 *   // Sent as filter_tags, filter_kind and include_deferred; query stays "".
 *   return await client.tools.list({
 *     tags: ["csv"],
 *     kind: "file",
 *     includeDeferred: true,
 *   });
 * }
 * ```
 */
export interface ListToolsOptions extends RequestOptions {
  /** Search text; empty lists instead of searching. @default "" */
  query?: string;
  /** Only tools carrying every one of these tags. @default [] */
  tags?: string[];
  /** Only tools of this kind (`filter_kind`). @default "" */
  kind?: string;
  /** Include deferred tools in search results. @default false */
  includeDeferred?: boolean;
}

/**
 * Options of {@link ToolAPI.search}: {@link ListToolsOptions} minus the query.
 *
 * @example Search only the tools tagged csv
 * ```ts
 * import type { ToolAPI } from "./tools.ts";
 *
 * async function findProfiler(tools: ToolAPI): Promise<string | undefined> {
 *   // The text is sent as `query`, the filters as for a list.
 *   const found = await tools.search("profile columns", { tags: ["csv"] });
 *   return found[0]?.name;
 * }
 * ```
 */
export type SearchToolsOptions = Omit<ListToolsOptions, "query">;

/**
 * Options of {@link ToolAPI.call} (`tool/call/req`).
 *
 * @example Call a tool with a deadline and a correlation id
 * ```ts
 * import type { Client } from "./client.ts";
 * import type { ToolOutcome } from "../protocol/tool.ts";
 *
 * async function profile(client: Client, path: string): Promise<ToolOutcome> {
 *   // The host gets `timeout: 2` (whole seconds, rounded up) and
 *   // `correlation_id`; the client waits 1.5 s plus `timeoutGrace`.
 *   return await client.tools.call("csv_profile", { path }, {
 *     timeout: 1_500,
 *     correlationId: "report-7",
 *     streaming: false,
 *   });
 * }
 * ```
 */
export interface CallToolOptions extends StreamingRequestOptions {
  /**
   * The tool's time limit in milliseconds. The host gets it rounded up to
   * whole seconds; the client waits this long plus the connection's
   * `timeoutGrace` for the host's answer before failing locally.
   * @default 30000
   */
  timeout?: number;
  /** Ask the host to send events as they happen. @default true */
  streaming?: boolean;
  /** An id of the caller's choosing, echoed in logs. @default "" */
  correlationId?: string;
}

/**
 * Lists, searches and calls tools. Results are camelCase domain objects,
 * decoded from the host's answers by the protocol codec (defaults filled).
 *
 * @example List and call a tool
 * ```ts
 * import type { ToolAPI } from "./tools.ts";
 *
 * async function addNumbers(tools: ToolAPI): Promise<unknown> {
 *   const names = (await tools.list()).map((tool) => tool.name);
 *   if (!names.includes("add")) return undefined;
 *   const result = await tools.call("add", { a: 1, b: 2 });
 *   return result.success ? result.data : result.error;
 * }
 * ```
 */
export interface ToolAPI {
  /**
   * Lists tools (`tool/list/req`); with a `query`, searches them.
   *
   * @param options filters and search, see {@link ListToolsOptions}
   * @returns the matching tool definitions
   * @throws {SkillboxError} the host's `error`, e.g. when tools are not served
   */
  list(options?: ListToolsOptions): Promise<Tool[]>;
  /**
   * Searches tools by name, description and tags.
   *
   * @param query the search text (non-empty)
   * @param options filters, see {@link SearchToolsOptions}
   * @returns the matching tool definitions, best first
   * @throws {TypeError} when `query` is empty
   */
  search(
    query: string,
    options?: SearchToolsOptions,
  ): Promise<Tool[]>;
  /**
   * Calls a tool (`tool/call/req`). A tool that runs and fails resolves with
   * `success: false`; an unknown or denied tool rejects with a
   * `SkillboxError` (`unknown_tool`, `tool_denied`).
   *
   * @param name the tool's name
   * @param args the tool's arguments
   * @param options events, limits and cancellation, see {@link CallToolOptions}
   * @returns the call: await it for the {@link ToolOutcome}, iterate `events`
   */
  call(
    name: string,
    args?: JsonObject,
    options?: CallToolOptions,
  ): Call<ToolOutcome>;
}
