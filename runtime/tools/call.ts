/**
 * One tool call, start to end, in the order it happens: the caller
 * ({@link createToolCaller}) and its entry point, `callTool`; the checks
 * before the code runs (the tool is served and the policy lets the session
 * use it, its arguments fit its input schema, its toolkit is configured, its
 * grant could be computed and the policy allows it); the hooks the sandbox
 * reports through while it runs ({@link ToolCallHooks}); and the outcome, a
 * {@link ToolCallOutcome}. Used by the tools capability for `tool/call/req`
 * and by skills for `ctx.tools.call`.
 *
 * The toolkit's secrets reach the tool in `ctx.config` only: they are
 * scrubbed from its events, result and error messages. The checks are plain
 * functions allocating only on refusal, so a call allocates no closure and
 * awaits only the grant (when it is not cached yet) and the sandbox.
 *
 * Where a call runs is decided by its registry entry: a shipped tool the
 * host takes part in ({@link HostedTool}: code mode's `run_code` and
 * `code_api`) goes to its hosted runner, an imported MCP server's tool to
 * the imported servers (a hosted runner too), every other call to the
 * sandbox. A drop-in's call looks no further than its entry's origin.
 *
 * @module
 */

import { GrantCache, type GrantCheck } from "../sandbox/grants.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
} from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import { newId } from "../../protocol/envelope.ts";
import { PermissionDeniedError, SkillboxError } from "../../protocol/errors.ts";
import { isPlainObject } from "../../protocol/json.ts";
import { isOutput } from "../../protocol/output.ts";
import type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";
import {
  type CallEvent,
  type ToolOutcome,
  toolOutcome,
} from "../../protocol/tool.ts";
import type { Registry } from "../registry/registry.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import type {
  SessionToolkitConfig,
  ToolkitConfigs,
} from "../toolkits/configs.ts";
import { scrubSecrets, usableSecrets } from "../toolkits/secrets.ts";
import { validateValue, type ValidationResult } from "../schema/validator.ts";
import { checkToolPolicy, type HostPolicy, parseHostPolicy } from "./policy.ts";
import type { EgressBroker } from "../egress/broker.ts";
import { observeToolCaller, type RunObserver } from "../store/recorder.ts";
import type { InnerCall } from "../code/inner_calls.ts";

/** Options of {@link createToolCaller}. */
export interface ToolCallerOptions {
  /** Where tools come from; read once per call (the call keeps that entry). */
  registry: Pick<Registry, "snapshot">;
  /** Runs the code. */
  sandbox: Pick<Sandbox, "call" | "resolvePermissions">;
  /** Toolkit configurations of the host and its sessions. */
  configs: ToolkitConfigs;
  /** The host policy. @default parseHostPolicy({}) (every tool, no permissions) */
  policy?: HostPolicy;
  /** How many events a result keeps; later ones are dropped and the result is `truncated`. @default 1000 */
  maxEvents?: number;
  /** Performs `ctx.fetch` for tools. @default none (ctx.fetch refused) */
  egress?: EgressBroker;
  /** Receives every call as a run (history, metrics, console). @default none */
  observer?: RunObserver;
  /**
   * Shipped tools the host takes part in running, by name: a call of a
   * shipped (`builtin`) entry of that name goes to its runner in place of
   * the sandbox; a drop-in of the same name is a plain tool.
   * @default none: every call goes to the sandbox
   */
  hosted?: ReadonlyMap<string, HostedTool>;
  /**
   * Runs the calls of imported MCP servers' tools (entries of origin
   * `mcp`, which only the imported servers list) in place of the sandbox.
   * @default none: every call goes to the sandbox
   */
  imported?: HostedTool;
}

/** One call of a {@link HostedTool}, past every check of the call path. */
export interface HostedCall {
  /** What the sandbox runs (the entry's version, grant, timeout, args). */
  readonly call: SandboxCall;
  /** The call's hooks: its events, signal and `ctx.tools`. */
  readonly hooks: ToolCallHooks;
  /** The request: the session calling, and the call's run. */
  readonly request: SessionToolCall;
  /** The caller as returned (observed): inner calls go through it. */
  readonly caller: ToolCaller;
  /** The sandbox the caller runs every other tool in. */
  readonly sandbox: Pick<Sandbox, "call">;
}

