/**
 * The two relays of a skill call, the one path each for tools and the LLM
 * whether a code skill calls `ctx.tools.call` / `ctx.llm.chat` or the agent
 * loop does, and what they count and record:
 *
 * - the tool relay refuses tools the skill did not declare (and
 *   `run_command` outside its `Bash(...)` patterns), reads linked files for
 *   `read_skill_file`, runs `run_skill_script`, runs everything else
 *   through the {@link SkillToolHost} with the time left, relays the tool's
 *   own progress events, and emits `tool.started` and
 *   `tool.completed`/`tool.failed`;
 * - the chat relay ({@link ChatRelay}) counts each turn against the
 *   skill's `max_turns`, picks the provider through the {@link LlmResolver}
 *   on the first turn, and emits `llm.started`, `llm.token`… and
 *   `llm.completed`;
 * - the {@link SkillEventLog} numbers, sends and keeps the call's events.
 *
 * The host's limits on skills ({@link SkillLimits}) are declared here too.
 *
 * @module
 */

import type { OutgoingMessage, SessionScope } from "../capability.ts";
import { GENERIC_EVENT_KINDS } from "../../protocol/codes.ts";
import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import { envelope } from "../../protocol/envelope.ts";
import {
  PermissionDeniedError,
  SkillboxError,
  toWireError,
} from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { isOutput } from "../../protocol/output.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { LlmChoice } from "../../protocol/skill.ts";
import type { CallEvent, Tool } from "../../protocol/tool.ts";
import type { EgressBroker } from "../egress/broker.ts";
import type { ConfinementMode } from "../confine/confine.ts";
import type { LlmProvider } from "../llm/provider.ts";
import type { RunFiles } from "../store/recorder.ts";
import { eventSize, RESULT_EVENT_BYTES } from "../tools/call.ts";
import { CODE_TOOL } from "../code/inner_calls.ts";
import type { InstructionSkillRun } from "./catalog.ts";
import {
  cut,
  READ_SKILL_FILE_TOOL,
  readSkillFile,
  SkillFileRefusedError,
} from "./skill_md.ts";
import { COMMAND_TOOL, commandRefusal } from "./tool_names.ts";
import { RUN_SKILL_SCRIPT_TOOL, runSkillScriptTool } from "./scripts/tool.ts";
import { runSkillScript, type ScriptLimits } from "./scripts/run_script.ts";
import { listSkillScripts } from "./scripts/script_files.ts";
import { validateValue } from "../schema/validator.ts";
import type { CollectCaps } from "./scripts/workspace_files.ts";
import type { WorkspaceQuota } from "./scripts/workspace_mount.ts";
import { scriptFilesRoot } from "./scripts/files_root.ts";

/**
 * A tool as the skills capability sees it: a view of the domain `Tool` (the
 * registry's entries are ones) plus its guidance for models.
 */
export interface SkillToolInfo
  extends Pick<Tool, "name" | "description" | "inputSchema" | "toolkit"> {
  /** Markdown guidance for models, or "". */
  readonly prompt: string;
}

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
  /** The observer's id of the skill's run: the tool call is its child. */
  parentRunId?: string;
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
  /**
   * Runs a tool: resolves with its value, and rejects for every failure
   * (a `SkillboxError` with the tool's A2E code when it ran and failed).
   */
  call(
    name: string,
    args: Record<string, unknown>,
    options: SkillToolCallOptions,
  ): Promise<unknown>;
  /**
   * A session's configuration of a toolkit and the grant it gives, checked
   * against the host policy exactly as for a call of the toolkit's tools;
   * `override` replaces fields of the configuration for the check (a
   * symlinked root's real path). Null when the toolkit is not loaded or
   * the session has not configured it. Absent: no toolkit is reachable
   * outside its tools (skill scripts get no toolkit mounts).
   */
  toolkitGrant?(
    name: string,
    session: SessionScope,
    override?: Record<string, unknown>,
  ): Promise<ToolkitGrant | null>;
}

