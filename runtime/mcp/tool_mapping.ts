/**
 * How skillbox definitions and results look in MCP: A2E tool and skill
 * definitions become MCP tools (JSON Schema input/output, title,
 * annotations), and A2E results become `CallToolResult`s (structured
 * content, a text block, artifacts as image, audio, embedded resource or
 * resource link content, failures as `isError`).
 *
 * @module
 */

import type {
  CallToolResult,
  Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Permissions } from "../../protocol/permissions.ts";
import type {
  CallEvent,
  ToolDefinition,
  ToolParameter,
} from "../../protocol/tool.ts";
import { isPlainObject, type JsonObject } from "../../protocol/json.ts";
import type { SkillDefinition } from "../../protocol/skill.ts";

export type { CallToolResult, McpTool };

/** What the registry knows about a tool beyond its wire definition. */
export interface ToolFacts {
  /** JSON Schema of the arguments. */
  inputSchema: JsonObject;
  /** JSON Schema of the result (`{}` when none). */
  outputSchema: JsonObject;
  /** The tool's and its toolkit's permissions ("dynamic" when computed). */
  permissions: readonly (Permissions | "dynamic")[];
  /** `file`, `builtin` or `mcp`. */
  origin: string;
}

/**
 * An A2E tool as an MCP tool.
 *
 * @param tool the wire definition (as `tool/list/resp` lists it)
 * @param facts its schemas and permissions, when the registry has them
 * @returns the MCP tool
 * @example A read-only tool
 * ```ts
 * import { toMcpTool } from "./tool_mapping.ts";
 * import { toolDefinition } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const tool = toMcpTool(toolDefinition({ name: "read_file", description: "Read", idempotent: true }), {
 *   inputSchema: { type: "object", properties: { path: { type: "string" } } },
 *   outputSchema: {}, permissions: [{ read: ["/data"] }], origin: "file",
 * });
 * assert.equal(tool.title, "Read file");
 * assert.equal(tool.annotations?.readOnlyHint, true);
 * assert.equal(tool.outputSchema, undefined);
 * ```
 */
export function toMcpTool(tool: ToolDefinition, facts?: ToolFacts): McpTool {
  const inputSchema = objectSchema(
    facts?.inputSchema ?? parametersToSchema(tool.input_parameters),
  );
  const output = facts?.outputSchema;
  return {
    name: tool.name,
    title: titleOf(tool.name),
    description: tool.description,
    inputSchema,
    ...(output && output.type === "object"
      ? { outputSchema: output as McpTool["outputSchema"] }
      : {}),
    annotations: {
      title: titleOf(tool.name),
      idempotentHint: tool.idempotent,
      ...hints(facts),
    },
  };
}

/**
 * A skill as an MCP tool.
 *
 * @param skill the wire definition (as `skill/discover/resp` lists it)
 * @param name its MCP name (the skill's, or with `_skill` on a clash)
 * @returns the MCP tool
 * @example
 * ```ts
 * import { skillToMcpTool } from "./tool_mapping.ts";
 * import { skillDefinition } from "../../protocol/skill.ts";
 * import assert from "node:assert/strict";
 * const tool = skillToMcpTool(skillDefinition({ name: "triage", description: "Sort bugs",
 *   when_to_use: "new bugs" }), "triage");
 * assert.match(tool.description ?? "", /^Skill: Sort bugs/);
 * assert.equal(tool.inputSchema.type, "object");
 * ```
 */
export function skillToMcpTool(skill: SkillDefinition, name: string): McpTool {
  const when = skill.when_to_use.trim();
  return {
    name,
    title: titleOf(skill.name),
    description: `Skill: ${skill.description}${
      when ? `\nWhen to use: ${when}` : ""
    }`,
    inputSchema: objectSchema(skill.input_schema ?? {}),
    annotations: { title: titleOf(skill.name), openWorldHint: true },
  };
}

/**
 * A2E parameters back to JSON Schema, for tools the registry cannot
 * describe (a host serving its own capabilities).
 *
 * @param parameters the wire parameters
 * @returns an object schema
 * @example
 * ```ts
 * import { parametersToSchema } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * const schema = parametersToSchema([{ name: "n", type: "integer", description: "", required: true, enum: null, properties: null }]);
 * assert.deepEqual(schema.required, ["n"]);
 * ```
 */
