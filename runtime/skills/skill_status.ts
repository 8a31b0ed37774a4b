/**
 * A skill's status, decided per request so hot reloads and tool changes
 * show at once:
 *
 * | status | when |
 * |---|---|
 * | `Published` | runnable |
 * | `Blocked` | the file failed to load, it declares a tool or toolkit that does not exist, or asks for more than the policy grants; `metadata.blocked_reason` says which |
 * | `Archived` | the operator listed it in config: hidden from discover, calls refused as `unknown_skill` |
 * | `Created` | found but still being validated (the registry has not read it yet) |
 *
 * @module
 */

import type { Skill } from "../../protocol/skill.ts";
import type { SkillStatus } from "../../protocol/codes.ts";
import type { SkillRecord } from "./skill_record.ts";

/** What {@link resolveSkillStatus} checks a skill against. */
export interface StatusContext {
  /** Whether a tool of that name is loaded. */
  hasTool(name: string): boolean;
  /** Whether a toolkit of that name is loaded. */
  hasToolkit(name: string): boolean;
  /** Names the operator archived. @default none */
  archived?: ReadonlySet<string>;
  /** Names still being validated. @default none */
  pending?: ReadonlySet<string>;
}

/**
 * Decides a skill's status now: Archived, Created, Blocked (with
 * `metadata.blocked_reason`) or Published.
 *
 * @param record the skill
 * @param context loaded tools and toolkits, operator lists
 * @returns the skill with `status` (and reason) set
 * @example A skill needing a missing tool
 * ```ts
 * import { codeSkillRecord } from "./code_skill.ts";
 * import { resolveSkillStatus } from "./skill_status.ts";
 * import assert from "node:assert/strict";
 * const rec = codeSkillRecord({
 *   path: "/s/a.ts", export: "default", hash: "h", name: "a", runnable: true,
 *   fields: { description: "A", tools: ["fetch_page"] },
 * }, { source: "project" });
 * const def = resolveSkillStatus(rec, { hasTool: () => false, hasToolkit: () => false });
 * assert.equal(def.status, "Blocked");
 * assert.match(String(def.metadata?.blocked_reason), /tool "fetch_page"/);
 * ```
 */
export function resolveSkillStatus(
  record: SkillRecord,
  context: StatusContext,
): Skill {
  const def = record.definition;
  let status: SkillStatus = "Published";
  let reason: string | null = null;
  if (context.archived?.has(def.name)) status = "Archived";
  else if (context.pending?.has(def.name)) status = "Created";
  else {
    reason = record.loadProblem ?? missingDependency(def, context);
    if (reason !== null) status = "Blocked";
  }
  const metadata = { ...def.metadata };
  delete metadata.blocked_reason;
  if (reason !== null) metadata.blocked_reason = reason;
  return { ...def, status, metadata };
}

function missingDependency(def: Skill, context: StatusContext): string | null {
  const tools = (def.tools ?? []).filter((t) => !context.hasTool(t));
  const kits = (def.toolkits ?? []).filter((t) => !context.hasToolkit(t));
  const parts: string[] = [];
  if (tools.length > 0) parts.push(`${plural("tool", tools)} ${quoted(tools)}`);
  if (kits.length > 0) parts.push(`${plural("toolkit", kits)} ${quoted(kits)}`);
  if (parts.length === 0) return null;
  return `Skill "${def.name}" needs ${parts.join(" and ")}, which ${
    tools.length + kits.length > 1 ? "are" : "is"
  } not loaded`;
}

function plural(word: string, names: string[]): string {
  return names.length > 1 ? `${word}s` : word;
}

function quoted(names: string[]): string {
  return names.map((t) => `"${t}"`).join(", ");
}