/** What {@link SkillToolHost.toolkitGrant} found. */
export type ToolkitGrant =
  | {
    ok: true;
    /** The configuration, as the toolkit's tools would get it. */
    config: Readonly<Record<string, unknown>>;
    /** The checked grant (absolute paths). */
    grant: Readonly<Permissions>;
  }
  | {
    ok: false;
    /** Why not: an invalid configuration or a permission the policy refused. */
    reason: string;
  };

/** Picks the LLM for a call: `override`, else `skill`, else the host default. */
export type LlmResolver = (
  configs: { override: LlmChoice | null; skill: LlmChoice | null },
) => LlmProvider;

/** The host's limits on skills. */
export interface SkillLimits {
  /** Policy cap on any skill's wall-clock time, in seconds. @default 600 */
  maxTimeoutSeconds?: number;
  /** `max_turns` of a skill that sets none. @default 10 */
  defaultMaxTurns?: number;
  /** Policy cap on `max_turns`. @default 50 */
  maxTurns?: number;
  /** Events kept in the outcome's `events`. @default 2000 */
  maxEvents?: number;
  /**
   * Interpreters of skill scripts by extension (`policy.interpreters`).
   * @default {".py": "python3", ".sh": "sh", ".js": "deno", ".ts": "deno"}
   */
  interpreters?: Readonly<Record<string, string>>;
  /**
   * Variables a skill's scripts may get when the skill declares them
   * (`policy.permissions.env`; `"*"`: any). @default []
   */
  scriptEnvGrant?: readonly string[];
  /**
   * Hosts a skill's scripts may reach when the skill declares them
   * (`policy.permissions.net`), only through `scriptEgress`. @default []
   */
  scriptNetGrant?: readonly string[];
  /** The host's egress broker; none: scripts get no network. @default none */
  scriptEgress?: EgressBroker;
  /** `sandbox.confinement`; scripts run only confined. @default "auto" */
  scriptConfinement?: ConfinementMode;
  /**
   * A skill script's workspace quota (`sandbox.script_workspace_mb`,
   * `sandbox.script_workspace_files`). @default 64 MiB, 10,000 files
   */
  scriptWorkspace?: WorkspaceQuota;
  /**
   * What the host reads back from a script's workspace
   * (`store.script_files_max_bytes`, `store.script_files_max`).
   * @default 4 MiB, 100 files
   */
  scriptFiles?: CollectCaps;
}

/**
 * Where a skill's files are (its folder, or fetched), and what its
 * `run_command` may run (`Bash(git:*)`; unset or null: not narrowed).
 */
type SkillFiles = Pick<
  InstructionSkillRun,
  "folder" | "resources" | "fetched" | "commandRules"
>;

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
 * import { createToolRelay, SkillEventLog } from "./relays.ts";
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
      : tool === COMMAND_TOOL && files?.commandRules
      ? commandRefusal(files.commandRules, args)
      : null;
    if (refusal !== null) {
      const denial = new PermissionDeniedError(
        `Skill "${options.skill}" ${refusal}`,
      );
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
    let value: unknown;
    try {
      value = readsFile
        ? await readFile(options.skill, files, args)
        : runsScript
        ? await runScript(options, files, args, callSignal, ++scriptCalls)
        : await runTool(options, tool, args, callSignal);
    } catch (error) {
      const wire = toWireError(error);
      log.emit("tool.failed", {
        tool,
        duration_ms: took(),
        error: wire.message,
        error_code: wire.code,
      });
      // A file that is not what was listed ends the run, not just the call.
      throw readsFile && error instanceof SkillFileRefusedError
        ? error
        : new SkillboxError(wire.code, wire.message);
    }
    log.emit("tool.completed", {
      tool,
      duration_ms: took(),
      result: summarize(isOutput(value) ? value.data : value),
    });
    return value;
  };
}

// A linked file's text: fetched, or read from the folder.
function readFile(
  skill: string,
  files: SkillFiles,
  args: Record<string, unknown>,
): Promise<string> {
  const path = String(args.path ?? "");
  return files.fetched
    ? files.fetched.read(path)
    : readSkillFile({ ...files, name: skill }, path);
}

