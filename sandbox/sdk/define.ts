/**
 * `defineTool`, `defineToolkit`, `defineSkill`: identity functions that add
 * types and set `kind`. A plain object with `kind` works just as well.
 *
 * @module
 */

import type { SkillDef, ToolDef, ToolkitDef } from "./types.ts";

/**
 * Defines a tool.
 *
 * @param def the tool, without `kind`
 * @returns the same definition with `kind: "tool"`
 * @example A tool that adds
 * ```ts
 * import { defineTool } from "./define.ts";
 * import assert from "node:assert/strict";
 * const add = defineTool<{ a: number; b: number }>({
 *   name: "add",
 *   description: "Add two numbers",
 *   input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
 *   run: ({ a, b }) => ({ sum: a + b }),
 * });
 * assert.equal(add.kind, "tool");
 * ```
 */
export function defineTool<Args = Record<string, unknown>>(
  def: Omit<ToolDef<Args>, "kind">,
): ToolDef<Args> {
  return { ...def, kind: "tool" };
}

/**
 * Defines a toolkit: shared configuration for the tools in its folder.
 *
 * @param def the toolkit, without `kind`
 * @returns the same definition with `kind: "toolkit"`
 * @example A toolkit with a secret
 * ```ts
 * import { defineToolkit } from "./define.ts";
 * import assert from "node:assert/strict";
 * const kit = defineToolkit({
 *   name: "github",
 *   description: "GitHub API",
 *   config: { type: "object", properties: { token: { type: "string", secret: true } } },
 * });
 * assert.equal(kit.kind, "toolkit");
 * ```
 */
export function defineToolkit(def: Omit<ToolkitDef, "kind">): ToolkitDef {
  return { ...def, kind: "toolkit" };
}

/**
 * Defines a skill.
 *
 * @param def the skill, without `kind`
 * @returns the same definition with `kind: "skill"`
 * @example A skill that reports progress
 * ```ts
 * import { defineSkill } from "./define.ts";
 * import assert from "node:assert/strict";
 * const skill = defineSkill({
 *   name: "hello",
 *   description: "Greets",
 *   run: (_args, ctx) => {
 *     ctx.progress(100, "done");
 *     return "hi";
 *   },
 * });
 * assert.equal(skill.kind, "skill");
 * ```
 */
export function defineSkill<Args = Record<string, unknown>>(
  def: Omit<SkillDef<Args>, "kind">,
): SkillDef<Args> {
  return { ...def, kind: "skill" };
}
