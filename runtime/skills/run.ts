/**
 * One skill call, from `skill.started` to `skill.completed`/`skill.failed`:
 * argument validation, the effective timeout, the run itself, and output
 * validation. Code skills run in a sandbox through `Sandbox.call`;
 * instruction skills run in the host's agent loop. Both reach tools and the
 * LLM through the same two relays (`tool_relay.ts`, `chat_relay.ts`), with
 * turns counted by `turn_budget.ts` and failures worded by `failure.ts`.
 *
 * @module
 */

import { isOutput, output } from "../../protocol/output.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import { GENERIC_EVENT_KINDS } from "../../protocol/codes.ts";
import type { JsonObject } from "../../protocol/json.ts";
import {
  type LlmChoice,
  type Skill,
  type SkillOutcome,
  skillOutcome,
} from "../../protocol/skill.ts";
import {
  SchemaViolationError,
  SkillboxError,
  TimeoutError,
  toWireError,
} from "../../protocol/errors.ts";
import { type Deadline, raceAbort, startDeadline } from "../deadline.ts";
import { runAgentLoop } from "./agent_loop.ts";
import {
  allowedTools,
  commandRulesOf,
  offeredTools,
  readSkillFileTool,
} from "./agent_tools.ts";
import { createChatRelay, type SkillChat } from "./chat_relay.ts";
import type { SkillRecord } from "./skill_record.ts";
import { SkillEventLog } from "./events.ts";
import { failSkill, notRunnableError } from "./failure.ts";
import { SkillFileRefusedError } from "./skill_links.ts";
import type { LlmResolver, SkillLimits, SkillToolHost } from "./run_types.ts";
import { checkSchema } from "./schema.ts";
import { summarize } from "./summarize.ts";
import { createToolRelay, type SkillToolCall } from "./tool_relay.ts";
import { scriptLimits, skillScriptTools } from "./scripts/tool.ts";
import { effectiveMaxTurns, TurnBudget } from "./turn_budget.ts";
import type { RunObserver } from "../store/recorder.ts";

/** Everything {@link runSkill} needs besides the skill. */
export interface RunSkillOptions {
  /** The request's `id`, echoed in events as `req_id`. */
  reqId: string;
  /** The validated arguments object. */
  arguments: Record<string, unknown>;
  /** Requested timeout in seconds. */
  timeout: number;
  /** Send events live. */
  streaming: boolean;
  /** The agent's `llm_override`, or null. */
  llmOverride: LlmChoice | null;
  metadata: JsonObject;
  session: SessionScope;
  /** Aborted when the session ends or the call is cancelled. */
  signal: AbortSignal;
  tools: SkillToolHost;
  sandbox?: Pick<Sandbox, "call">;
  llm: LlmResolver;
  limits?: SkillLimits;
  /** Receives the run (history, metrics, console). @default none */
  observer?: RunObserver;
}

/**
 * Runs one call of a known skill and returns its result. Never throws:
 * every failure becomes `success: false` with an `error_code`, after a
 * `skill.failed` event.
 *
 * @param record the skill
 * @param definition its definition with the current status
 * @param options the request, session, tools, sandbox and LLM
 * @returns the complete outcome (the codec encodes it as `SkillResult`)
 * @example A code skill on a fake sandbox
 * ```ts
 * import { runSkill } from "./run.ts";
 * import { codeSkillRecord } from "./code_skill.ts";
 * import assert from "node:assert/strict";
 * const record = codeSkillRecord({
 *   path: "/s/hi.ts", export: "default", hash: "h", name: "hi", runnable: true,
 *   fields: { description: "Says hi" },
 * }, { source: "system" });
 * const result = await runSkill(record, record.definition, {
 *   reqId: "r1", arguments: {}, timeout: 5, streaming: false, llmOverride: null, metadata: {},
 *   session: { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal },
 *   signal: new AbortController().signal,
 *   tools: { tool: () => undefined, toolkit: () => undefined, call: () => Promise.reject(new Error("none")) },
 *   sandbox: { call: async (_call, hooks) => { hooks.onEvent("status", { message: "working" }); return { ok: true, value: "hi", truncated: false }; } },
 *   llm: () => { throw new Error("no LLM"); },
 * });
 * assert.equal(result.data, "hi");
 * assert.deepEqual(result.events.map((e) => e.kind), ["skill.started", "status", "skill.completed"]);
 * ```
 */