// A `run_skill_script` call: held to the schema the model was offered (its
// `script` one of the skill's scripts, listed now: the host's validator
// names the item that is not), then run confined with the session's files
// mounted when the skill may reach them.
async function runScript(
  options: ToolRelayOptions,
  files: SkillFiles,
  args: Record<string, unknown>,
  callSignal: AbortSignal | undefined,
  call: number,
): Promise<unknown> {
  const { signal, log, history, parentRunId } = options;
  const scripts = await listSkillScripts(files.folder, files.resources);
  const checked = validateValue(runSkillScriptTool(scripts).inputSchema, args);
  if (!checked.valid) throw new Error(checked.message);
  const mount = await scriptFilesRoot(
    options.allowed,
    options.tools,
    options.session,
  );
  const result = await runSkillScript({
    folder: files.folder,
    script: args.script as string,
    args: (args.args ?? []) as string[],
    stdin: args.stdin as string | undefined,
    files: (args.files ?? {}) as Record<string, string>,
    filesRoot: mount && "bind" in mount ? mount.bind : undefined,
    timeoutMs: options.remainingMs(),
    // A skill's scripts always stop with the skill.
    signal: withCallSignal(signal, callSignal),
    onEvent: (kind, data) =>
      log.emit(kind, { ...data, tool: RUN_SKILL_SCRIPT_TOOL }),
    // Each call's files under its number: two calls may write one name.
    keep: history && parentRunId
      ? (files, unlisted) =>
        history.attach(
          parentRunId,
          files.map((f) => ({ ...f, name: `${call}/${f.name}` })),
          unlisted,
        )
      : undefined,
  }, options.scripts!);
  return mount && "refused" in mount
    ? { ...result, files_root_refused: mount.refused }
    : result;
}

// A host tool's value; its failure thrown with its code.
function runTool(
  options: ToolRelayOptions,
  tool: string,
  args: Record<string, unknown>,
  callSignal: AbortSignal | undefined,
): Promise<unknown> {
  const { signal, log } = options;
  return options.tools.call(tool, args, {
    session: options.session,
    signal: withCallSignal(signal, callSignal),
    timeoutMs: options.remainingMs(),
    parentRunId: options.parentRunId,
    // A long tool's progress is the skill's progress: relay it live.
    onEvent: (kind, data) => log.relay(kind, { ...data, tool }),
  });
}

// The skill call's signal, joined with one call's own when it has one.
function withCallSignal(
  signal: AbortSignal,
  callSignal: AbortSignal | undefined,
): AbortSignal {
  return callSignal ? AbortSignal.any([signal, callSignal]) : signal;
}

/** One LLM turn of a skill, optionally with its own abort signal. */
export type SkillChat = (
  request: ChatRequest,
  callSignal?: AbortSignal,
) => Promise<ChatResponse>;

/** What {@link ChatRelay} needs. */
export interface ChatRelayOptions {
  /** The skill's name, for the `max_turns` refusal. */
  skill: string;
  /** The turns allowed (see {@link effectiveMaxTurns}). */
  maxTurns: number;
  /** Where `llm.*` events go. */
  log: SkillEventLog;
  /** The skill call's signal (deadline and cancellation). */
  signal: AbortSignal;
  /** Picks the provider; called once, on the first turn. */
  provider: () => LlmProvider;
}

