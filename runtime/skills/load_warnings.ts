/**
 * One line per skill-loading problem, for the host's banner: each warning a
 * skill file's dialect raised (also in discovery's `metadata.warnings`),
 * and each skill that could not be loaded at all (listed as Blocked).
 *
 * @module
 */

import type { SkillRecord } from "./definition.ts";

/**
 * Lists the loading warnings of skills, one line each.
 *
 * @param records the skills, as the catalog lists them
 * @returns lines such as `skill "Pdf" (/s/pdf/SKILL.md): name "Pdf" breaks ...`
 * @example
 * ```ts
 * import { skillLoadWarnings } from "./load_warnings.ts";
 * import { failedSkillRecord } from "./definition.ts";
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
