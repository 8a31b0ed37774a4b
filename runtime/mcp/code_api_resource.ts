/**
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

import { isPlainObject } from "../../protocol/json.ts";
import type { ToolResult } from "../../protocol/tool.ts";
import type { OutgoingMessage } from "../capability.ts";
import { invalidParams } from "./call_params.ts";

/** The resource's URI. */
export const CODE_API_URI = "skillbox://code/api.d.ts";

/** The tool whose answer the resource is. */
const TOOL = "code_api";

/** What the resource needs of its session. */
export interface CodeApiSource {
  /** Sends an A2E request on the session (`A2eLink.request`). */
  request(
    message: Record<string, unknown> & { type: string },
  ): Promise<OutgoingMessage>;
  /** Whether the session may call `code_api` now (it is in its tool list). */
  listed(): Promise<boolean>;
}

/**
 * Answers the resource's methods in front of another resource server (the
 * Skills extension's), and tells whether a change must be notified.
 *
 * @example The resource is listed first, then the other server's
 * ```ts
 * import { CODE_API_URI, CodeApiResource } from "./code_api_resource.ts";
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
          throw invalidParams(
            `Resource "${
              String(p.uri)
            }" offers no subscription: only "${CODE_API_URI}" does`,
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
      tool_name: TOOL,
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
