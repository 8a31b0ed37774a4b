/**
 * Calling a tool: look it up, check the policy, validate the arguments,
 * resolve its toolkit configuration and permission grant, run it in the
 * sandbox, and turn the outcome into a {@link ToolOutcome}. Used by the tools
 * capability for `tool/call/req` and by skills for `ctx.tools.call`.
 *
 * @module
 */

import type { GrantCheck } from "../sandbox/grants.ts";
import { GrantCache } from "../sandbox/grants.ts";
import type { Sandbox, SandboxCall, SandboxOutcome } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import { newId } from "../../protocol/envelope.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { Registry } from "../registry/registry.ts";
import type { ToolEntry } from "../registry/types.ts";
import type { ResolvedConfig, ToolkitConfigs } from "../toolkits/configs.ts";
import { type HostPolicy, parseHostPolicy } from "./policy.ts";
import { ToolCallHooks } from "./call_hooks.ts";
import type { EgressBroker } from "../egress/broker.ts";
import {
  admitTool,
  argumentsRefusal,
  configRefusal,
  grantDenied,
  grantRefusal,
} from "./call_checks.ts";
import {
  NO_SECRETS,
  ranOutcome,
  sandboxBroke,
  type ToolCallOutcome,
} from "./call_outcome.ts";
import type { RunObserver } from "../store/observer.ts";
import { observeToolCaller } from "../store/observe_tools.ts";
import { type CodeCalls, isCodeTool } from "../code/inner_calls.ts";

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
   * Code mode's inner calls: the shipped `run_code` calls tools through
   * this caller (observed) with them. @default none: its calls are refused
   */
  code?: CodeCalls;
}

/** One call. */
export interface ToolCallRequest {
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

export type { ToolCallOutcome };

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
  call(request: ToolCallRequest): Promise<ToolCallOutcome>;
}

/**
 * Creates a tool caller.
 *
 * The timeout is `min(timeoutSeconds, policy max)`. The grant is the union of
 * the tool's and its toolkit's permissions, each static or `"dynamic"`
 * (computed in the sandbox from the session's toolkit configuration), each
 * resolved against its own module's folder, then checked against
 * `policy.permissions`. Secrets of the
 * toolkit's configuration reach the tool in `ctx.config` only: they are
 * scrubbed from its events, result and error message.
 *
 * @param options registry, sandbox, configurations, policy
 * @returns the caller
 * @example Call a tool through a stand-in sandbox
 * ```ts
 * import { createToolCaller } from "./call.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
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
    code: options.code ?? null,
    outer: null,
  };
  const caller: ToolCaller = { call: (request) => callTool(parts, request) };
  const outer = options.observer
    ? observeToolCaller(caller, options.observer, options)
    : caller;
  // run_code's inner calls go through the outer caller: observed, as a
  // client's calls are.
  parts.outer = outer;
  return outer;
}

/** What every call of one caller reads: fixed when the caller is made. */
interface CallerParts {
  readonly registry: Pick<Registry, "snapshot">;
  readonly sandbox: Pick<Sandbox, "call">;
  readonly configs: ToolkitConfigs;
  readonly policy: HostPolicy;
  readonly maxEvents: number;
  readonly grants: GrantCache;
  readonly egress: EgressBroker | null;
  readonly code: CodeCalls | null;
  /** The caller as returned (observed when there is an observer). */
  outer: ToolCaller | null;
}

// The call, step by step: each check returns early with a refusal (or
// throws an A2E error); the steps are plain functions taking what they
// need, so a call allocates no closure and awaits only the grant (when it
// is not cached yet) and the sandbox.
async function callTool(
  parts: CallerParts,
  request: ToolCallRequest,
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
      return configRefusal(entry, kit, resolved, started);
    }
  }
  const { config, secrets } = resolved;

  let grant: GrantCheck;
  try {
    const known = parts.grants.of(entry, kit, config);
    grant = known instanceof Promise ? await known : known;
  } catch (error) {
    return grantRefusal(entry, error, secrets, started);
  }
  if (!grant.ok) throw grantDenied(request.name, grant, secrets);

  const hooks = new ToolCallHooks(
    request,
    secrets,
    parts.maxEvents,
    parts.egress === null ? null : {
      broker: parts.egress,
      net: grant.grant.net ?? [],
      toolkit: entry.toolkit,
    },
  );
  const call = sandboxCall(entry, request, grant.grant, config, parts.policy);
  if (parts.code !== null && parts.outer !== null && isCodeTool(entry)) {
    hooks.inner = parts.code.open({
      caller: parts.outer,
      session,
      runId: request.runId,
      timeoutMs: call.timeoutMs,
      onEvent: (kind, data) => hooks.onEvent(kind, data),
    });
  }
  let outcome: SandboxOutcome;
  try {
    outcome = await parts.sandbox.call(call, hooks);
  } catch (error) {
    outcome = sandboxBroke(error);
  }
  return ranOutcome(entry, outcome, hooks, secrets, started);
}

// A tool outside a toolkit runs with no configuration and no secret.
const OUTSIDE_A_TOOLKIT: ResolvedConfig = Object.freeze({
  configured: false,
  config: Object.freeze({}),
  problem: null,
  secrets: NO_SECRETS,
});

// What the sandbox runs: the entry's version with the checked grant; the
// timeout is the request's, capped by the policy.
function sandboxCall(
  entry: ToolEntry,
  request: ToolCallRequest,
  grant: Permissions,
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