/**
 * A tool the host takes part in running: it answers the call itself
 * (`code_api`), runs it in the sandbox with what only the host holds
 * (`run_code`'s inner calls), or sends it to an imported MCP server (the
 * imported servers run all their tools). The tool caller routes a call to it by
 * the call's registry entry; the call's checks have all passed by then,
 * and its run is recorded as any other.
 */
export interface HostedTool {
  /**
   * Runs one call. The tool's own failures are an outcome, as the
   * sandbox's are; a throw means the runner broke.
   *
   * @param hosted the call, its hooks and request, the caller and sandbox
   * @returns the outcome
   */
  run(hosted: HostedCall): Promise<SandboxOutcome>;
}

/**
 * One call of a tool by a session, as the host's callers make it (not the
 * wire's `ToolCallRequest`, `protocol/requests.ts`).
 */
export interface SessionToolCall {
  /** The tool's name. */
  name: string;
  /** The arguments, checked against the tool's input schema. */
  args: Record<string, unknown>;
  /** The session calling: its token (policy) and configurations. */
  session: SessionScope;
  /** Aborts the call; the sandbox stops the code. */
  signal?: AbortSignal;
  /** Seconds the call may run, capped by the policy. @default 30 */
  timeoutSeconds?: number;
  /** Receives each event as it happens, with its `seq`. */
  onEvent?: (event: CallEvent) => void;
  /** The call id `ctx.call` shows. @default a fresh id */
  callId?: string;
  /** What `ctx.metadata` holds. @default {} */
  metadata?: Record<string, unknown>;
  /** The observer's id of the run making this call (a skill's), if any. */
  parentRunId?: string;
  /** The observer's id of this call's own run (set by the observer). */
  runId?: string;
}

/** What a call produced. */
export interface ToolCallOutcome {
  /** The outcome (the codec encodes it as the wire's `ToolResult`). */
  result: ToolOutcome;
  /** The tool returned an `Output` with `break_loop: true` (agent loops stop). */
  breakLoop: boolean;
  /** The entry that ran: the version the call started with. */
  entry: ToolEntry;
}

/** Calls tools. */
export interface ToolCaller {
  /**
   * Runs one call. Failures of the tool itself (bad arguments, a throw, a
   * timeout) come back as a result with `success: false`.
   *
   * @throws {SkillboxError} `unknown_tool` when no such tool is served
   * @throws {PermissionDeniedError} `tool_denied` when the policy refuses
   *   the tool or a permission it needs
   */
  call(request: SessionToolCall): Promise<ToolCallOutcome>;
}

/**
 * Creates a tool caller.
 *
 * The timeout is `min(timeoutSeconds, policy max)`. The grant is the union of
 * the tool's and its toolkit's permissions, each static or `"dynamic"`
 * (computed in the sandbox from the session's toolkit configuration), each
 * resolved against its own module's folder, then checked against
 * `policy.permissions`.
 *
 * @param options registry, sandbox, configurations, policy
 * @returns the caller
 * @example Call a tool through a stand-in sandbox
 * ```ts
 * import { createToolCaller } from "./call.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/add.ts", hash: "h", error: null,
 *   definitions: [{ export: "default", kind: "tool", name: "add", permissions: {}, runnable: true,
 *     fields: { description: "Add", input: { type: "object", properties: { a: { type: "number" } }, required: ["a"] } } }],
 * } }]);
 * const caller = createToolCaller({
 *   registry: { snapshot },
 *   configs: createToolkitConfigs(),
 *   sandbox: {
 *     call: (call) => Promise.resolve({ ok: true, value: { twice: (call.args as { a: number }).a * 2 }, truncated: false }),
 *     resolvePermissions: () => Promise.resolve({}),
 *   },
 * });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const ok = await caller.call({ name: "add", args: { a: 2 }, session });
 * assert.deepEqual(ok.result.data, { twice: 4 });
 * const bad = await caller.call({ name: "add", args: {}, session });
 * assert.equal(bad.result.errorCode, "schema_violation");
 * ```
 */
