/**
 * The tools an instruction skill's agent loop offers the model: the skill's
 * allowed tools that are loaded, and `read_skill_file` when the skill links
 * files.
 *
 * @module
 */

import type { Skill } from "../../protocol/skill.ts";
import type { AgentTool } from "./agent_loop.ts";
import type { SkillToolHost } from "./run_types.ts";
import type { SkillRecord } from "./skill_record.ts";
import { COMMAND_TOOL, type CommandRule } from "./tool_names.ts";

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
 * @param commandRules the skill's narrowing of `run_command` (told to the
 *   model in that tool's description, so it does not waste turns on
 *   commands the relay refuses); null when not narrowed
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
  commandRules: readonly CommandRule[] | null = null,
): AgentTool[] {
  const out: AgentTool[] = [];
  for (const name of [...allowed].sort()) {
    const info = host.tool(name);
    if (!info) continue;
    out.push({
      name: info.name,
      description: name === COMMAND_TOOL && commandRules
        ? `${info.description}\n\n${describeCommandRules(commandRules)}`
        : info.description,
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

/**
 * Says, for the model, what a narrowed `run_command` may run.
 *
 * @param rules the skill's rules (from `Bash(git:*)`-style patterns)
 * @returns one sentence listing them
 * @example
 * ```ts
 * import { describeCommandRules } from "./agent_tools.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   describeCommandRules([{ words: ["git"], prefix: true }, { words: ["npm", "test"], prefix: false }]),
 *   "In this skill it may only run: `git` with any arguments; `npm test` exactly. Other commands are refused.",
 * );
 * ```
 */
export function describeCommandRules(rules: readonly CommandRule[]): string {
  const each = rules.map((rule) =>
    `\`${rule.words.join(" ")}\` ${
      rule.prefix ? "with any arguments" : "exactly"
    }`
  );
  return `In this skill it may only run: ${
    each.join("; ")
  }. Other commands are refused.`;
}

/**
 * The `run_command` narrowing of a skill (an instructions skill's
 * `Bash(...)` patterns).
 *
 * @param record the skill
 * @returns its rules; null when `run_command` is not narrowed
 * @example
 * ```ts
 * import { commandRulesOf } from "./agent_tools.ts";
 * import assert from "node:assert/strict";
 * assert.equal(commandRulesOf({ run: null }), null);
 * ```
 */
export function commandRulesOf(
  record: Pick<SkillRecord, "run">,
): readonly CommandRule[] | null {
  return record.run?.format === "instructions"
    ? record.run.commandRules ?? null
    : null;
}
