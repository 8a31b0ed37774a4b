/**
 * One skill call, from `skill.started` to `skill.completed`/`skill.failed`:
 * argument validation, the effective timeout, `max_turns`, the declared-tools
 * gate, `llm.*` and `tool.*` events, cancellation, and output validation.
 * Code skills run in a sandbox through `Sandbox.call`; instruction skills run
 * in the host's agent loop. Both reach tools and the LLM through the same
 * two functions here.
 *
 * @module
 */

import { isOutput, output } from "../../sandbox/sdk/types.ts";
import type {
  ChatRequest,
  ChatResponse,
  JsonSchema,
} from "../../sandbox/sdk/types.ts";
import type { Sandbox, SandboxOutcome } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import { GENERIC_EVENT_KINDS } from "../../protocol/codes.ts";
import type {
  JsonObject,
  LLMConfig,
  SkillDefinition,
  SkillResult,
} from "../../protocol/models.ts";
import { skillResult } from "../../protocol/models.ts";
import {
  PermissionDeniedError,
  SchemaViolationError,
  SkillboxError,
  TimeoutError,
  toWireError,
} from "../../protocol/errors.ts";
import type { LlmProvider } from "../llm/provider.ts";
import { type AgentTool, runAgentLoop } from "./agent_loop.ts";
import type { SkillRecord } from "./definition.ts";
import { SkillEventLog } from "./events.ts";
import { checkSchema } from "./schema.ts";
import { readSkillFile } from "./skill_md.ts";
import { COMMAND_TOOL, commandRefusal } from "./tool_names.ts";

// The kinds of a tool's own events a skill relays; lifecycle kinds are the
// skill's to emit.
const RELAYED_TOOL_EVENTS = new Set(["progress", "status", "log", "artifact"]);

/** A tool as the skills capability sees it. */
export interface SkillToolInfo {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  input_schema: JsonSchema;
  /** Its toolkit, or null. */
  toolkit: string | null;
  /** Markdown guidance for models, or "". */
  prompt: string;
}

/** What one tool call gave: its value, or a failure with an A2E code. */
export type SkillToolOutcome =
  | { ok: true; value: unknown }
  | { ok: false; code: ErrorCode; message: string };

/** Options of {@link SkillToolHost.call}. */
export interface SkillToolCallOptions {
  /** The session the skill runs for (toolkit configuration, policy). */
  session: SessionScope;
  /** Aborted when the skill ends or is cancelled. */
  signal: AbortSignal;
  /** Time left for the skill, in milliseconds. */
  timeoutMs: number;
  /**
   * The tool's own `progress`/`status`/`log`/`artifact` events, as they
   * happen (relayed as the skill's events, tagged with the tool's name).
   */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
}

/**
 * The tools a skill may use, and the one path that runs them (policy
 * checks, argument validation, sandbox). The registry and tools capability
 * provide it; see `registryToolHost` in `capability.ts`.
 */
export interface SkillToolHost {
  /** A loaded tool by name. */
  tool(name: string): SkillToolInfo | undefined;
  /** A loaded toolkit's tool names. */
  toolkit(name: string): { readonly tools: readonly string[] } | undefined;
  /** Runs a tool; resolves with its outcome, never throws for tool failures. */
  call(
    name: string,
    args: Record<string, unknown>,
    options: SkillToolCallOptions,
  ): Promise<SkillToolOutcome>;
}

/** Picks the LLM for a call: `override`, else `skill`, else the host default. */
export type LlmResolver = (
  configs: { override: LLMConfig | null; skill: LLMConfig | null },
) => LlmProvider;

/** The host's limits on skills. */
export interface SkillLimits {
  /** Policy cap on any skill's wall-clock time, in seconds. @default 600 */
  maxTimeoutSeconds?: number;
  /** `max_turns` of a skill that sets none. @default 10 */
  defaultMaxTurns?: number;
  /** Policy cap on `max_turns`. @default 50 */
  maxTurns?: number;
  /** Events kept in `SkillResult.events`. @default 2000 */
  maxEvents?: number;
  /** Longest tool result fed back to the model, in characters. @default 32000 */
  maxToolResultChars?: number;
}

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
  llmOverride: LLMConfig | null;
  metadata: JsonObject;
  session: SessionScope;
  /** Aborted when the session ends or the call is cancelled. */
  signal: AbortSignal;
  tools: SkillToolHost;
  sandbox?: Pick<Sandbox, "call">;
  llm: LlmResolver;
  limits?: SkillLimits;
}

