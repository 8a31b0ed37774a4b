/**
 * One line per skill-loading problem, for the host's banner: each warning a
 * skill file's dialect raised (also in discovery's `metadata.warnings`),
 * and each skill that could not be loaded at all (listed as Blocked).
 *
 * @module
 */

import { basename } from "node:path";
import type { SkillRecord } from "./skill_record.ts";
import { refusedEnv, splitScriptNet } from "./scripts/script_access.ts";

/**
 * Adds to an Agent Skills folder's discovery warnings the `env` variables
 * and `net` hosts its scripts declare that the policy does not grant (its
 * scripts run without them), one warning naming them per field.
 *
 * @param record the skill as loaded
 * @param policy the policy's `permissions` (`env` and `net`)
 * @returns the record, with the warnings added when there are any
 * @example
 * ```ts
 * import { withPolicyWarnings } from "./load_warnings.ts";
 * import { skill } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * const record = { definition: skill({ name: "gh", description: "GitHub" }), llmConfig: null,
 *   loadProblem: null, run: { format: "instructions" as const, folder: "/s/gh", resources: [],
 *     env: ["GITHUB_TOKEN", "HOME_DIR"], net: ["api.github.com"] } };
 * const noted = withPolicyWarnings(record, { env: ["HOME_DIR"] });
 * assert.deepEqual(noted.definition.metadata?.warnings, [
 *   'field "env": the policy (policy.permissions.env) does not grant "GITHUB_TOKEN": its scripts run without it',
 *   'field "net": the policy (policy.permissions.net) does not grant "api.github.com": its scripts cannot reach it',
 * ]);
 * ```
 */
export function withPolicyWarnings(
  record: SkillRecord,
  policy: { env?: readonly string[]; net?: readonly string[] },
): SkillRecord {
  const run = record.run;
  if (run?.format !== "instructions") return record;
  const env = refusedEnv(run.env ?? [], policy.env ?? []);
  const net = splitScriptNet(run.net ?? [], policy.net ?? []).refused;
  const said = (names: string[]) => names.map((n) => `"${n}"`).join(", ");
  const added = [
    ...(env.length > 0
      ? [
        `field "env": the policy (policy.permissions.env) does not grant ${
          said(env)
        }: its scripts run without ${env.length > 1 ? "them" : "it"}`,
      ]
      : []),
    ...(net.length > 0
      ? [
        `field "net": the policy (policy.permissions.net) does not grant ${
          said(net)
        }: its scripts cannot reach ${net.length > 1 ? "them" : "it"}`,
      ]
      : []),
  ];
  if (added.length === 0) return record;
  const metadata = record.definition.metadata ?? {};
  const before = Array.isArray(metadata.warnings) ? metadata.warnings : [];
  return {
    ...record,
    definition: {
      ...record.definition,
      metadata: { ...metadata, warnings: [...before, ...added] },
    },
  };
}

/**
 * Why an Agent Skills folder's name breaks the Agent Skills naming rules
 * (1 to 64 lower-case letters, digits and single hyphens, no leading or
 * trailing hyphen, equal to the folder's name), or null when it keeps them.
 * MCP clients that verify skills (`skills/list`, SEP-2640) reject a skill
 * that breaks them, so such a skill is left out of `skills/list`.
 *
 * @param name the skill's `name`
 * @param folder the skill's folder (its last segment is compared)
 * @returns the problem, or null
 * @example
 * ```ts
 * import { agentSkillsNameProblem } from "./load_warnings.ts";
 * import assert from "node:assert/strict";
 * assert.equal(agentSkillsNameProblem("find-todos", "/s/find-todos"), null);
 * assert.match(agentSkillsNameProblem("find_todos", "/s/find_todos") ?? "", /lower-case/);
 * assert.match(agentSkillsNameProblem("notes", "/s/my-notes") ?? "", /folder "my-notes"/);
 * ```
 */