export async function runSkill(
  record: SkillRecord,
  definition: Skill,
  options: RunSkillOptions,
): Promise<SkillOutcome> {
  const limits = options.limits ?? {};
  const name = definition.name;
  const observer = options.observer;
  const runId = observer?.started({
    kind: "skill",
    name,
    session: options.session,
    args: options.arguments,
  }) ?? "";
  const done = (result: SkillOutcome): SkillOutcome => {
    observer?.finished(runId, {
      outcome: result.success ? "ok" : result.errorCode ?? "skill_error",
      error: result.error,
      result: result.data,
      summary: result.summary,
    });
    return result;
  };
  const log = new SkillEventLog(options.reqId, {
    send: options.streaming ? (m) => options.session.send(m) : undefined,
    maxEvents: limits.maxEvents,
    onEvent: observer && ((event) => observer.event(runId, event)),
  });
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  log.emit("skill.started", {
    name,
    version: definition.version,
    arguments: summarize(options.arguments),
  });

  const refusal = refuseToStart(record, definition, options.arguments);
  if (refusal !== null) return done(failSkill(log, refusal, elapsed()));

  const { run, deadline } = startRun(record, definition, options, log, runId);
  const { signal, budget } = run;

  try {
    const { value, truncated } = record.run?.format === "code"
      ? await runCodeSkill(run)
      : await runInstructionSkill(run);
    const data = isOutput(value) ? value.data ?? null : value ?? null;
    const summary = isOutput(value) ? value.summary ?? null : null;
    const problem = checkSchema(definition.outputSchema, data);
    if (problem !== null) {
      throw new SchemaViolationError(
        `Output of skill "${name}" does not match output_schema: ${problem}`,
        { detail: { where: "output" } },
      );
    }
    log.emit("skill.completed", { duration_ms: elapsed(), turns: budget.used });
    return done(skillOutcome({
      success: true,
      data,
      summary,
      durationMs: elapsed(),
      events: log.events,
      truncated: truncated || log.truncated,
    }));
  } catch (error) {
    // A timeout or cancellation is the real cause of whatever the skill
    // threw afterwards; max_turns likewise wins over the skill's reaction.
    return done(failSkill(
      log,
      signal.aborted ? signal.reason : budget.exceeded ?? error,
      elapsed(),
    ));
  } finally {
    deadline.dispose(); // stops anything still running for this call
  }
}

// The deadline (the smallest of the request's timeout, the skill's and the
// policy cap, following cancellation), the turn budget and the two relays.
function startRun(
  record: SkillRecord,
  definition: Skill,
  options: RunSkillOptions,
  log: SkillEventLog,
  runId: string,
): { run: SkillRun; deadline: Deadline } {
  const name = definition.name;
  const limits = options.limits ?? {};
  const timeoutSeconds = Math.min(
    options.timeout,
    definition.timeoutSeconds ?? Infinity,
    limits.maxTimeoutSeconds ?? 600,
  );
  const deadline = startDeadline(timeoutSeconds * 1000, {
    parent: options.signal,
    onTimeout: () =>
      new TimeoutError(
        `Skill "${name}" timed out after ${formatSeconds(timeoutSeconds)}`,
      ),
    onCancel: (reason) =>
      new SkillboxError(
        "runtime_error",
        `Skill "${name}" was cancelled: ${reasonText(reason)}`,
      ),
  });
  const signal = deadline.signal;
  const budget = new TurnBudget(
    name,
    effectiveMaxTurns(definition.maxTurns, limits),
  );
  const chat = createChatRelay({
    budget,
    log,
    signal,
    provider: () =>
      options.llm({ override: options.llmOverride, skill: record.llmConfig }),
  });
  const allowed = allowedTools(definition, options.tools);
  const callTool = createToolRelay({
    skill: name,
    allowed,
    files: record.run?.format === "instructions"
      ? {
        folder: record.run.folder,
        resources: record.run.resources,
        fetched: record.run.fetched,
      }
      : null,
    scripts: scriptLimits(limits, record.run),
    commandRules: commandRulesOf(record),
    tools: options.tools,
    session: options.session,
    log,
    signal,
    remainingMs: deadline.remainingMs,
    parentRunId: runId || undefined,
    history: options.observer?.files,
  });
  return {
    deadline,
    run: {
      record,
      definition,
      options,
      log,
      signal,
      remainingMs: deadline.remainingMs,
      budget,
      allowed,
      chat,
      callTool,
    },
  };
}

