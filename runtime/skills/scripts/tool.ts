/**
 * The `run_skill_script` tool an instruction skill's agent loop offers when
 * the skill carries scripts, and its call: the script checked against the
 * skill's own list, then run confined (see `run_script.ts`).
 *
 * @module
 */

import { validateValue } from "../../schema/validator.ts";
import type { AgentTool } from "../run.ts";
import type { InstructionSkillRun } from "../catalog.ts";
import type { SkillLimits } from "../relays.ts";
import {
  runSkillScript,
  type ScriptCall,
  type ScriptLimits,
} from "./run_script.ts";
import { listSkillScripts } from "./script_files.ts";
import { DEFAULT_INTERPRETERS } from "./interpreters.ts";
import { scriptEnv, splitScriptNet } from "./script_access.ts";
import { FILES_MOUNT, type FilesRoot } from "./files_root.ts";

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

/**
 * What {@link callSkillScript} needs besides the arguments: the skill's
 * folder, time, events and history as {@link ScriptCall} takes them (and
 * handed to it as they are), its linked files, limits and files root.
 */
export interface SkillScriptContext
  extends Pick<ScriptCall, "folder" | "timeoutMs" | "onEvent" | "keep"> {
  /** Ends the script: a skill's scripts always stop with the skill. */
  signal: AbortSignal;
  resources: readonly string[];
  limits: ScriptLimits;
  /**
   * The session's filesystem mount for this run (see `files_root.ts`).
   * @default none
   */
  filesRoot?: () => Promise<FilesRoot | null>;
}

/**
 * Checks the model's arguments and runs the script.
 *
 * @param args the tool call's arguments
 * @param ctx the skill's folder, limits and events
 * @returns the script's result
 * @throws {Error} a message the model can read (unknown script, bad args,
 *   no interpreter)
 * @example
 * ```ts
 * import { callSkillScript } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const folder = await Deno.makeTempDir();
 * await assert.rejects(callSkillScript({ script: "x.py" }, {
 *   folder, resources: [], limits: { interpreters: {} }, timeoutMs: 1000,
 *   signal: new AbortController().signal, onEvent() {},
 * }), /"script" must be one of \[\]/);
 * ```
 */
export async function callSkillScript(
  args: Record<string, unknown>,
  ctx: SkillScriptContext,
): Promise<unknown> {
  const { resources, limits, filesRoot, ...call } = ctx;
  // The schema the model was offered says what the call must be (its
  // `script` one of the skill's scripts, listed now): the host's validator
  // holds the call to it and names the item that is not.
  const scripts = await listSkillScripts(call.folder, resources);
  const checked = validateValue(runSkillScriptTool(scripts).inputSchema, args);
  if (!checked.valid) throw new Error(checked.message);
  const mount = await filesRoot?.() ?? null;
  const result = await runSkillScript({
    ...call,
    script: args.script as string,
    args: (args.args ?? []) as string[],
    stdin: args.stdin as string | undefined,
    files: (args.files ?? {}) as Record<string, string>,
    filesRoot: mount && "bind" in mount ? mount.bind : undefined,
  }, limits);
  return mount && "refused" in mount
    ? { ...result, files_root_refused: mount.refused }
    : result;
}
