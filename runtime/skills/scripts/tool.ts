/**
 * The `run_skill_script` tool an instruction skill's agent loop offers when
 * the skill carries scripts, and the limits its runs get. The tool relay
 * (`relays.ts`) holds a call to this tool's schema and runs the script
 * confined (see `run_script.ts`).
 *
 * @module
 */

import type { AgentTool } from "../run.ts";
import type { InstructionSkillRun } from "../catalog.ts";
import type { SkillLimits } from "../relays.ts";
import type { ScriptLimits } from "./run_script.ts";
import { listSkillScripts } from "./script_files.ts";
import { DEFAULT_INTERPRETERS } from "./interpreters.ts";
import { scriptEnv, splitScriptNet } from "./script_access.ts";
import { FILES_MOUNT } from "./files_root.ts";

/** The tool's name. */
export const RUN_SKILL_SCRIPT_TOOL = "run_skill_script";

/**
 * The tool as the agent loop offers it.
 *
 * @param scripts the skill's scripts (relative paths)
 * @returns the tool
 * @example
 * ```ts
 * import { runSkillScriptTool } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const tool = runSkillScriptTool(["scripts/a.py"]);
 * assert.deepEqual((tool.inputSchema.properties as any).script.enum, ["scripts/a.py"]);
 * ```
 */
export function runSkillScriptTool(scripts: readonly string[]): AgentTool {
  return {
    name: RUN_SKILL_SCRIPT_TOOL,
    description:
      "Runs one of this skill's scripts in a sandbox: no network (unless the " +
      "skill's `net` hosts are granted: then HTTP(S) to those only, through " +
      "the proxy in HTTP_PROXY/HTTPS_PROXY), the skill's " +
      "folder read-only at /skill, a fresh empty workspace at /work (the " +
      "working directory; `files` are written there first). Returns the exit " +
      "code, the tail of stdout/stderr and the files the script wrote. When " +
      "this skill uses the filesystem toolkit and the session configured " +
      `its root, that folder is at ${FILES_MOUNT} (read-only unless the ` +
      "configuration is writable; `files_root` in the result says).",
    inputSchema: {
      type: "object",
      properties: {
        script: { type: "string", enum: [...scripts] },
        args: { type: "array", items: { type: "string" } },
        stdin: { type: "string" },
        files: {
          type: "object",
          additionalProperties: { type: "string" },
          description: "Text files to put in the workspace: path → content",
        },
      },
      required: ["script"],
    },
    prompt: "Run a script only when the instructions say to.",
  };
}

/**
 * The tools a skill's run offers for its scripts: `run_skill_script` when an
 * instructions skill carries any, else none.
 *
 * @param run the instruction skill's run, or null for a code skill
 * @returns zero or one tool
 * @example
 * ```ts
 * import { skillScriptTools } from "./tool.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await skillScriptTools(null), []);
 * ```
 */
export async function skillScriptTools(
  run: InstructionSkillRun | null,
): Promise<AgentTool[]> {
  if (run === null) return [];
  const scripts = await listSkillScripts(run.folder, run.resources);
  return scripts.length > 0 ? [runSkillScriptTool(scripts)] : [];
}

/**
 * The script limits of a run, from the host's skill limits and the skill.
 *
 * @param limits the host's limits
 * @param run the instruction skill's run (its declared variables and
 *   hosts), or null for a code skill
 * @returns interpreters (the default when unset), the memory cap, the
 *   confinement mode, the variables granted and the hosts granted (with
 *   the broker their requests go through)
 * @example
 * ```ts
 * import { scriptLimits } from "./tool.ts";
 * import assert from "node:assert/strict";
 * assert.equal(scriptLimits({}).interpreters[".py"], "python3");
 * const run = { format: "instructions" as const, folder: "/s", resources: [], env: ["PATH", "NOT_GRANTED"] };
 * assert.deepEqual(scriptLimits({ scriptEnvGrant: ["PATH"] }, run).env, {});
 * ```
 */
export function scriptLimits(
  limits: SkillLimits,
  run: InstructionSkillRun | null = null,
): ScriptLimits {
  const { granted } = splitScriptNet(
    run?.net ?? [],
    limits.scriptNetGrant ?? [],
  );
  return {
    interpreters: limits.interpreters ?? DEFAULT_INTERPRETERS,
    workspace: limits.scriptWorkspace,
    files: limits.scriptFiles,
    confinement: limits.scriptConfinement,
    env: scriptEnv(run?.env ?? [], limits.scriptEnvGrant ?? []),
    net: granted.length > 0 && limits.scriptEgress
      ? { broker: limits.scriptEgress, hosts: granted }
      : undefined,
  };
}