/** One running skill call, as its two kinds of run see it. */
interface SkillRun {
  record: SkillRecord;
  definition: Skill;
  options: RunSkillOptions;
  log: SkillEventLog;
  signal: AbortSignal;
  remainingMs: () => number;
  budget: TurnBudget;
  allowed: Set<string>;
  chat: SkillChat;
  callTool: SkillToolCall;
}

/** What a run gave before output validation. */
interface RunValue {
  value: unknown;
  truncated: boolean;
}

const GENERIC = new Set<string>(GENERIC_EVENT_KINDS);

// Why a skill cannot start: not runnable, or arguments that do not match.
function refuseToStart(
  record: SkillRecord,
  definition: Skill,
  args: Record<string, unknown>,
): SkillboxError | null {
  if (definition.status !== "Published" || record.run === null) {
    return notRunnableError(definition);
  }
  const problem = checkSchema(definition.inputSchema, args);
  if (problem === null) return null;
  return new SchemaViolationError(
    `Invalid arguments for skill "${definition.name}": ${problem}`,
    { detail: { where: "arguments" } },
  );
}

async function runCodeSkill(run: SkillRun): Promise<RunValue> {
  const { record, options, log, signal } = run;
  const name = run.definition.name;
  if (record.run?.format !== "code") throw new TypeError("Not a code skill");
  if (!options.sandbox) {
    throw new SkillboxError(
      "runtime_error",
      `Cannot run code skill "${name}": the host has no sandbox`,
    );
  }
  const outcome = await raceAbort(
    options.sandbox.call({
      path: record.run.path,
      export: record.run.export,
      version: record.run.version,
      args: options.arguments,
      grant: record.run.grant,
      timeoutMs: run.remainingMs(),
      sessionId: options.session.id,
      callId: options.reqId,
      config: {},
      metadata: options.metadata,
      isolation: record.run.isolation,
    }, {
      signal,
      // Only the generic kinds: a skill cannot forge lifecycle events.
      onEvent: (kind, data) => {
        if (GENERIC.has(kind)) log.emit(kind, data);
      },
      // A code skill gets the tool's data, as the tool returned it.
      callTool: (tool, args, s) =>
        run.callTool(tool, args, null, s).then((v) =>
          isOutput(v) ? v.data ?? null : v
        ),
      chat: (request, s) => run.chat(request, s),
    }),
    signal,
  );
  if (run.budget.exceeded) throw run.budget.exceeded;
  if (!outcome.ok) {
    throw new SkillboxError(outcome.code, outcome.message, {
      retryable: outcome.retryable,
    });
  }
  return { value: outcome.value, truncated: outcome.truncated };
}

async function runInstructionSkill(run: SkillRun): Promise<RunValue> {
  const { definition, options, signal } = run;
  const files = run.record.run?.format === "instructions"
    ? run.record.run
    : null;
  const resources = files?.resources ?? [];
  const fetched = files?.fetched;
  const tools = offeredTools(
    run.allowed,
    options.tools,
    commandRulesOf(run.record),
  );
  if (resources.length > 0) {
    const tool = readSkillFileTool(resources);
    tools.push(
      fetched
        ? { ...tool, description: `${tool.description}. ${fetched.note}` }
        : tool,
    );
  }
  // Fetched skills' scripts are not run: no tool offers them.
  if (!fetched) tools.push(...await skillScriptTools(run.record.run));
  const result = await raceAbort(
    runAgentLoop(options.arguments, {
      name: definition.name,
      instructions: definition.instructions ?? "",
      whenToUse: definition.whenToUse,
      argumentHint: definition.argumentHint,
      tools,
      outputSchema: definition.outputSchema,
      signal,
      maxToolResultChars: options.limits?.maxToolResultChars,
      chat: (request) => run.chat(request),
      callTool: async (tool, args, intention) => {
        try {
          return { ok: true, value: await run.callTool(tool, args, intention) };
        } catch (error) {
          signal.throwIfAborted();
          // A file that is not what was listed: the run fails, unseen.
          if (error instanceof SkillFileRefusedError) throw error;
          return { ok: false, message: toWireError(error).message };
        }
      },
    }),
    signal,
  );
  const value = result.brokeLoop
    ? output({ data: result.data, summary: result.summary })
    : result.data;
  return { value, truncated: false };
}

function formatSeconds(seconds: number): string {
  return seconds >= 1
    ? `${+seconds.toFixed(3)} s`
    : `${Math.round(seconds * 1000)} ms`;
}

function reasonText(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return typeof reason === "string" && reason ? reason : "the session ended";
}