export function createToolCaller(options: ToolCallerOptions): ToolCaller {
  const policy = options.policy ?? parseHostPolicy({});
  const parts: CallerParts = {
    registry: options.registry,
    sandbox: options.sandbox,
    configs: options.configs,
    policy,
    maxEvents: options.maxEvents ?? 1000,
    grants: new GrantCache(options.sandbox, policy.permissions),
    egress: options.egress ?? null,
    hosted: options.hosted ?? NOT_HOSTED,
    imported: options.imported,
    outer: null,
  };
  const caller: ToolCaller = { call: (request) => callTool(parts, request) };
  const outer = options.observer
    ? observeToolCaller(caller, options.observer, options)
    : caller;
  // Hosted tools get the outer caller: run_code's inner calls are
  // observed, as a client's calls are.
  parts.outer = outer;
  return outer;
}

const NOT_HOSTED: ReadonlyMap<string, HostedTool> = new Map();

/** What every call of one caller reads: fixed when the caller is made. */
interface CallerParts {
  readonly registry: Pick<Registry, "snapshot">;
  readonly sandbox: Pick<Sandbox, "call">;
  readonly configs: ToolkitConfigs;
  readonly policy: HostPolicy;
  readonly maxEvents: number;
  readonly grants: GrantCache;
  readonly egress: EgressBroker | null;
  readonly hosted: ReadonlyMap<string, HostedTool>;
  readonly imported: HostedTool | undefined;
  /** The caller as returned (observed when there is an observer). */
  outer: ToolCaller | null;
}

// The call, step by step: each check returns early with a failed result or
// throws an A2E error (the dispatcher answers `error`).

async function callTool(
  parts: CallerParts,
  request: SessionToolCall,
): Promise<ToolCallOutcome> {
  const started = performance.now();
  const { session } = request;
  const snapshot = parts.registry.snapshot;
  const entry = admitTool(
    snapshot,
    parts.policy.tools,
    request.name,
    session.token,
  );
  const refused = argumentsRefusal(entry, request.args, started);
  if (refused !== null) return refused;

  const kit = entry.toolkit === null
    ? undefined
    : snapshot.toolkits.get(entry.toolkit);
  let resolved = OUTSIDE_A_TOOLKIT;
  if (kit) {
    resolved = parts.configs.resolve(session, kit);
    if (resolved.problem !== null) {
      return failure(
        entry,
        "tool_error",
        resolved.configured
          ? `Cannot run tool "${entry.name}": the configuration of toolkit "${kit.name}" is invalid: ${resolved.problem}`
          : `Cannot run tool "${entry.name}": toolkit "${kit.name}" is not configured (${resolved.problem}); send toolkit/configure/req first`,
        resolved.secrets,
        started,
      );
    }
  }
  const { config, secrets } = resolved;

  let grant: GrantCheck;
  try {
    const known = parts.grants.of(entry, kit, config);
    grant = known instanceof Promise ? await known : known;
  } catch (error) {
    // A toolkit's dynamic permissions threw, or their sandbox failed.
    return failure(
      entry,
      error instanceof SkillboxError ? error.code : "tool_error",
      `Cannot run tool "${entry.name}": its permissions could not be computed: ${
        (error as Error).message
      }`,
      secrets,
      started,
    );
  }
  if (!grant.ok) {
    throw new PermissionDeniedError(
      scrub(`Cannot run tool "${request.name}": ${grant.reason}`, secrets),
      { detail: { tool_name: request.name, permission: grant.permission } },
    );
  }

  const hooks = new ToolCallHooks(
    request,
    secrets,
    parts.maxEvents,
    parts.egress === null ? null : {
      broker: parts.egress,
      net: grant.grant.net ?? [],
      toolkit: entry.toolkit,
      session: request.session,
    },
  );
  const call = sandboxCall(entry, request, grant.grant, config, parts.policy);
  // Only a shipped or an imported entry can be hosted: a drop-in (or an
  // origin added later, until it is routed on purpose) runs in the sandbox.
  const hosted = entry.origin === "builtin"
    ? parts.hosted.get(entry.name)
    : entry.origin === "mcp"
    ? parts.imported
    : undefined;
  let outcome: SandboxOutcome;
  try {
    outcome = await (hosted === undefined
      ? parts.sandbox.call(call, hooks)
      : hosted.run({
        call,
        hooks,
        request,
        caller: parts.outer as ToolCaller,
        sandbox: parts.sandbox,
      }));
  } catch (error) {
    // The sandbox promises not to throw for the code's failures: a throw
    // means it broke, and the call may be retried.
    outcome = {
      ok: false,
      code: error instanceof SkillboxError ? error.code : "sandbox_crash",
      message: error instanceof Error ? error.message : String(error),
      retryable: true,
    };
  }
  return ranOutcome(entry, outcome, hooks, secrets, started);
}