/** The name of the tool the agent loop adds for linked skill files. */
export const READ_SKILL_FILE_TOOL = "read_skill_file";

const GENERIC = new Set<string>(GENERIC_EVENT_KINDS);

/**
 * Runs one call of a known skill and returns its result. Never throws:
 * every failure becomes `success: false` with an `error_code`, after a
 * `skill.failed` event.
 *
 * @param record the skill
 * @param definition its definition with the current status
 * @param options the request, session, tools, sandbox and LLM
 * @returns the complete `SkillResult`
 * @example A code skill on a fake sandbox
 * ```ts
 * import { runSkill } from "./run.ts";
 * import { codeSkillRecord } from "./definition.ts";
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
  definition: SkillDefinition,
  options: RunSkillOptions,
): Promise<SkillResult> {
  const limits = options.limits ?? {};
  const name = definition.name;
  const log = new SkillEventLog(options.reqId, {
    send: options.streaming ? (m) => options.session.send(m) : undefined,
    maxEvents: limits.maxEvents,
  });
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  log.emit("skill.started", {
    name,
    version: definition.version,
    arguments: summarize(options.arguments),
  });

  const fail = (error: unknown): SkillResult => {
    const wire = toWireError(error);
    const code = wire.code === "tool_error" ? "skill_error" : wire.code;
    log.emit("skill.failed", {
      error: wire.message,
      error_code: code,
      duration_ms: elapsed(),
    });
    return skillResult({
      success: false,
      error: wire.message,
      error_code: code,
      duration_ms: elapsed(),
      events: log.events,
      truncated: log.truncated,
    });
  };

  if (definition.status !== "Published" || record.run === null) {
    const why = definition.metadata?.blocked_reason ??
      (definition.status === "Created"
        ? "it is still being validated"
        : "it cannot run");
    return fail(
      new SkillboxError(
        "skill_error",
        `Cannot run skill "${name}" (${definition.status}): ${why}`,
      ),
    );
  }
  const argProblem = checkSchema(definition.input_schema, options.arguments);
  if (argProblem !== null) {
    return fail(
      new SchemaViolationError(
        `Invalid arguments for skill "${name}": ${argProblem}`,
        { detail: { where: "arguments" } },
      ),
    );
  }

  // The smallest of the request's timeout, the skill's and the policy cap.
  const timeoutSeconds = Math.min(
    options.timeout,
    definition.timeout_seconds ?? Infinity,
    limits.maxTimeoutSeconds ?? 600,
  );
  const timeoutMs = Math.max(1, Math.round(timeoutSeconds * 1000));
  const deadline = performance.now() + timeoutMs;
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new TimeoutError(
          `Skill "${name}" timed out after ${formatSeconds(timeoutSeconds)}`,
        ),
      ),
    timeoutMs,
  );
  const onCancel = () =>
    controller.abort(
      new SkillboxError(
        "runtime_error",
        `Skill "${name}" was cancelled: ${reasonText(options.signal.reason)}`,
      ),
    );
  if (options.signal.aborted) onCancel();
  else options.signal.addEventListener("abort", onCancel, { once: true });
  const signal = controller.signal;

  const maxTurns = Math.min(
    definition.max_turns ?? limits.defaultMaxTurns ?? 10,
    limits.maxTurns ?? 50,
  );
  let turn = 0;
  let turnsExceeded: SkillboxError | null = null;
  let provider: LlmProvider | null = null;

  // ctx.llm.chat and the agent loop's turns: one turn each, counted here.
  const chat = async (
    request: ChatRequest,
    callSignal?: AbortSignal,
  ): Promise<ChatResponse> => {
    signal.throwIfAborted();
    if (turn >= maxTurns) {
      turnsExceeded = new SkillboxError(
        "max_turns_exceeded",
        `Skill "${name}" reached max_turns (${maxTurns}): LLM call ${
          turn + 1
        } refused`,
      );
      throw turnsExceeded;
    }
    provider ??= options.llm({
      override: options.llmOverride,
      skill: record.llmConfig,
    });
    const current = ++turn;
    log.emit("llm.started", {
      turn: current,
      provider: provider.provider,
      model: provider.model,
    });
    const response = await provider.chat(request, {
      signal: callSignal ? AbortSignal.any([signal, callSignal]) : signal,
      turn: current,
      onToken: (text) => log.emit("llm.token", { text, turn: current }),
    });
    log.emit("llm.completed", {
      turn: current,
      usage: {
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
      },
      stop_reason: response.stop_reason,
    });
    return response;
  };

  const allowed = allowedTools(definition, options.tools);
  const resources = record.run.format === "instructions"
    ? record.run.resources
    : [];
  // `Bash(git:*)`-style narrowing from the skill's frontmatter.
  const commandRules = record.run.format === "instructions"
    ? record.run.commandRules ?? null
    : null;
  // ctx.tools.call and the agent loop's tool calls.
  const callTool = async (
    tool: string,
    args: Record<string, unknown>,
    intention: string | null,
    callSignal?: AbortSignal,
  ): Promise<unknown> => {
    signal.throwIfAborted();
    const isResource = tool === READ_SKILL_FILE_TOOL && resources.length > 0;
    const refusal = !isResource && !allowed.has(tool)
      ? `cannot call tool "${tool}": it is not in the skill's "tools" or "toolkits"`
      : tool === COMMAND_TOOL && commandRules
      ? commandRefusal(commandRules, args)
      : null;
    if (refusal !== null) {
      const denial = new PermissionDeniedError(`Skill "${name}" ${refusal}`);
      log.emit("tool.failed", {
        tool,
        arguments: summarize(args),
        duration_ms: 0,
        error: denial.message,
        error_code: denial.code,
      });
      throw denial;
    }
    log.emit("tool.started", {
      tool,
      arguments: summarize(args),
      ...(intention ? { intention } : {}),
    });
    const t0 = performance.now();
    const took = () => Math.round(performance.now() - t0);
    let outcome: SkillToolOutcome;
    try {
      if (isResource) {
        if (record.run?.format !== "instructions") throw new Error("no files");
        const text = await readSkillFile(
          { name, folder: record.run.folder, resources },
          String(args.path ?? ""),
        );
        outcome = { ok: true, value: text };
      } else {
        outcome = await options.tools.call(tool, args, {
          session: options.session,
          signal: callSignal ? AbortSignal.any([signal, callSignal]) : signal,
          timeoutMs: Math.max(1, Math.round(deadline - performance.now())),
          // A long tool's progress is the skill's progress: relay it live.
          onEvent: (kind, data) => {
            if (RELAYED_TOOL_EVENTS.has(kind)) {
              log.emit(kind, { ...data, tool });
            }
          },
        });
      }
    } catch (error) {
      const wire = toWireError(error);
      outcome = { ok: false, code: wire.code, message: wire.message };
    }
    if (outcome.ok) {
      log.emit("tool.completed", {
        tool,
        duration_ms: took(),
        result: summarize(
          isOutput(outcome.value) ? outcome.value.data : outcome.value,
        ),
      });
      return outcome.value;
    }
    log.emit("tool.failed", {
      tool,
      duration_ms: took(),
      error: outcome.message,
      error_code: outcome.code,
    });
    throw new SkillboxError(outcome.code, outcome.message);
  };

  try {
    let value: unknown;
    let truncated = false;
    if (record.run.format === "code") {
      if (!options.sandbox) {
        throw new SkillboxError(
          "runtime_error",
          `Cannot run code skill "${name}": the host has no sandbox`,
        );
      }
      const outcome: SandboxOutcome = await raceAbort(
        options.sandbox.call({
          path: record.run.path,
          export: record.run.export,
          version: record.run.version,
          args: options.arguments,
          grant: record.run.grant,
          timeoutMs: Math.max(1, Math.round(deadline - performance.now())),
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
            callTool(tool, args, null, s).then((v) =>
              isOutput(v) ? v.data ?? null : v
            ),
          chat: (request, s) => chat(request, s),
        }),
        signal,
      );
      if (turnsExceeded) throw turnsExceeded;
      if (!outcome.ok) {
        throw new SkillboxError(outcome.code, outcome.message, {
          retryable: outcome.retryable,
        });
      }
      value = outcome.value;
      truncated = outcome.truncated;
    } else {
      const tools = offeredTools(allowed, options.tools);
      if (resources.length > 0) tools.push(readSkillFileTool(resources));
      const result = await raceAbort(
        runAgentLoop(options.arguments, {
          name,
          instructions: definition.instructions ?? "",
          whenToUse: definition.when_to_use,
          argumentHint: definition.argument_hint,
          tools,
          outputSchema: definition.output_schema,
          signal,
          maxToolResultChars: limits.maxToolResultChars,
          chat: (request) => chat(request),
          callTool: async (tool, args, intention) => {
            try {
              return {
                ok: true,
                value: await callTool(tool, args, intention),
              };
            } catch (error) {
              signal.throwIfAborted();
              return { ok: false, message: toWireError(error).message };
            }
          },
        }),
        signal,
      );
      value = result.brokeLoop
        ? output({ data: result.data, summary: result.summary })
        : result.data;
    }
    const data = isOutput(value) ? value.data ?? null : value ?? null;
    const summary = isOutput(value) ? value.summary ?? null : null;
    const problem = checkSchema(definition.output_schema, data);
    if (problem !== null) {
      throw new SchemaViolationError(
        `Output of skill "${name}" does not match output_schema: ${problem}`,
        { detail: { where: "output" } },
      );
    }
    log.emit("skill.completed", { duration_ms: elapsed(), turns: turn });
    return skillResult({
      success: true,
      data,
      summary,
      duration_ms: elapsed(),
      events: log.events,
      truncated: truncated || log.truncated,
    });
  } catch (error) {
    // A timeout or cancellation is the real cause of whatever the skill
    // threw afterwards; max_turns likewise wins over the skill's reaction.
    return fail(
      signal.aborted ? signal.reason : turnsExceeded ?? error,
    );
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onCancel);
    controller.abort(); // stops anything still running for this call
  }
}

function allowedTools(
  definition: SkillDefinition,
  tools: SkillToolHost,
): Set<string> {
  const allowed = new Set(definition.tools ?? []);
  for (const kit of definition.toolkits ?? []) {
    for (const t of tools.toolkit(kit)?.tools ?? []) allowed.add(t);
  }
  return allowed;
}

function offeredTools(allowed: Set<string>, host: SkillToolHost): AgentTool[] {
  const out: AgentTool[] = [];
  for (const name of [...allowed].sort()) {
    const info = host.tool(name);
    if (!info) continue;
    out.push({
      name: info.name,
      description: info.description,
      input_schema: info.input_schema,
      prompt: info.prompt,
    });
  }
  return out;
}

function readSkillFileTool(resources: readonly string[]): AgentTool {
  return {
    name: READ_SKILL_FILE_TOOL,
    description:
      "Reads one of the files linked from this skill's instructions. Only these paths are readable: " +
      resources.map((r) => `"${r}"`).join(", "),
    input_schema: {
      type: "object",
      properties: {
        path: { type: "string", enum: [...resources] },
      },
      required: ["path"],
    },
    prompt: "Read a linked file only when the instructions point you to it.",
  };
}

/** Rejects as soon as `signal` aborts, even if `promise` never settles. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() =>
      signal.removeEventListener("abort", onAbort)
    );
  });
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

/**
 * A short JSON summary of arguments or results for events: long strings
 * cut, the whole capped.
 *
 * @param value any JSON-like value
 * @param maxChars the longest summary. @default 500
 * @returns the summary text
 * @example
 * ```ts
 * import { summarize } from "./run.ts";
 * import assert from "node:assert/strict";
 * assert.equal(summarize({ path: "a.csv" }), '{"path":"a.csv"}');
 * assert.ok(summarize({ text: "x".repeat(5000) }).length < 300);
 * ```
 */
export function summarize(value: unknown, maxChars = 500): string {
  let text: string;
  try {
    text = JSON.stringify(
      value,
      (_k, v) =>
        typeof v === "string" && v.length > 200
          ? `${v.slice(0, 200)}… (${v.length} chars)`
          : v,
    ) ?? "null";
  } catch {
    text = String(value);
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
