/**
 * The tools an instruction skill's agent loop offers the model: the skill's
 * allowed tools that are loaded, and `read_skill_file` when the skill links
 * files.
 *
 * @module
 */

import type { Skill } from "../../protocol/domain.ts";
import type { AgentTool } from "./agent_loop.ts";
import type { SkillToolHost } from "./run_types.ts";

/** The name of the tool the agent loop adds for linked skill files. */
export const READ_SKILL_FILE_TOOL = "read_skill_file";

/**
 * The tools a skill may call: its `tools` and every tool of its `toolkits`.
 *
 * @param definition the skill
 * @param tools the host's tools
 * @returns the allowed tool names
 * @example
 * ```ts
 * import { allowedTools } from "./agent_tools.ts";
 * import assert from "node:assert/strict";
 * const host = {
 *   tool: () => undefined,
 *   toolkit: (name: string) => name === "kit" ? { tools: ["b"] } : undefined,
 *   call: () => Promise.reject(new Error("unused")),
 * };
 * const allowed = allowedTools({ tools: ["a"], toolkits: ["kit", "gone"] } as never, host);
 * assert.deepEqual([...allowed], ["a", "b"]);
 * ```
 */
export function allowedTools(
  definition: Pick<Skill, "tools" | "toolkits">,
  tools: SkillToolHost,
): Set<string> {
  const allowed = new Set(definition.tools ?? []);
  for (const kit of definition.toolkits ?? []) {
    for (const t of tools.toolkit(kit)?.tools ?? []) allowed.add(t);
  }
  return allowed;
}

/**
 * The allowed tools that are loaded, by name, as the agent loop offers them.
 *
 * @param allowed the allowed names (see {@link allowedTools})
 * @param host the host's tools
 * @returns the tools, sorted by name
 * @example
 * ```ts
 * import { offeredTools } from "./agent_tools.ts";
 * import assert from "node:assert/strict";
 * const host = {
 *   tool: (name: string) => name === "a"
 *     ? { name, description: "A", inputSchema: {}, toolkit: null, prompt: "" }
 *     : undefined,
 *   toolkit: () => undefined,
 *   call: () => Promise.reject(new Error("unused")),
 * };
 * assert.deepEqual(offeredTools(new Set(["b", "a"]), host).map((t) => t.name), ["a"]);
 * ```
 */
export function offeredTools(
  allowed: Set<string>,
  host: SkillToolHost,
): AgentTool[] {
  const out: AgentTool[] = [];
  for (const name of [...allowed].sort()) {
    const info = host.tool(name);
    if (!info) continue;
    out.push({
      name: info.name,
      description: info.description,
      inputSchema: info.inputSchema,
      prompt: info.prompt,
    });
  }
  return out;
}

/**
 * The `read_skill_file` tool, limited to the skill's linked files.
 *
 * @param resources the linked paths
 * @returns the tool as the agent loop offers it
 * @example
 * ```ts
 * import { readSkillFileTool } from "./agent_tools.ts";
 * import assert from "node:assert/strict";
 * const tool = readSkillFileTool(["ref.md"]);
 * assert.match(tool.description, /"ref\.md"/);
 * ```
 */
export function readSkillFileTool(resources: readonly string[]): AgentTool {
  return {
    name: READ_SKILL_FILE_TOOL,
    description:
      "Reads one of the files linked from this skill's instructions. Only these paths are readable: " +
      resources.map((r) => `"${r}"`).join(", "),
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", enum: [...resources] },
      },
      required: ["path"],
    },
    prompt: "Read a linked file only when the instructions point you to it.",
  };
}