// The checks before the code runs.

// The served tool a session may call by that name; else `unknown_tool`
// (saying why, when its name is blocked or its MCP server is down) or the
// policy's `tool_denied`.
function admitTool(
  snapshot: Pick<RegistrySnapshot, "tools" | "blocked" | "toolkits">,
  tools: HostPolicy["tools"],
  name: string,
  token: string,
): ToolEntry {
  const entry = snapshot.tools.get(name);
  if (!entry) {
    const why = snapshot.blocked.get(name) ?? serverDown(snapshot, name);
    throw new SkillboxError(
      "unknown_tool",
      why ? `Unknown tool "${name}": ${why}` : `Unknown tool "${name}"`,
      { detail: { tool_name: name } },
    );
  }
  const decision = checkToolPolicy(tools, entry, token);
  if (!decision.allowed) {
    throw new PermissionDeniedError(decision.reason, {
      detail: { tool_name: name },
    });
  }
  return entry;
}

// An imported server's tools are listed once it is up: a call naming one
// while its server is starting or down says so, from its toolkit's entry
// (`<server>__<tool>`, tagged "unavailable" with the reason).
function serverDown(
  snapshot: Pick<RegistrySnapshot, "toolkits">,
  name: string,
): string | undefined {
  const cut = name.indexOf("__");
  if (cut <= 0) return undefined;
  const kit = snapshot.toolkits.get(name.slice(0, cut));
  if (!kit?.tags.includes("mcp") || !kit.tags.includes("unavailable")) {
    return undefined;
  }
  const reason = /\(unavailable: (.*)\)/.exec(kit.description)?.[1];
  return `its MCP server "${kit.name}" is unavailable${
    reason ? ` (${reason})` : ""
  }; its tools are listed once it is up`;
}

// Null when the arguments fit the tool's input schema; else a failed result:
// `schema_violation`, or `tool_error` when the schema does not compile.
function argumentsRefusal(
  entry: ToolEntry,
  args: Record<string, unknown>,
  started: number,
): ToolCallOutcome | null {
  let check;
  try {
    check = validateArguments(entry.inputSchema, args);
  } catch (error) {
    return failure(
      entry,
      "tool_error",
      `Cannot run tool "${entry.name}": its input schema is invalid: ${
        (error as Error).message
      }`,
      NO_SECRETS,
      started,
    );
  }
  if (check.valid) return null;
  return failure(
    entry,
    "schema_violation",
    `Invalid arguments for tool "${entry.name}": ${check.message}`,
    NO_SECRETS,
    started,
  );
}

const VALID: ValidationResult = Object.freeze({ valid: true });

// Keywords that constrain nothing an open object schema would check.
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
]);

// Whether each input schema accepts every object (answered once per schema).
const openSchemas = new WeakMap<object, boolean>();

// The validator's answer, without running it when the schema accepts any
// object (`{"type": "object", "properties": {}}`, as a tool declared without
// input gets) and the arguments are one.
function validateArguments(
  schema: Record<string, unknown> | boolean,
  args: Record<string, unknown>,
): ValidationResult {
  if (
    typeof schema === "object" && isPlainObject(args) &&
    acceptsAnyObject(schema)
  ) return VALID;
  return validateValue(schema, args);
}

function acceptsAnyObject(schema: Record<string, unknown>): boolean {
  let open = openSchemas.get(schema);
  if (open === undefined) {
    open = schema.type === "object" &&
      Object.entries(schema).every(([key, value]) =>
        key === "type" ||
        ANNOTATIONS.has(key) && typeof value === "string" ||
        key === "properties" && isPlainObject(value) &&
          Object.keys(value).length === 0 ||
        key === "additionalProperties" && value === true
      );
    openSchemas.set(schema, open);
  }
  return open;
}

// No secrets to scrub (a call outside a toolkit, or before it resolved).
const NO_SECRETS: readonly string[] = Object.freeze([]);

