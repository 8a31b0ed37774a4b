/**
 * One skill call, from `skill.started` to `skill.completed`/`skill.failed`:
 * argument validation, the effective timeout, the run itself, and output
 * validation. Every failure becomes a `skill.failed` event and a
 * `success: false` result with an A2E code.
 *
 * Code skills run in a sandbox through `Sandbox.call`. Instruction skills
 * (`SKILL.md`, or a code module with `instructions` and no `run`) run in
 * the host's agent loop: the model gets the instructions as its system
 * prompt and the arguments as the user message, calls the skill's declared
 * tools, and answers. The loop only sequences the conversation: both kinds
 * reach tools and the LLM through the same two relays (`relays.ts`), which
 * count turns, emit the `tool.*` and `llm.*` events and hold the skill to
 * its declared tools, so a code skill's `ctx.llm` / `ctx.tools` and the
 * loop share one implementation.
 *
 * @module
 */

import { isOutput } from "../../protocol/output.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
} from "../../protocol/chat.ts";
import type { JsonObject, JsonSchema } from "../../protocol/json.ts";
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
import { validateValue } from "../schema/validator.ts";
import {
  stripIntention,
  toAnthropicTools,
  type ToolOffer,
} from "../llm/tool_formats.ts";
import { type Deadline, raceAbort, startDeadline } from "../deadline.ts";
import type { RunObserver } from "../store/recorder.ts";
import type { InstructionSkillRun, SkillRecord } from "./catalog.ts";
import {
  cut,
  READ_SKILL_FILE_TOOL,
  SkillFileRefusedError,
} from "./skill_md.ts";
import { COMMAND_TOOL, type CommandRule } from "./tool_names.ts";
import {
  ChatRelay,
  createToolRelay,
  effectiveMaxTurns,
  type LlmResolver,
  SkillEventLog,
  type SkillLimits,
  type SkillToolCall,
  type SkillToolHost,
  summarize,
} from "./relays.ts";
import { scriptLimits, skillScriptTools } from "./scripts/tool.ts";

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
 * import { codeSkillRecord } from "./catalog.ts";
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
    maxEvents: options.limits?.maxEvents,
    onEvent: observer && ((event) => observer.event(runId, event)),
  });
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // Every path from here ends in done(): a run left open would show as
  // running until the host stops.
  let run: SkillRun | undefined;
  try {
    log.emit("skill.started", {
      name,
      version: definition.version,
      arguments: summarize(options.arguments),
    });
    const refusal = refuseToStart(record, definition, options.arguments);
    if (refusal !== null) throw refusal;
    run = startRun(record, definition, options, log, runId);
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
    log.emit("skill.completed", {
      duration_ms: elapsed(),
      turns: run.llm.turns,
    });
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
      run?.signal.aborted ? run.signal.reason : run?.llm.exceeded ?? error,
      elapsed(),
    ));
  } finally {
    run?.deadline.dispose(); // stops anything still running for this call
  }
}

// The deadline (the smallest of the request's timeout, the skill's and the
// policy cap, following cancellation) and the two relays.
function startRun(
  record: SkillRecord,
  definition: Skill,
  options: RunSkillOptions,
  log: SkillEventLog,
  runId: string,
): SkillRun {
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
  const llm = new ChatRelay({
    skill: name,
    maxTurns: effectiveMaxTurns(definition.maxTurns, limits),
    log,
    signal,
    provider: () =>
      options.llm({ override: options.llmOverride, skill: record.llmConfig }),
  });
  const allowed = allowedTools(definition, options.tools);
  const files = record.run?.format === "instructions" ? record.run : null;
  const callTool = createToolRelay({
    skill: name,
    allowed,
    files,
    scripts: scriptLimits(limits, files),
    tools: options.tools,
    session: options.session,
    log,
    signal,
    remainingMs: deadline.remainingMs,
    parentRunId: runId || undefined,
    history: options.observer?.files,
  });
  return {
    record,
    definition,
    options,
    log,
    deadline,
    signal,
    allowed,
    files,
    llm,
    callTool,
  };
}

/** One running skill call, as its two kinds of run see it. */
interface SkillRun {
  record: SkillRecord;
  definition: Skill;
  options: RunSkillOptions;
  log: SkillEventLog;
  signal: AbortSignal;
  /** Disposed when the call ends; its `remainingMs` is the time left. */
  deadline: Deadline;
  allowed: Set<string>;
  /** The instruction skill's files; null for a code skill. */
  files: InstructionSkillRun | null;
  /** The chat relay, which counts the turns. */
  llm: ChatRelay;
  callTool: SkillToolCall;
}