export function agentSkillsNameProblem(
  name: string,
  folder: string,
): string | null {
  if (name.length > 64 || !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
    return `name "${name}" breaks the Agent Skills naming rules (1 to 64 lower-case letters, digits and single hyphens)`;
  }
  const dir = basename(folder);
  if (dir !== name) {
    return `name "${name}" does not match its folder "${dir}" as the Agent Skills rules require`;
  }
  return null;
}

/**
 * Says, in an Agent Skills folder's warnings, that a name breaking the
 * Agent Skills naming rules ({@link agentSkillsNameProblem}) keeps the
 * skill out of MCP's `skills/list` (it is still served as a tool and over
 * A2E): the loader's own warning about the name gets the consequence
 * appended, or, when the loader's dialect allowed the name (A2E's `_`), a
 * warning is added.
 *
 * @param record the skill as loaded
 * @returns the record, its warnings saying so when the name breaks the rules
 * @example
 * ```ts
 * import { withNameWarning } from "./load_warnings.ts";
 * import { skill } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * const record = { definition: skill({ name: "my_notes", description: "Notes" }), llmConfig: null,
 *   loadProblem: null, run: { format: "instructions" as const, folder: "/s/my_notes", resources: [] } };
 * assert.match(String(withNameWarning(record).definition.metadata?.warnings), /left out of MCP skills\/list/);
 * ```
 */
export function withNameWarning(record: SkillRecord): SkillRecord {
  const run = record.run;
  if (run?.format !== "instructions") return record;
  const name = record.definition.name;
  const problem = agentSkillsNameProblem(name, run.folder);
  if (problem === null) return record;
  const tail =
    ": served as a tool and over A2E, but left out of MCP skills/list";
  const metadata = record.definition.metadata ?? {};
  const before = Array.isArray(metadata.warnings) ? metadata.warnings : [];
  const said = before.findIndex((w) =>
    typeof w === "string" && w.startsWith(`name "${name}"`)
  );
  const warnings = said < 0
    ? [...before, problem + tail]
    : before.map((w, i) => i === said ? `${w}${tail}` : w);
  return {
    ...record,
    definition: {
      ...record.definition,
      metadata: { ...metadata, warnings },
    },
  };
}

/**
 * Lists the loading warnings of skills, one line each.
 *
 * @param records the skills, as the catalog lists them
 * @returns lines such as `skill "Pdf" (/s/pdf/SKILL.md): name "Pdf" breaks ...`
 * @example
 * ```ts
 * import { skillLoadWarnings } from "./load_warnings.ts";
 * import { failedSkillRecord } from "./skill_record.ts";
 * import assert from "node:assert/strict";
 * const rec = failedSkillRecord("bad", { path: "/s/bad/SKILL.md", message: "YAML error at line 2", source: "project" });
 * assert.deepEqual(skillLoadWarnings([rec]), ['skill "bad" (/s/bad/SKILL.md) cannot be loaded: YAML error at line 2']);
 * ```
 */
export function skillLoadWarnings(records: readonly SkillRecord[]): string[] {
  const lines: string[] = [];
  for (const { definition, run, loadProblem } of records) {
    const where = `skill "${definition.name}"${
      definition.filePath ? ` (${definition.filePath})` : ""
    }`;
    if (run === null && loadProblem !== null) {
      lines.push(`${where} cannot be loaded: ${oneLine(loadProblem)}`);
      continue;
    }
    const warnings = definition.metadata?.warnings;
    if (!Array.isArray(warnings)) continue;
    for (const warning of warnings) {
      lines.push(`${where}: ${oneLine(String(warning))}`);
    }
  }
  return lines;
}

// A banner line stays one line, and a hostile file cannot flood the terminal.
function oneLine(text: string): string {
  let flat = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    flat += code < 0x20 || code === 0x7f ? " " : ch;
  }
  return flat.length > 300 ? `${flat.slice(0, 300)}...` : flat;
}
