/**
 * The tool-call relay of a skill call: the one path `ctx.tools.call` and the
 * agent loop's tool calls take. It refuses tools the skill did not declare,
 * reads linked files for `read_skill_file`, runs everything else through the
 * tool host with the time left, relays the tool's own progress events, and
 * emits `tool.started` and `tool.completed`/`tool.failed`. A skill whose
 * `allowed-tools` narrow `run_command` (`Bash(git:*)`) is held to them here.
 *
 * @module
 */

import { isOutput } from "../../protocol/output.ts";
import type { SessionScope } from "../capability.ts";
import {
  PermissionDeniedError,
  SkillboxError,
  toWireError,
} from "../../protocol/errors.ts";
import type { SkillEventLog } from "./events.ts";
import { READ_SKILL_FILE_TOOL } from "./agent_tools.ts";
import { readSkillFile, SkillFileRefusedError } from "./skill_links.ts";
import {
  COMMAND_TOOL,
  commandRefusal,
  type CommandRule,
} from "./tool_names.ts";
import type { SkillToolHost, SkillToolOutcome } from "./run_types.ts";
import type { FetchedSkillFiles } from "./skill_record.ts";
import { summarize } from "./summarize.ts";
import { callSkillScript, RUN_SKILL_SCRIPT_TOOL } from "./scripts/tool.ts";
import type { ScriptLimits } from "./scripts/run_script.ts";
import { scriptFilesRoot } from "./scripts/files_root.ts";
import type { RunFiles } from "../store/recorder.ts";
import { CODE_TOOL } from "../code/inner_calls.ts";

// The kinds of a tool's own events a skill relays; lifecycle kinds are the
// skill's to emit.
const RELAYED_TOOL_EVENTS = new Set(["progress", "status", "log", "artifact"]);

/** Where a skill's files are: its folder, or fetched. */
type SkillFiles = {
  folder: string;
  resources: readonly string[];
  fetched?: FetchedSkillFiles;
};

/** One tool call of a skill; resolves with the tool's value or throws. */
export type SkillToolCall = (
  tool: string,
  args: Record<string, unknown>,
  intention: string | null,
  callSignal?: AbortSignal,
) => Promise<unknown>;

/** What {@link createToolRelay} needs. */
export interface ToolRelayOptions {
  /** The skill's name, for messages. */
  skill: string;
  /** How the skill's scripts run; null: `run_skill_script` is refused. @default null */
  scripts?: ScriptLimits | null;
  /** The tools the skill declared (see `allowedTools`). */
  allowed: ReadonlySet<string>;
  /**
   * The skill's linked files, when it has any (instruction skills);
   * `fetched` when they are fetched, not read from `folder` (an imported
   * MCP server's skill, whose scripts are not run).
   */
  files: SkillFiles | null;
  /** What `run_command` may run (`Bash(git:*)`); null: not narrowed. @default null */
  commandRules?: readonly CommandRule[] | null;
  /** The host's tools. */
  tools: SkillToolHost;
  /** The session the skill runs for. */
  session: SessionScope;
  /** Where `tool.*` events go. */
  log: SkillEventLog;
  /** The skill call's signal (deadline and cancellation). */
  signal: AbortSignal;
  /** Milliseconds left for the skill. */
  remainingMs: () => number;
  /** The observer's id of the skill's run (tool calls are its children). */
  parentRunId?: string;
  /**
   * Where the run's files go (scripts' workspaces), when the run store
   * keeps files. @default none
   */
  history?: RunFiles | null;
}

/**
 * Makes the tool-call function of one skill call.
 *
 * @param options what the skill may call and where events go
 * @returns the relay
 * @example An undeclared tool is refused with `tool.failed`
 * ```ts
 * import { createToolRelay } from "./tool_relay.ts";
 * import { SkillEventLog } from "./events.ts";
 * import assert from "node:assert/strict";
 * const log = new SkillEventLog("r1");
 * const call = createToolRelay({
 *   skill: "s", allowed: new Set(), files: null, log,
 *   tools: { tool: () => undefined, toolkit: () => undefined, call: () => Promise.reject(new Error("unused")) },
 *   session: { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal },
 *   signal: new AbortController().signal,
 *   remainingMs: () => 1000,
 * });
 * await assert.rejects(call("rm", {}, null), /not in the skill's "tools"/);
 * assert.equal(log.events[0]?.kind, "tool.failed");
 * ```
 */