/** What a run gave before output validation. */
interface RunValue {
  value: unknown;
  truncated: boolean;
}

// Why a skill cannot start: not runnable, or arguments that do not match.
function refuseToStart(
  record: SkillRecord,
  definition: Skill,
  args: Record<string, unknown>,
): SkillboxError | null {
  if (definition.status !== "Published" || record.run === null) {
    return notRunnableError(definition);
  }
  let problem: string | null;
  try {
    problem = checkSchema(definition.inputSchema, args);
  } catch (error) {
    // The skill's own schema is broken (a $ref that resolves nowhere).
    const why = error instanceof Error ? error.message : String(error);
    return new SkillboxError(
      "skill_error",
      `Cannot run skill "${definition.name}": its input_schema cannot be used: ${
        why.split("\n")[0]
      }`,
    );
  }
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
      timeoutMs: run.deadline.remainingMs(),
      sessionId: options.session.id,
      callId: options.reqId,
      config: {},
      metadata: options.metadata,
      isolation: record.run.isolation,
    }, {
      signal,
      // Only the generic kinds: a skill cannot forge lifecycle events.
      onEvent: (kind, data) => log.relay(kind, data),
      // A code skill gets the tool's data, as the tool returned it.
      callTool: (tool, args, s) =>
        run.callTool(tool, args, null, s).then((v) =>
          isOutput(v) ? v.data ?? null : v
        ),
      chat: run.llm.chat,
    }),
    signal,
  );
  if (run.llm.exceeded) throw run.llm.exceeded;
  if (!outcome.ok) {
    throw new SkillboxError(outcome.code, outcome.message, {
      retryable: outcome.retryable,
    });
  }
  return { value: outcome.value, truncated: outcome.truncated };
}