// A tool outside a toolkit runs with no configuration and no secret.
const OUTSIDE_A_TOOLKIT: SessionToolkitConfig = Object.freeze({
  configured: false,
  config: Object.freeze({}),
  problem: null,
  secrets: NO_SECRETS,
});

// What the sandbox runs: the entry's version with the checked grant; the
// timeout is the request's, capped by the policy.
function sandboxCall(
  entry: ToolEntry,
  request: SessionToolCall,
  grant: SandboxCall["grant"],
  config: Record<string, unknown>,
  policy: HostPolicy,
): SandboxCall {
  return {
    path: entry.path,
    export: entry.export,
    version: entry.hash,
    args: request.args,
    grant,
    timeoutMs: Math.max(
      1,
      Math.min((request.timeoutSeconds ?? 30) * 1000, policy.maxTimeoutMs),
    ),
    sessionId: request.session.id,
    callId: request.callId ?? newId(),
    config,
    metadata: request.metadata ?? {},
    isolation: entry.isolation,
    principal: entry.runsClientCode ? "session" : "module",
  };
}

// The hooks the sandbox reports through while the code runs.

/**
 * The most bytes of events one call's result keeps (as JSON text, counted in
 * UTF-16 units): the count bound alone let 1,000 events of 1 MiB each sit in
 * the host for one call. Later events are still relayed live.
 */
export const RESULT_EVENT_BYTES: number = 8 * 1024 * 1024;

/**
 * The size of an event as kept for a result, in UTF-16 units of its JSON.
 *
 * @param event the event
 * @returns its JSON text's length
 * @example
 * ```ts
 * import { eventSize } from "./call.ts";
 * import assert from "node:assert/strict";
 * assert.equal(eventSize({ kind: "log", data: { message: "hi" }, seq: 0 }), 46);
 * ```
 */
export function eventSize(event: CallEvent): number {
  return JSON.stringify(event).length;
}

/** What {@link ToolCallHooks} needs from the request. */
export type HookedRequest = Pick<SessionToolCall, "signal" | "onEvent">;

/** Where a call's `ctx.fetch` may go, and who performs it. */
export interface CallEgress {
  /** The host's broker. */
  broker: EgressBroker;
  /** The call's grant `net` list (the policy bounds it, config narrows it). */
  net: readonly string[];
  /** The tool's toolkit, for secrets bound to toolkits. */
  toolkit: string | null;
  /** The calling session: the host's turns are shared by sessions and tokens. */
  session: SessionScope;
}

/**
 * The hooks of one tool call: its events scrubbed of the toolkit's secrets,
 * numbered, kept up to a bound and relayed as they happen; its `ctx.tools`
 * and `ctx.llm` refused (only skills may use them); its `ctx.fetch`
 * performed by the host's egress broker within the call's grant.
 *
 * @example Events are numbered and scrubbed
 * ```ts
 * import { ToolCallHooks } from "./call.ts";
 * import assert from "node:assert/strict";
 * const hooks = new ToolCallHooks({}, ["s3cret"], 10);
 * hooks.onEvent("log", { message: "key s3cret" });
 * assert.equal(hooks.events[0]?.seq, 0);
 * assert.ok(!JSON.stringify(hooks.events).includes("s3cret"));
 * ```
 */
export class ToolCallHooks implements SandboxHooks {
  /** The call's abort signal. */
  readonly signal: AbortSignal | undefined;
  /** Events kept for the result. */
  readonly events: CallEvent[] = [];
  /** Whether events beyond the bound were dropped from the result. */
  eventsCut = false;
  /**
   * The inner calls of the shipped `run_code` (code mode); null refuses
   * `ctx.tools` as for every other tool.
   */
  inner: InnerCall | null = null;
  readonly #request: HookedRequest;
  readonly #secrets: readonly string[];
  readonly #maxEvents: number;
  readonly #egress: CallEgress | null;
  #seq = 0;
  #keptBytes = 0;

  /**
   * @param request the call's signal and event listener
   * @param secrets values scrubbed from every event
   * @param maxEvents how many events the result keeps
   * @param egress the broker and the call's net grant; null refuses fetch
   */
  constructor(
    request: HookedRequest,
    secrets: readonly string[],
    maxEvents: number,
    egress: CallEgress | null = null,
  ) {
    this.signal = request.signal;
    this.#request = request;
    this.#secrets = secrets;
    this.#maxEvents = maxEvents;
    this.#egress = egress;
  }

