/**
 * The tools skillbox adds to its MCP tool list: `search_tools` (finds any
 * tool, deferred ones included, with the same index as A2E search) and
 * `configure_toolkit` (the session's toolkit configuration).
 *
 * @module
 */

import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";

/**
 * `search_tools`: a query in, names, descriptions and input schemas out.
 *
 * @example
 * ```ts
 * import { SEARCH_TOOL } from "./builtin_tools.ts";
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
 * import { CONFIGURE_TOOL } from "./builtin_tools.ts";
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