export function parametersToSchema(
  parameters: readonly ToolParameter[],
): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const p of parameters) {
    const property: JsonObject = { type: p.type };
    if (p.description) property.description = p.description;
    if (p.enum) property.enum = p.enum;
    if (p.properties) {
      Object.assign(
        property,
        parametersToSchema(Object.values(p.properties)),
      );
    }
    properties[p.name] = property;
    if (p.required) required.push(p.name);
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

/** The fields of a `ToolResult` or `SkillResult` a call result needs. */
export interface ResultLike {
  success: boolean;
  data?: unknown;
  summary?: unknown;
  error?: string | null;
  error_code?: string | null;
  events?: readonly CallEvent[];
}

/**
 * An A2E result as an MCP call result.
 *
 * @param result the tool's or skill's result
 * @returns structured content (object data), a text block, artifacts, or
 *   an `isError` result with the message and code
 * @example
 * ```ts
 * import { toCallToolResult } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * const ok = toCallToolResult({ success: true, data: { n: 2 } });
 * assert.deepEqual(ok.structuredContent, { n: 2 });
 * assert.equal(ok.content[0]?.type, "text");
 * const bad = toCallToolResult({ success: false, error: "Boom", error_code: "tool_error" });
 * assert.equal(bad.isError, true);
 * ```
 */
export function toCallToolResult(result: ResultLike): CallToolResult {
  if (!result.success) {
    return errorResult(
      result.error_code ?? "tool_error",
      result.error ?? "The call failed",
    );
  }
  const data = result.data;
  const text = typeof result.summary === "string" && result.summary !== ""
    ? result.summary
    : typeof data === "string"
    ? data
    : JSON.stringify(data ?? null);
  const artifacts = artifactContent(result.events ?? []);
  // An imported tool that answered only an image answers only an image.
  const content: CallToolResult["content"] = text === "" && artifacts.length > 0
    ? []
    : [{ type: "text", text }];
  content.push(...artifacts);
  return {
    content,
    ...(isPlainObject(data) ? { structuredContent: data } : {}),
  };
}

/**
 * A failure as an MCP tool error result.
 *
 * @param code the A2E error code
 * @param message what went wrong
 * @returns `isError: true` with `message (code)` as text
 * @example
 * ```ts
 * import { errorResult } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * const r = errorResult("unknown_tool", 'Unknown tool "x"');
 * assert.deepEqual(r.content, [{ type: "text", text: 'Unknown tool "x" (unknown_tool)' }]);
 * ```
 */
export function errorResult(code: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: `${message} (${code})` }],
  };
}

// Artifact events carry base64 chunks; a name's chunks join in order. The
// content type follows the mime type (image, audio) or what an imported
// server sent (`uri`: its resource, `link`: a resource link, `text`: text).
function artifactContent(
  events: readonly CallEvent[],
): CallToolResult["content"] {
  const byName = new Map<
    string,
    { data: Record<string, unknown>; chunks: string[] }
  >();
  for (const event of events) {
    if (event.kind !== "artifact") continue;
    const name = String(event.data.name ?? "artifact");
    const slot = byName.get(name) ?? { data: event.data, chunks: [] };
    slot.chunks.push(String(event.data.chunk ?? ""));
    byName.set(name, slot);
  }
  const out: CallToolResult["content"] = [];
  for (const [name, { data, chunks }] of byName) {
    const mime = String(data.mime ?? "application/octet-stream");
    const uri = typeof data.uri === "string" ? data.uri : null;
    if (uri !== null && data.link === true) {
      out.push({
        type: "resource_link",
        uri,
        name,
        mimeType: mime,
        ...(typeof data.description === "string"
          ? { description: data.description }
          : {}),
      });
      continue;
    }
    const blob = joinBase64(chunks);
    if (uri === null && mime.startsWith("image/")) {
      out.push({ type: "image", data: blob, mimeType: mime });
    } else if (uri === null && mime.startsWith("audio/")) {
      out.push({ type: "audio", data: blob, mimeType: mime });
    } else if (uri !== null && data.text === true) {
      out.push({
        type: "resource",
        resource: { uri, mimeType: mime, text: fromBase64Text(blob) },
      });
    } else {
      out.push({
        type: "resource",
        resource: {
          uri: uri ?? `skillbox://artifact/${encodeURIComponent(name)}`,
          mimeType: mime,
          blob,
        },
      });
    }
  }
  return out;
}

function fromBase64Text(blob: string): string {
  return new TextDecoder().decode(
    Uint8Array.from(atob(blob), (ch) => ch.charCodeAt(0)),
  );
}

function joinBase64(chunks: string[]): string {
  if (chunks.length === 1) return chunks[0]!;
  const parts = chunks.map((c) =>
    Uint8Array.from(atob(c), (ch) => ch.charCodeAt(0))
  );
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  let binary = "";
  for (let i = 0; i < all.length; i += 0x8000) {
    binary += String.fromCharCode(...all.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

// MCP requires an object schema at the top.
function objectSchema(schema: JsonObject): McpTool["inputSchema"] {
  if (schema.type === "object") return schema as McpTool["inputSchema"];
  return { ...schema, type: "object" } as McpTool["inputSchema"];
}

function hints(facts?: ToolFacts): McpTool["annotations"] {
  if (!facts) return {};
  if (facts.permissions.includes("dynamic")) {
    return facts.origin === "mcp" ? { openWorldHint: true } : {};
  }
  const all = facts.permissions as Permissions[];
  const has = (key: keyof Permissions) =>
    all.some((p) => (p[key]?.length ?? 0) > 0);
  const writes = has("write") || has("run") || has("ffi");
  return {
    readOnlyHint: !writes && facts.origin !== "mcp",
    destructiveHint: writes,
    openWorldHint: has("net") || facts.origin === "mcp",
  };
}

function titleOf(name: string): string {
  const words = name.replace(/[_\-.]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
