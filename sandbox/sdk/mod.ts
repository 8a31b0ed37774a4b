/**
 * The author SDK: what a drop-in tool, toolkit or skill module imports.
 *
 * @example A tool module
 * ```ts
 * import { defineTool } from "./mod.ts";
 * export default defineTool({
 *   name: "echo",
 *   description: "Echo the input back",
 *   input: { type: "object", properties: { text: { type: "string" } } },
 *   run: (args) => args,
 * });
 * ```
 *
 * @module
 */

export { defineSkill, defineTool, defineToolkit } from "./define.ts";
export { isOutput, output } from "./types.ts";
export type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
  CommonDefinition,
  Context,
  Definition,
  FetchRequest,
  FetchResponse,
  JsonSchema,
  LogLevel,
  Output,
  Permissions,
  PermissionsSpec,
  SchemaLike,
  SkillDef,
  ToolDef,
  ToolkitDef,
} from "./types.ts";