  /** `ctx.fetch`: the broker performs it, to the grant's hosts only. */
  fetch(request: FetchRequest, signal: AbortSignal): Promise<FetchResponse> {
    const egress = this.#egress;
    if (!egress) {
      return Promise.reject(
        new SkillboxError("tool_denied", "ctx.fetch is not available here"),
      );
    }
    return egress.broker.fetch(request, {
      allow: [[...egress.net]],
      toolkit: egress.toolkit,
      hide: usableSecrets(this.#secrets), // as events skip too-short ones
      signal,
      owner: this, // the call's requests take turns, not the host's memory
      principal: { session: egress.session.id, token: egress.session.token },
    });
  }

  /** Records and relays one event. */
  onEvent(kind: string, data: Record<string, unknown>): void {
    const secrets = this.#secrets;
    const event: CallEvent = secrets.length === 0
      ? { kind, data, seq: this.#seq++ }
      : {
        kind: scrubSecrets(kind, secrets),
        data: scrubSecrets(data, secrets),
        seq: this.#seq++,
      };
    if (this.eventsCut || this.events.length >= this.#maxEvents) {
      this.eventsCut = true;
    } else {
      this.#keptBytes += eventSize(event);
      // Past the byte bound nothing more is kept, so the order stays whole.
      if (this.#keptBytes <= RESULT_EVENT_BYTES) this.events.push(event);
      else this.eventsCut = true;
    }
    this.#request.onEvent?.(event);
  }

  /** Refused: a tool may not call tools (but `run_code`, through `inner`). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (this.inner !== null) return this.inner(name, args, signal);
    return Promise.reject(
      new SkillboxError(
        "tool_denied",
        "Cannot call a tool from a tool: only skills may use ctx.tools",
      ),
    );
  }

  /** Refused: a tool may not use the LLM. */
  chat(): Promise<never> {
    return Promise.reject(
      new SkillboxError(
        "tool_denied",
        "Cannot use the LLM from a tool: only skills may use ctx.llm",
      ),
    );
  }
}

// The outcome: each builder runs once per call and allocates only the
// outcome it returns.

// Most toolkits hold no secret: the walk over the value is skipped then.
function scrub<T>(value: T, secrets: readonly string[]): T {
  return secrets.length === 0 ? value : scrubSecrets(value, secrets);
}

// Milliseconds since `started`, rounded, never negative.
function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}

// A call refused before its code ran: a failed result, never `breakLoop`.
function failure(
  entry: ToolEntry,
  code: string,
  error: string,
  secrets: readonly string[],
  started: number,
): ToolCallOutcome {
  return {
    result: toolOutcome({
      success: false,
      toolName: entry.name,
      error: scrub(error, secrets),
      errorCode: code,
      durationMs: elapsed(started),
    }),
    breakLoop: false,
    entry,
  };
}

// A call that ran: the sandbox's outcome and the events its hooks kept,
// scrubbed; `breakLoop` when the tool returned an `Output` asking for it.
function ranOutcome(
  entry: ToolEntry,
  outcome: SandboxOutcome,
  { events, eventsCut }: Pick<ToolCallHooks, "events" | "eventsCut">,
  secrets: readonly string[],
  started: number,
): ToolCallOutcome {
  if (!outcome.ok) {
    const result = toolOutcome({
      success: false,
      toolName: entry.name,
      error: outcome.message,
      errorCode: outcome.code,
      durationMs: elapsed(started),
      truncated: eventsCut,
      events,
    });
    return { result: scrub(result, secrets), breakLoop: false, entry };
  }
  // A marked `Output` carries its data beside a summary and an exit code.
  const value = outcome.value;
  const marked = isOutput(value) ? value : null;
  const result = toolOutcome({
    success: true,
    toolName: entry.name,
    data: (marked === null ? value : marked.data) ?? null,
    summary: marked?.summary ?? null,
    exitCode: typeof marked?.exit_code === "number" ? marked.exit_code : null,
    durationMs: elapsed(started),
    truncated: outcome.truncated || eventsCut,
    events,
  });
  return {
    result: scrub(result, secrets),
    breakLoop: marked?.break_loop === true,
    entry,
  };
}
