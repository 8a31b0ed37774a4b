/**
 * The toolkits capability as the client sees it (A2E-WIRE.md §5), named after
 * the Python SDK's `ToolkitAPI`.
 *
 * @module
 */

import type { JsonObject } from "../protocol/json.ts";
import type { Toolkit } from "../protocol/tool.ts";
import type { RequestOptions } from "./types.ts";

/**
 * Options of {@link ToolkitAPI.list} (`toolkit/list/req`).
 *
 * @example List the network toolkits tagged http
 * ```ts
 * import type { ToolkitAPI } from "./toolkits.ts";
 *
 * async function httpKits(toolkits: ToolkitAPI): Promise<string[]> {
 *   // Sent as filter_kind and filter_tags.
 *   const kits = await toolkits.list({ kind: "network", tags: ["http"] });
 *   return kits.map((kit) => kit.name);
 * }
 * ```
 */
export interface ListToolkitsOptions extends RequestOptions {
  /** Only toolkits carrying every one of these tags. @default [] */
  tags?: string[];
  /** Only toolkits of this kind (`filter_kind`). @default "" */
  kind?: string;
}

/**
 * Lists and configures toolkits for this session. Results are camelCase
 * domain objects, decoded by the protocol codec.
 *
 * @example Configure a toolkit once
 * ```ts
 * import type { ToolkitAPI } from "./toolkits.ts";
 *
 * async function useGithub(toolkits: ToolkitAPI, token: string): Promise<string[]> {
 *   const kit = await toolkits.ensure("github", { token });
 *   return kit?.tools ?? [];
 * }
 * ```
 */
export interface ToolkitAPI {
  /**
   * Lists toolkits (`toolkit/list/req`).
   *
   * @param options filters, see {@link ListToolkitsOptions}
   * @returns the toolkit definitions
   * @throws {SkillboxError} the host's `error`
   */
  list(options?: ListToolkitsOptions): Promise<Toolkit[]>;
  /**
   * Configures a toolkit for this session (`toolkit/configure/req`), then
   * reads its definition back so the caller sees the host's state.
   *
   * @param name the toolkit's name
   * @param config the configuration, per the toolkit's `schema`
   * @param options timeout and cancellation
   * @returns the toolkit's definition after configuring, or `undefined` when
   *   the host no longer lists it
   * @throws {SkillboxError} the host's `error`, or `runtime_error` when the
   *   answer's `status` is neither `"ok"` nor `"configured"`
   */
  configure(
    name: string,
    config?: JsonObject,
    options?: RequestOptions,
  ): Promise<Toolkit | undefined>;
  /**
   * Configures a toolkit only if the host does not list it as configured.
   *
   * @param name the toolkit's name
   * @param config the configuration to apply when needed
   * @param options timeout and cancellation
   * @returns the toolkit's definition, or `undefined` when not listed
   */
  ensure(
    name: string,
    config?: JsonObject,
    options?: RequestOptions,
  ): Promise<Toolkit | undefined>;
  /**
   * Finds one toolkit by name.
   *
   * @param name the toolkit's name
   * @param options timeout and cancellation
   * @returns its definition, or `undefined` when the host does not list it
   */
  get(
    name: string,
    options?: RequestOptions,
  ): Promise<Toolkit | undefined>;
}