async function runInstructionSkill(run: SkillRun): Promise<RunValue> {
  const { definition, options, signal, files } = run;
  const resources = files?.resources ?? [];
  const fetched = files?.fetched;
  const tools = offeredTools(run.allowed, options.tools, files?.commandRules);
  if (resources.length > 0) {
    const tool = readSkillFileTool(resources);
    tools.push(
      fetched
        ? { ...tool, description: `${tool.description}. ${fetched.note}` }
        : tool,
    );
  }
  // Fetched skills' scripts are not run: no tool offers them.
  if (!fetched) tools.push(...await skillScriptTools(files));
  const value = await raceAbort(
    runAgentLoop(options.arguments, {
      name: definition.name,
      instructions: definition.instructions ?? "",
      whenToUse: definition.whenToUse,
      argumentHint: definition.argumentHint,
      tools,
      outputSchema: definition.outputSchema,
      signal,
      chat: run.llm.chat,
      callTool: run.callTool,
    }),
    signal,
  );
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

/**
 * Ends a skill call with a failure: emits `skill.failed` and builds the
 * result with every event so far. A tool's `tool_error` reads as
 * `skill_error` at the skill level.
 *
 * @param log the call's event log
 * @param error what went wrong
 * @param durationMs how long the call ran
 * @returns the failed outcome
 * @example
 * ```ts
 * import { failSkill } from "./run.ts";
 * import { SkillEventLog } from "./relays.ts";
 * import assert from "node:assert/strict";
 * const result = failSkill(new SkillEventLog("r1"), new Error("boom"), 3);
 * assert.equal(result.success, false);
 * assert.equal(result.events.at(-1)?.kind, "skill.failed");
 * ```
 */
export function failSkill(
  log: SkillEventLog,
  error: unknown,
  durationMs: number,
): SkillOutcome {
  const wire = toWireError(error);
  const code = wire.code === "tool_error" ? "skill_error" : wire.code;
  log.emit("skill.failed", {
    error: wire.message,
    error_code: code,
    duration_ms: durationMs,
  });
  return skillOutcome({
    success: false,
    error: wire.message,
    errorCode: code,
    durationMs,
    events: log.events,
    truncated: log.truncated,
  });
}

/**
 * The error for a skill that is not `Published` or has nothing to run,
 * with the reason it is blocked when there is one.
 *
 * @param definition the skill's definition
 * @returns a `skill_error`
 * @example
 * ```ts
 * import { notRunnableError } from "./run.ts";
 * import assert from "node:assert/strict";
 * const error = notRunnableError({ name: "s", status: "Archived" } as never);
 * assert.equal(error.message, 'Cannot run skill "s" (Archived): it cannot run');
 * ```
 */
export function notRunnableError(definition: Skill): SkillboxError {
  const why = definition.metadata?.blocked_reason ?? "it cannot run";
  return new SkillboxError(
    "skill_error",
    `Cannot run skill "${definition.name}" (${definition.status}): ${why}`,
  );
}

/**
 * The tools a skill may call: its `tools` and every tool of its `toolkits`.
 *
 * @param definition the skill
 * @param tools the host's tools
 * @returns the allowed tool names
 * @example
 * ```ts
 * import { allowedTools } from "./run.ts";
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
 * import { offeredTools } from "./run.ts";
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
    const description = name === COMMAND_TOOL && commandRules
      ? `${info.description}\n\n${describeCommandRules(commandRules)}`
      : info.description;
    // The host's entry is already a tool with its guidance.
    out.push({ ...info, description });
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
 * import { readSkillFileTool } from "./run.ts";
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
 * import { describeCommandRules } from "./run.ts";
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

/** A tool the loop may offer to the model: the domain tool plus its guidance. */
export interface AgentTool extends ToolOffer {
  /** Markdown guidance for models (the tool's `prompt`). @default "" */
  readonly prompt?: string;
}

/** Options for {@link runAgentLoop}. */
export interface AgentLoopOptions {
  /** The skill's name, for messages. */
  name: string;
  /** The skill's instructions (the `SKILL.md` body). */
  instructions: string;
  /** @default "" */
  whenToUse?: string;
  /** @default "" */
  argumentHint?: string;
  /** The tools offered to the model. @default [] */
  tools?: readonly AgentTool[];
  /** The final answer must be JSON matching this, unless empty. @default {} */
  outputSchema?: JsonSchema;
  /** One model turn; throws `max_turns_exceeded` past the limit. */
  chat(request: ChatRequest): Promise<ChatResponse>;
  /**
   * Runs one tool with the model's arguments (intention removed): its
   * value, or a throw the model reads as the tool's error.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    intention: string | null,
  ): Promise<unknown>;
  /** Stops the loop between steps. */
  signal?: AbortSignal;
}

/**
 * Builds the system prompt: instructions, when to use, argument hint, the
 * tools' guidance and the answer format.
 *
 * @param options the skill's texts, tools and output schema
 * @returns the system prompt
 * @example
 * ```ts
 * import { buildSystemPrompt } from "./run.ts";
 * import assert from "node:assert/strict";
 * const prompt = buildSystemPrompt({
 *   name: "todo", instructions: "Find TODOs.", argumentHint: "a folder path",
 *   tools: [{ name: "grep", description: "Search", inputSchema: {}, prompt: "Use regex." }],
 *   outputSchema: { type: "object" },
 * });
 * assert.match(prompt, /Find TODOs\./);
 * assert.match(prompt, /### grep\nUse regex\./);
 * assert.match(prompt, /only a JSON value/);
 * ```
 */
export function buildSystemPrompt(
  options: Pick<
    AgentLoopOptions,
    | "name"
    | "instructions"
    | "whenToUse"
    | "argumentHint"
    | "tools"
    | "outputSchema"
  >,
): string {
  const parts = [
    `You are running the skill "${options.name}". Follow its instructions.`,
    options.instructions.trim(),
  ];
  if (options.whenToUse?.trim()) {
    parts.push(`## When this skill applies\n${options.whenToUse.trim()}`);
  }
  parts.push(
    "## Arguments\nThe user message holds the skill's arguments as JSON." +
      (options.argumentHint?.trim()
        ? ` Expected: ${options.argumentHint.trim()}`
        : ""),
  );
  const tools = options.tools ?? [];
  if (tools.length > 0) {
    const guidance = tools.filter((t) => t.prompt?.trim()).map((t) =>
      `### ${t.name}\n${t.prompt!.trim()}`
    );
    parts.push(
      "## Tools\nCall the tools you need. Give every call an `intention`: " +
        "one sentence saying why you make it." +
        (guidance.length > 0 ? `\n\n${guidance.join("\n\n")}` : ""),
    );
  }
  if (!isEmptySchema(options.outputSchema)) {
    parts.push(
      "## Answer\nWhen done, reply with only a JSON value (no prose) " +
        "matching this JSON Schema:\n```json\n" +
        JSON.stringify(options.outputSchema, null, 2) + "\n```",
    );
  }
  return parts.join("\n\n");
}

/**
 * Runs the loop: model turn, tool calls, results back, until the model
 * answers without calling a tool, a tool result says `break_loop`, or
 * `chat` refuses a turn.
 *
 * @param args the skill's arguments (the user message)
 * @param options the skill, its tools, and the host's `chat` / `callTool`
 * @returns the answer (parsed JSON when an output schema is set, else the
 *   text), or the `Output` of a tool result that ended the loop
 * @throws {SkillboxError} `max_turns_exceeded` from `chat`, provider
 *   failures, `schema_violation` when the answer does not match
 *   `outputSchema`, a {@link SkillFileRefusedError} from `callTool`, the
 *   abort reason when `signal` aborts
 * @example A one-tool run with a scripted model
 * ```ts
 * import { runAgentLoop } from "./run.ts";
 * import assert from "node:assert/strict";
 * let turn = 0;
 * const answer = await runAgentLoop({ n: 2 }, {
 *   name: "double", instructions: "Double n with the tool.",
 *   tools: [{ name: "mul", description: "Multiply", inputSchema: { type: "object" } }],
 *   chat: async (req) => {
 *     turn++;
 *     const done = req.messages.some((m) => m.role === "tool");
 *     return {
 *       text: done ? "4" : "", stop_reason: done ? "end_turn" : "tool_use", turn,
 *       tool_calls: done ? [] : [{ id: "c1", name: "mul", arguments: { a: 2, b: 2, intention: "Double it" } }],
 *       usage: { input_tokens: 1, output_tokens: 1 },
 *     };
 *   },
 *   callTool: async (_name, args, intention) => {
 *     assert.equal(intention, "Double it");
 *     return Number(args.a) * Number(args.b);
 *   },
 * });
 * assert.equal(answer, "4");
 * assert.equal(turn, 2);
 * ```
 */
// Long (about 80 lines): the loop reads as the conversation goes (ask the
// model, accept or repair its answer, call the tools it asked for); split,
// its state (the messages, the pending repair) would be passed around.
export async function runAgentLoop(
  args: Record<string, unknown>,
  options: AgentLoopOptions,
): Promise<unknown> {
  const tools = options.tools ?? [];
  const byName = new Map(tools.map((t) => [t.name, t]));
  // A ChatTool is Anthropic's tool shape. The converter adds `intention`
  // unless the tool has its own: the schema offered is the one
  // stripIntention expects.
  const offered: ChatTool[] = toAnthropicTools(tools, { intention: true });
  const system = buildSystemPrompt(options);
  const messages: ChatMessage[] = [{
    role: "user",
    content: Object.keys(args).length === 0
      ? "(no arguments)"
      : JSON.stringify(args, null, 2),
  }];
  // Set while the model gets its one chance to fix a malformed answer.
  let violation: SchemaViolationError | null = null;

  while (true) {
    options.signal?.throwIfAborted();
    let response: ChatResponse;
    try {
      response = await options.chat({
        system,
        messages: [...messages],
        tools: offered.length > 0 ? offered : undefined,
      });
    } catch (error) {
      // Out of turns while repairing: the bad answer is the real failure.
      if (
        violation && error instanceof SkillboxError &&
        error.code === "max_turns_exceeded"
      ) throw violation;
      throw error;
    }
    options.signal?.throwIfAborted();
    if (response.tool_calls.length === 0) {
      try {
        return parseFinalAnswer(response.text, options.outputSchema ?? {});
      } catch (error) {
        // One chance to fix the format, if a turn is left.
        if (violation || !(error instanceof SchemaViolationError)) throw error;
        violation = error;
        messages.push({ role: "assistant", content: response.text });
        messages.push({
          role: "user",
          content:
            `Your answer was rejected: ${error.message}. Reply again with only the corrected JSON.`,
        });
        continue;
      }
    }
    messages.push({
      role: "assistant",
      content: response.text,
      tool_calls: response.tool_calls,
    });
    for (const call of response.tool_calls) {
      options.signal?.throwIfAborted();
      const tool = byName.get(call.name);
      const { arguments: toolArgs, intention } = stripIntention(
        call.arguments,
        tool,
      );
      let content = `Error: Tool "${call.name}" is not available to this skill`;
      if (tool) {
        try {
          const value = await options.callTool(call.name, toolArgs, intention);
          if (isOutput(value) && value.break_loop) return value;
          content = clip(toText(value), MAX_TOOL_RESULT_CHARS);
        } catch (error) {
          options.signal?.throwIfAborted();
          // A file that is not what was listed: the run fails, unseen.
          if (error instanceof SkillFileRefusedError) throw error;
          content = `Error: ${toWireError(error).message}`;
        }
      }
      messages.push({ role: "tool", tool_call_id: call.id, content });
    }
  }
}

function toText(value: unknown): string {
  if (isOutput(value)) value = value.data;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}

// The longest tool result fed back to the model, in characters.
const MAX_TOOL_RESULT_CHARS = 32_000;

function clip(text: string, limit: number): string {
  // cut(): a character outside the BMP is kept whole or left out.
  const kept = cut(text, limit);
  return kept === text
    ? text
    : `${kept}\n[cut: ${text.length - kept.length} more characters]`;
}

/**
 * Reads a model's final answer: the text itself when there is no output
 * schema, else the JSON in it (a ```json fence or surrounding prose is
 * tolerated), validated against the schema.
 *
 * @param text the model's answer
 * @param schema the skill's output schema (`{}` for none)
 * @returns the text, or the parsed and valid JSON value
 * @throws {SchemaViolationError} when no JSON can be read or it does not match
 * @example
 * ```ts
 * import { parseFinalAnswer } from "./run.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", required: ["count"], properties: { count: { type: "integer" } } };
 * assert.deepEqual(parseFinalAnswer('Done:\n```json\n{"count": 3}\n```', schema), { count: 3 });
 * assert.throws(() => parseFinalAnswer('{"count": "x"}', schema), /field "\/count"/);
 * assert.equal(parseFinalAnswer("plain", {}), "plain");
 * ```
 */
export function parseFinalAnswer(text: string, schema: JsonSchema): unknown {
  if (isEmptySchema(schema)) return text;
  const value = extractJson(text);
  if (value === undefined) {
    throw new SchemaViolationError(
      `The final answer is not JSON matching output_schema: "${
        cut(text, 120, "…")
      }"`,
    );
  }
  const problem = checkSchema(schema, value);
  if (problem !== null) {
    throw new SchemaViolationError(
      `The final answer does not match output_schema: ${problem}`,
    );
  }
  return value;
}

function extractJson(text: string): unknown {
  const candidates: string[] = [];
  // Only spaces before the newline: `\s*\n` could reach the newline many
  // ways, and an unclosed fence of newlines took quadratic time.
  const fence = /```(?:json|JSON)?[^\S\n]*\n([\s\S]*?)```/.exec(text);
  if (fence?.[1]) candidates.push(fence[1]);
  candidates.push(text.trim());
  for (const [open, close] of [["{", "}"], ["[", "]"]] as const) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  }
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next reading
    }
  }
  return undefined;
}