/**
 * The chat of one skill call, and its count of turns (`ctx.llm.chat` calls
 * or agent-loop turns) against the skill's `max_turns`. The first refused
 * turn is remembered: it is the real cause of whatever the skill does
 * after it.
 *
 * @example One turn against a fake provider, and the turn after the last
 * ```ts
 * import { ChatRelay, SkillEventLog } from "./relays.ts";
 * import assert from "node:assert/strict";
 * const log = new SkillEventLog("r1");
 * const relay = new ChatRelay({
 *   skill: "s",
 *   maxTurns: 1,
 *   log,
 *   signal: new AbortController().signal,
 *   provider: () => ({
 *     provider: "fake",
 *     model: "m",
 *     chat: (_request, options) => {
 *       options?.onToken?.("hi");
 *       return Promise.resolve({
 *         text: "hi", tool_calls: [], stop_reason: "end_turn",
 *         usage: { input_tokens: 1, output_tokens: 1 }, turn: options?.turn ?? 1,
 *       });
 *     },
 *   }),
 * });
 * assert.equal((await relay.chat({ messages: [] })).text, "hi");
 * assert.deepEqual(log.events.map((e) => e.kind), ["llm.started", "llm.token", "llm.completed"]);
 * await assert.rejects(relay.chat({ messages: [] }), /reached max_turns \(1\)/);
 * assert.equal(relay.turns, 1);
 * assert.equal(relay.exceeded?.code, "max_turns_exceeded");
 * ```
 */
export class ChatRelay {
  readonly #options: ChatRelayOptions;
  #provider: LlmProvider | null = null;
  #turns = 0;
  #exceeded: SkillboxError | null = null;

  /** @param options the skill, its turns, the event log, signal and provider */
  constructor(options: ChatRelayOptions) {
    this.#options = options;
  }

  /** Turns taken so far. */
  get turns(): number {
    return this.#turns;
  }

  /** The refusal of the first turn over `max_turns`, or null. */
  get exceeded(): SkillboxError | null {
    return this.#exceeded;
  }

  /**
   * Runs one turn (a function, to hand on as it is).
   *
   * @throws {SkillboxError} `max_turns_exceeded` when no turn is left
   */
  readonly chat: SkillChat = async (request, callSignal) => {
    const { log, signal, maxTurns } = this.#options;
    signal.throwIfAborted();
    if (this.#turns >= maxTurns) {
      this.#exceeded = new SkillboxError(
        "max_turns_exceeded",
        `Skill "${this.#options.skill}" reached max_turns (${maxTurns}): LLM call ${
          this.#turns + 1
        } refused`,
      );
      throw this.#exceeded;
    }
    const provider = this.#provider ??= this.#options.provider();
    const turn = ++this.#turns;
    log.emit("llm.started", {
      turn,
      provider: provider.provider,
      model: provider.model,
    });
    const response = await provider.chat(request, {
      signal: withCallSignal(signal, callSignal),
      turn,
      onToken: (text) => log.emit("llm.token", { text, turn }),
    });
    log.emit("llm.completed", {
      turn,
      usage: {
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
      },
      stop_reason: response.stop_reason,
    });
    return response;
  };
}

const GENERIC = new Set<string>(GENERIC_EVENT_KINDS);

/** Options for {@link SkillEventLog}. */
export interface SkillEventLogOptions {
  /** Sends a message live; omitted when the call does not stream. */
  send?: (message: OutgoingMessage) => void;
  /**
   * The most events kept for the result; later ones are still sent live.
   * The terminal `skill.completed`/`skill.failed` is always kept.
   * @default 2000
   */
  maxEvents?: number;
  /** Sees every event as it is emitted (the run observer). */
  onEvent?: (event: CallEvent) => void;
}

/**
 * Collects and relays the events of one skill call: numbers them with a
 * strictly increasing `seq` from 0, sends each one live as a `skill/event`
 * when the call streams, and keeps a bounded copy for `SkillResult.events`.
 *
 * @example Number and collect events
 * ```ts
 * import { SkillEventLog } from "./relays.ts";
 * import assert from "node:assert/strict";
 * const sent: unknown[] = [];
 * const log = new SkillEventLog("req1", { send: (m) => sent.push(m), maxEvents: 3 });
 * log.emit("skill.started", { name: "x" });
 * log.emit("status", { message: "a" });
 * log.emit("status", { message: "b" });
 * log.emit("skill.completed", {});
 * assert.deepEqual(log.events.map((e) => e.seq), [0, 1, 3]);
 * assert.equal(log.truncated, true);
 * assert.equal(sent.length, 4);
 * // A sender's lifecycle kind is not relayed.
 * new SkillEventLog("req2", { send: (m) => sent.push(m) }).relay("skill.failed", {});
 * assert.equal(sent.length, 4);
 * ```
 */
