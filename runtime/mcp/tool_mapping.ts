/**
 * How skillbox definitions and results look in MCP: A2E tool and skill
 * definitions become MCP tools (JSON Schema input/output, title,
 * annotations), and A2E results become `CallToolResult`s (structured
 * content, a text block, artifacts as image, audio, embedded resource or
 * resource link content, failures as `isError`).
 *
 * ## `tools/call` params
 *
 * The params of a `tools/call` request, checked by hand: skillbox serves
 * `tools/call` from the SDK `Server`'s fallback request handler, not from a
 * handler set with `setRequestHandler`, whose wrapper parses every call's
 * request twice and its result once with zod (three of the seven zod runs
 * of an MCP call, about 30 µs of a fresh host's CPU per call). What it
 * refuses is refused here the SDK's way: an `InvalidParams` error. The
 * result needs no check at run time: it is built by {@link toCallToolResult},
 * whose tests hold every shape it makes to the SDK's `CallToolResultSchema`.
 *
 * ## Registry facts
 *
 * What the MCP tool list needs from the registry beyond the A2E wire
 * definition: a tool's JSON Schemas, its and its toolkit's permissions (for
 * the annotations) and its origin.
 *
 * @module
 */

import {
  type CallToolResult,
  ErrorCode,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  type CallEvent,
  parametersToSchema,
  type ToolDefinition,
} from "../../protocol/tool.ts";
import { isPlainObject, type JsonObject } from "../../protocol/json.ts";
import type { SkillDefinition } from "../../protocol/skill.ts";
import type { RegistrySnapshot } from "../registry/types.ts";
import { Buffer } from "node:buffer";

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

// Artifact events carry base64 chunks; a name's chunks join in order up
// to its `final` one, after which the name starts another artifact (an
// imported server's resources whose URIs end alike). The content type
// follows the mime type (image, audio) or what an imported server sent
// (`uri`: its resource, `link`: a resource link, `text`: text).
function artifactContent(
  events: readonly CallEvent[],
): CallToolResult["content"] {
  type Artifact = {
    name: string;
    data: Record<string, unknown>;
    chunks: string[];
  };
  const artifacts: Artifact[] = [];
  const unfinished = new Map<string, Artifact>();
  for (const event of events) {
    if (event.kind !== "artifact") continue;
    const name = String(event.data.name ?? "artifact");
    let artifact = unfinished.get(name);
    if (artifact === undefined) {
      artifact = { name, data: event.data, chunks: [] };
      artifacts.push(artifact);
      unfinished.set(name, artifact);
    }
    artifact.chunks.push(String(event.data.chunk ?? ""));
    if (event.data.final === true) unfinished.delete(name);
  }
  const out: CallToolResult["content"] = [];
  for (const { name, data, chunks } of artifacts) {
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
        resource: {
          uri,
          mimeType: mime,
          text: new TextDecoder().decode(Uint8Array.fromBase64(blob)),
        },
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

function joinBase64(chunks: string[]): string {
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks.map((c) => Uint8Array.fromBase64(c)))
    .toBase64();
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

/** A checked `tools/call` request's params. */
export interface CallParams {
  /** The tool's MCP name. */
  name: string;
  /** Its arguments (an empty object when the request had none). */
  arguments: Record<string, unknown>;
  /** The request's `_meta.progressToken`, if any. */
  progressToken?: string | number;
}

function invalid(why: string): Error & { code: number } {
  return invalidParams(`Invalid tools/call request: ${why}`);
}

/**
 * A JSON-RPC `InvalidParams` (-32602) error for a handler to throw. Not an
 * SDK `McpError`: the SDK sends a thrown error's `message` as is, and an
 * `McpError`'s starts with "MCP error -32602: ", which the client's
 * `McpError` then prefixes again.
 *
 * @param message what is wrong, sentence case
 * @returns the error
 * @example
 * ```ts
 * import { invalidParams } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * const error = invalidParams('Prompt "x" not found');
 * assert.equal(error.code, -32602);
 * assert.equal(error.message, 'Prompt "x" not found');
 * ```
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

/**
 * Checks a `tools/call` request's params as the SDK's
 * `CallToolRequestSchema` does.
 *
 * @param params the request's `params`
 * @returns the name, arguments and progress token
 * @throws {Error} `InvalidParams` (-32602) when they do not fit
 * @example
 * ```ts
 * import { readCallParams } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * const params = readCallParams({
 *   name: "echo",
 *   arguments: { text: "hi" },
 *   _meta: { progressToken: 7 },
 * });
 * assert.deepEqual(params, {
 *   name: "echo",
 *   arguments: { text: "hi" },
 *   progressToken: 7,
 * });
 * assert.throws(() => readCallParams({ name: 3 }), /params.name/);
 * ```
 */
export function readCallParams(params: unknown): CallParams {
  if (!isPlainObject(params)) throw invalid("params must be an object");
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== "string") throw invalid("params.name must be a string");
  if (args !== undefined && !isPlainObject(args)) {
    throw invalid("params.arguments must be an object");
  }
  let progressToken: string | number | undefined;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) throw invalid("params._meta must be an object");
    const token = meta.progressToken;
    if (
      token !== undefined && typeof token !== "string" &&
      typeof token !== "number"
    ) {
      throw invalid("params._meta.progressToken must be a string or number");
    }
    progressToken = token;
  }
  return {
    name,
    arguments: args ?? {},
    ...(progressToken === undefined ? {} : { progressToken }),
  };
}

/**
 * The error the SDK answers a request with when nothing handles its method
 * (JSON-RPC's -32601, message "Method not found"), for a fallback handler
 * to throw.
 *
 * @returns the error
 * @example
 * ```ts
 * import { methodNotFound } from "./tool_mapping.ts";
 * import assert from "node:assert/strict";
 * assert.equal(methodNotFound().code, -32601);
 * ```
 */
export function methodNotFound(): Error & { code: number } {
  return Object.assign(new Error("Method not found"), {
    code: ErrorCode.MethodNotFound,
  });
}

/**
 * Looks tools up in the registry's current snapshot.
 *
 * @param snapshot returns the current snapshot, or null before the load
 * @returns the lookup
 * @example
 * ```ts
 * import { registryFacts } from "./tool_mapping.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([]);
 * assert.equal(registryFacts(() => snapshot)("nope"), undefined);
 * ```
 */
export function registryFacts(
  snapshot: () => RegistrySnapshot | null,
): (name: string) => ToolFacts | undefined {
  return (name) => {
    const snap = snapshot();
    const tool = snap?.tools.get(name);
    if (!snap || !tool) return undefined;
    const kit = tool.toolkit === null
      ? undefined
      : snap.toolkits.get(tool.toolkit);
    return {
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      permissions: kit ? [tool.permissions, kit.permissions] : [
        tool.permissions,
      ],
      origin: tool.origin,
    };
  };
}
