/**
 * Calling a tool: look it up, check the policy, validate the arguments,
 * resolve its toolkit configuration and permission grant, run it in the
 * sandbox, and turn the outcome into a {@link ToolOutcome}. Used by the tools
 * capability for `tool/call/req` and by skills for `ctx.tools.call`.
 *
 * @module
 */

import type { GrantCheck } from "../sandbox/permissions.ts";
import { GrantCache } from "../sandbox/grants.ts";
import { isOutput } from "../../protocol/output.ts";
import type { Sandbox, SandboxOutcome } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import { PermissionDeniedError, SkillboxError } from "../../protocol/errors.ts";
import { newId } from "../../protocol/envelope.ts";
import {
  type CallEvent,
  type ToolOutcome,
  toolOutcome,
} from "../../protocol/domain.ts";
import type { Registry } from "../registry/registry.ts";
import type { ToolEntry } from "../registry/types.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import { scrubSecrets } from "../toolkits/secrets.ts";
import { checkToolPolicy, type HostPolicy, parseHostPolicy } from "./policy.ts";
import { ToolCallHooks } from "./call_hooks.ts";
import type { EgressBroker } from "../egress/broker.ts";
import { validateArguments } from "./validate.ts";
import type { RunObserver } from "../store/observer.ts";
import { observeToolCaller } from "../store/observe_tools.ts";

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
  const maxEvents = options.maxEvents ?? 1000;
  const grants = new GrantCache(options.sandbox, policy.permissions);

  const caller: ToolCaller = {
    async call(request) {
      const started = performance.now();
      const { name, session } = request;
      const snapshot = options.registry.snapshot;
      const entry = snapshot.tools.get(name);
      if (!entry) {
        const blocked = snapshot.blocked.get(name);
        throw new SkillboxError(
          "unknown_tool",
          blocked
            ? `Unknown tool "${name}": ${blocked}`
            : `Unknown tool "${name}"`,
          { detail: { tool_name: name } },
        );
      }
      const decision = checkToolPolicy(policy.tools, entry, session.token);
      if (!decision.allowed) {
        throw new PermissionDeniedError(decision.reason, {
          detail: { tool_name: name },
        });
      }

      let check;
      try {
        check = validateArguments(entry.inputSchema, request.args);
      } catch (error) {
        return failure(
          entry,
          "tool_error",
          `Cannot run tool "${name}": its input schema is invalid: ${
            (error as Error).message
          }`,
          NO_SECRETS,
          started,
        );
      }
      if (!check.valid) {
        return failure(
          entry,
          "schema_violation",
          `Invalid arguments for tool "${name}": ${check.message}`,
          NO_SECRETS,
          started,
        );
      }

      let config: Record<string, unknown> = NO_CONFIG;
      let secrets: readonly string[] = NO_SECRETS;
      const kit = entry.toolkit === null
        ? undefined
        : snapshot.toolkits.get(entry.toolkit);
      if (kit) {
        const resolved = options.configs.resolve(session, kit);
        if (resolved.problem !== null) {
          return failure(
            entry,
            "tool_error",
            resolved.configured
              ? `Cannot run tool "${name}": the configuration of toolkit "${kit.name}" is invalid: ${resolved.problem}`
              : `Cannot run tool "${name}": toolkit "${kit.name}" is not configured (${resolved.problem}); send toolkit/configure/req first`,
            resolved.secrets,
            started,
          );
        }
        config = resolved.config;
        secrets = resolved.secrets;
      }

      let grant: GrantCheck;
      try {
        const known = grants.of(entry, kit, config);
        grant = known instanceof Promise ? await known : known;
      } catch (error) {
        const code = error instanceof SkillboxError ? error.code : "tool_error";
        return failure(
          entry,
          code,
          `Cannot run tool "${name}": its permissions could not be computed: ${
            (error as Error).message
          }`,
          secrets,
          started,
        );
      }
      if (!grant.ok) {
        throw new PermissionDeniedError(
          scrub(`Cannot run tool "${name}": ${grant.reason}`, secrets),
          { detail: { tool_name: name, permission: grant.permission } },
        );
      }

      const hooks = new ToolCallHooks(
        request,
        secrets,
        maxEvents,
        options.egress
          ? {
            broker: options.egress,
            net: grant.grant.net ?? [],
            toolkit: entry.toolkit,
          }
          : null,
      );
      const timeoutMs = Math.max(
        1,
        Math.min((request.timeoutSeconds ?? 30) * 1000, policy.maxTimeoutMs),
      );
      let outcome: SandboxOutcome;
      try {
        outcome = await options.sandbox.call({
          path: entry.path,
          export: entry.export,
          version: entry.hash,
          args: request.args,
          grant: grant.grant,
          timeoutMs,
          sessionId: session.id,
          callId: request.callId ?? newId(),
          config,
          metadata: request.metadata ?? {},
          isolation: entry.isolation,
          principal: entry.runsClientCode ? "session" : "module",
        }, hooks);
      } catch (error) {
        // The sandbox promises not to throw for the code's failures; if it
        // does, it is the sandbox that broke.
        outcome = {
          ok: false,
          code: error instanceof SkillboxError ? error.code : "sandbox_crash",
          message: error instanceof Error ? error.message : String(error),
          retryable: true,
        };
      }
      return {
        result: scrub(
          toResult(name, outcome, hooks.events, hooks.eventsCut, started),
          secrets,
        ),
        breakLoop: outcome.ok && isOutput(outcome.value) &&
          outcome.value.break_loop === true,
        entry,
      };
    },
  };
  return options.observer
    ? observeToolCaller(caller, options.observer, options)
    : caller;
}

const NO_SECRETS: readonly string[] = Object.freeze([]);
const NO_CONFIG: Record<string, unknown> = Object.freeze({});

// Most toolkits hold no secret: skip the walk over the result then.
function scrub<T>(value: T, secrets: readonly string[]): T {
  return secrets.length === 0 ? value : scrubSecrets(value, secrets);
}

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

function toResult(
  name: string,
  outcome: SandboxOutcome,
  events: CallEvent[],
  eventsCut: boolean,
  started: number,
): ToolOutcome {
  if (!outcome.ok) {
    return toolOutcome({
      success: false,
      toolName: name,
      error: outcome.message,
      errorCode: outcome.code,
      durationMs: elapsed(started),
      truncated: eventsCut,
      events,
    });
  }
  const value = outcome.value;
  if (isOutput(value)) {
    return toolOutcome({
      success: true,
      toolName: name,
      data: value.data ?? null,
      summary: value.summary ?? null,
      exitCode: typeof value.exit_code === "number" ? value.exit_code : null,
      durationMs: elapsed(started),
      truncated: outcome.truncated || eventsCut,
      events,
    });
  }
  return toolOutcome({
    success: true,
    toolName: name,
    data: value ?? null,
    durationMs: elapsed(started),
    truncated: outcome.truncated || eventsCut,
    events,
  });
}

function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}