/**
 * Tells whether a schema constrains anything. `{}` (the wire default for a
 * skill without a schema) accepts every value, so callers skip it.
 *
 * @param schema a JSON Schema, or null
 * @returns true when the schema has at least one keyword
 * @example
 * ```ts
 * import { isEmptySchema } from "./run.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isEmptySchema({}));
 * assert.ok(!isEmptySchema({ type: "object" }));
 * ```
 */
export function isEmptySchema(schema: JsonSchema | null | undefined): boolean {
  return schema === null || schema === undefined ||
    Object.keys(schema).length === 0;
}

/**
 * Validates a value against a JSON Schema and says what is wrong, in the
 * words tool arguments' failures use (the host's one validator,
 * `runtime/schema/validator.ts`, which never quotes the value): skill
 * arguments, outputs and final answers.
 *
 * @param schema the JSON Schema (draft 2020-12 keywords)
 * @param value the value to check
 * @returns null when valid, else a message like `"rows" must be of type number, got string`
 * @example Name the missing field
 * ```ts
 * import { checkSchema } from "./run.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", required: ["path"], properties: { path: { type: "string" } } };
 * assert.equal(checkSchema(schema, { path: "a.csv" }), null);
 * assert.equal(checkSchema(schema, {}), '"path" is required');
 * ```
 */
export function checkSchema(schema: JsonSchema, value: unknown): string | null {
  if (isEmptySchema(schema)) return null;
  const result = validateValue(schema, value);
  return result.valid ? null : result.message;
}