export class SkillEventLog {
  readonly #reqId: string;
  readonly #send?: (message: OutgoingMessage) => void;
  readonly #max: number;
  readonly #onEvent?: (event: CallEvent) => void;
  readonly #events: CallEvent[] = [];
  #seq = 0;
  #keptBytes = 0;
  #truncated = false;
  #closed = false;

  /**
   * @param reqId the request's `id`, echoed as `req_id`
   * @param options live sender and bound
   */
  constructor(reqId: string, options: SkillEventLogOptions = {}) {
    this.#reqId = reqId;
    this.#send = options.send;
    this.#max = Math.max(1, options.maxEvents ?? 2000);
    this.#onEvent = options.onEvent;
  }

  /**
   * Records one event and sends it live. Events after the terminal one are
   * dropped: a late token from an aborted stream must not follow
   * `skill.failed`.
   *
   * @param kind the event kind (`skill.started`, `llm.token`, `progress`, ...)
   * @param data the kind's data
   */
  emit(kind: string, data: JsonObject): void {
    if (this.#closed) return;
    const terminal = kind === "skill.completed" || kind === "skill.failed";
    if (terminal) this.#closed = true;
    const event: CallEvent = { kind, data, seq: this.#seq++ };
    // Keep one slot for the terminal event so a result always says how it
    // ended, and bound the rest in bytes as well as in number.
    if (terminal) {
      this.#events.push(event);
    } else if (!this.#truncated && this.#events.length < this.#max - 1) {
      this.#keptBytes += eventSize(event);
      if (this.#keptBytes <= RESULT_EVENT_BYTES) this.#events.push(event);
      else this.#truncated = true;
    } else {
      this.#truncated = true;
    }
    try {
      this.#onEvent?.(event);
    } catch {
      // An observer's failure must not fail the skill, nor its skill.failed.
    }
    try {
      this.#send?.(
        envelope("skill/event", { req_id: this.#reqId, ...event }),
      );
    } catch {
      // A session that went away must not fail the skill; its signal ends it.
    }
  }

  /**
   * Records an event the skill's code or one of its tools sent, when it is
   * of a generic kind (`progress`, `status`, `log`, `artifact`): the
   * lifecycle kinds are the host's to emit, and cannot be forged.
   *
   * @param kind the kind the sender named
   * @param data the kind's data
   */
  relay(kind: string, data: JsonObject): void {
    if (GENERIC.has(kind)) this.emit(kind, data);
  }

  /** The events kept so far, in order. */
  get events(): CallEvent[] {
    return this.#events;
  }

  /** True when some events were not kept. */
  get truncated(): boolean {
    return this.#truncated;
  }
}

/**
 * The `max_turns` in force: the skill's own (or the host default), capped by
 * the policy.
 *
 * @param skillMaxTurns the skill's `max_turns`, if it sets one
 * @param limits the host's limits
 * @returns the number of turns allowed
 * @example
 * ```ts
 * import { effectiveMaxTurns } from "./relays.ts";
 * import assert from "node:assert/strict";
 * assert.equal(effectiveMaxTurns(undefined, {}), 10);
 * assert.equal(effectiveMaxTurns(80, { maxTurns: 50 }), 50);
 * ```
 */
export function effectiveMaxTurns(
  skillMaxTurns: number | null | undefined,
  limits: Pick<SkillLimits, "defaultMaxTurns" | "maxTurns">,
): number {
  return Math.min(
    skillMaxTurns ?? limits.defaultMaxTurns ?? 10,
    limits.maxTurns ?? 50,
  );
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
 * import { summarize } from "./relays.ts";
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
        typeof v === "string" ? cut(v, 200, `… (${v.length} chars)`) : v,
    ) ?? "null";
  } catch {
    text = String(value);
  }
  // cut(): a character outside the BMP is kept whole or left out.
  return cut(text, maxChars, "…");
}