export function createToolRelay(options: ToolRelayOptions): SkillToolCall {
  const { log, signal, files } = options;
  let scriptCalls = 0;
  return async (tool, args, intention, callSignal) => {
    signal.throwIfAborted();
    const readsFile = tool === READ_SKILL_FILE_TOOL && files !== null &&
      files.resources.length > 0;
    const runsScript = tool === RUN_SKILL_SCRIPT_TOOL && files !== null &&
      (options.scripts ?? null) !== null && !files.fetched;
    const refusal = tool === RUN_SKILL_SCRIPT_TOOL && files?.fetched
      ? `cannot call tool "${tool}": the scripts of a skill served by an MCP server are not run by this host (${READ_SKILL_FILE_TOOL} reads them)`
      : !readsFile && !runsScript && !options.allowed.has(tool)
      ? `cannot call tool "${tool}": it is not in the skill's "tools" or "toolkits"`
      // Code mode reaches every tool of the session: from a skill it would
      // widen the skill's declared tools to all of them.
      : tool === CODE_TOOL
      ? `cannot call tool "${tool}": a skill's tool calls are limited to the tools it declares, and code run by "${tool}" could call any`
      // `Bash(git:*)`-style narrowing from the skill's frontmatter.
      : tool === COMMAND_TOOL && options.commandRules
      ? commandRefusal(options.commandRules, args)
      : null;
    if (refusal !== null) throw refuse(options, tool, args, refusal);
    log.emit("tool.started", {
      tool,
      arguments: summarize(args),
      ...(intention ? { intention } : {}),
    });
    const t0 = performance.now();
    const outcome = readsFile
      ? await readFile(options.skill, files, args)
      : runsScript
      ? await runScript(options, files, args, callSignal, ++scriptCalls)
      : await runTool(options, tool, args, callSignal);
    const took = Math.round(performance.now() - t0);
    if (outcome.ok) {
      log.emit("tool.completed", {
        tool,
        duration_ms: took,
        result: summarize(
          isOutput(outcome.value) ? outcome.value.data : outcome.value,
        ),
      });
      return outcome.value;
    }
    log.emit("tool.failed", {
      tool,
      duration_ms: took,
      error: outcome.message,
      error_code: outcome.code,
    });
    // A file that is not what was listed ends the run, not just the call.
    throw "refused" in outcome && outcome.refused
      ? outcome.refused
      : new SkillboxError(outcome.code, outcome.message);
  };
}

// A refused call: say so in the events, and throw the denial.
function refuse(
  options: ToolRelayOptions,
  tool: string,
  args: Record<string, unknown>,
  refusal: string,
): PermissionDeniedError {
  const denial = new PermissionDeniedError(
    `Skill "${options.skill}" ${refusal}`,
  );
  options.log.emit("tool.failed", {
    tool,
    arguments: summarize(args),
    duration_ms: 0,
    error: denial.message,
    error_code: denial.code,
  });
  return denial;
}

async function readFile(
  skill: string,
  files: SkillFiles,
  args: Record<string, unknown>,
): Promise<SkillToolOutcome & { refused?: SkillFileRefusedError }> {
  try {
    if (files.fetched) {
      return {
        ok: true,
        value: await files.fetched.read(String(args.path ?? "")),
      };
    }
    const text = await readSkillFile(
      { name: skill, folder: files.folder, resources: files.resources },
      String(args.path ?? ""),
    );
    return { ok: true, value: text };
  } catch (error) {
    return error instanceof SkillFileRefusedError
      ? { ...failed(error), refused: error }
      : failed(error);
  }
}

async function runScript(
  options: ToolRelayOptions,
  files: { folder: string; resources: readonly string[] },
  args: Record<string, unknown>,
  callSignal: AbortSignal | undefined,
  call: number,
): Promise<SkillToolOutcome> {
  const { signal, log, history, parentRunId } = options;
  try {
    const value = await callSkillScript(args, {
      ...files,
      limits: options.scripts!,
      timeoutMs: options.remainingMs(),
      signal: callSignal ? AbortSignal.any([signal, callSignal]) : signal,
      onEvent: (kind, data) =>
        log.emit(kind, { ...data, tool: RUN_SKILL_SCRIPT_TOOL }),
      filesRoot: () =>
        scriptFilesRoot(options.allowed, options.tools, options.session),
      // Each call's files under its number: two calls may write one name.
      keep: history && parentRunId
        ? {
          maxBytes: history.maxBytes,
          maxFiles: history.maxFiles,
          attach: (kept, unlisted) =>
            history.attach(
              parentRunId,
              kept.map((f) => ({ ...f, name: `${call}/${f.name}` })),
              unlisted,
            ),
        }
        : undefined,
    });
    return { ok: true, value };
  } catch (error) {
    return failed(error);
  }
}

async function runTool(
  options: ToolRelayOptions,
  tool: string,
  args: Record<string, unknown>,
  callSignal: AbortSignal | undefined,
): Promise<SkillToolOutcome> {
  const { signal, log } = options;
  try {
    return await options.tools.call(tool, args, {
      session: options.session,
      signal: callSignal ? AbortSignal.any([signal, callSignal]) : signal,
      timeoutMs: options.remainingMs(),
      parentRunId: options.parentRunId,
      // A long tool's progress is the skill's progress: relay it live.
      onEvent: (kind, data) => {
        if (RELAYED_TOOL_EVENTS.has(kind)) log.emit(kind, { ...data, tool });
      },
    });
  } catch (error) {
    return failed(error);
  }
}

function failed(error: unknown): SkillToolOutcome {
  const wire = toWireError(error);
  return { ok: false, code: wire.code, message: wire.message };
}
