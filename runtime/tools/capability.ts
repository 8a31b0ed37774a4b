/**
 * The A2E `tools` capability: `tool/list/req` (list and search modes) and
 * `tool/call/req` (A2E-WIRE.md §4), over the registry, the sandbox and the
 * host policy.
 *
 * @module
 */

import type {
  Capability,
  Exchange,
  OutgoingMessage,
  SessionScope,
} from "../capability.ts";
import { encodeEvent } from "../../protocol/responses.ts";
import type { Tool, ToolOutcome } from "../../protocol/tool.ts";
import type { Request } from "../../protocol/requests.ts";
import type { Registry } from "../registry/registry.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import { reindex, toolsChangedEvent } from "./tool_changes.ts";
import { ToolIndex } from "../search/tool_index.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { createToolCaller, type ToolCaller } from "./call.ts";
import type { EgressBroker } from "../egress/broker.ts";
import { listTools } from "./filter.ts";
import { checkToolPolicy, type HostPolicy, parseHostPolicy } from "./policy.ts";
import type { RunObserver } from "../store/recorder.ts";
import type { CodeCalls } from "../code/inner_calls.ts";

/** Options of {@link createToolsCapability}. */
export interface ToolsCapabilityOptions {
  /** The live registry; the capability follows its changes. */
  registry: Pick<Registry, "snapshot" | "onChange">;
  /** Runs tool code. */
  sandbox: Pick<Sandbox, "call" | "resolvePermissions">;
  /** Toolkit configurations, shared with the toolkits capability. */
  configs: ToolkitConfigs;
  /** The host policy. @default parseHostPolicy({}) */
  policy?: HostPolicy;
  /**
   * Sends a push message to every session (the host's `broadcast`); called
   * with an `invoke/event` of kind `tools.changed` after each reload that
   * changed tools, toolkits or skills. @default no push
   */
  broadcast?: (message: OutgoingMessage) => void;
  /** How many events a result keeps. @default 1000 */
  maxEvents?: number;
  /** Performs `ctx.fetch` for tools. @default none (ctx.fetch refused) */
  egress?: EgressBroker;
  /** Receives every tool call as a run. @default none */
  observer?: RunObserver;
  /** `run_code`'s inner calls. @default none: they are refused */
  code?: CodeCalls;
}

/** The tools capability, plus what skills need to call tools. */
export interface ToolsCapability extends Capability {
  /** The caller behind `tool/call/req`, for `ctx.tools.call` in skills. */
  readonly caller: ToolCaller;
  /**
   * A tool, as listed.
   *
   * @returns the tool, or undefined for an unknown name
   */
  definition(name: string): Tool | undefined;
}

/**
 * Creates the `tools` capability.
 *
 * `tool/list/req` with an empty `query` lists the non-deferred tools passing
 * `filter_tags` (all of them, case-insensitive) and `filter_kind` (an origin
 * — `builtin`, `file`, `mcp` — or a toolkit name), sorted by name. With a
 * `query` it searches (BM25 over name, description, tags, parameters), best
 * first, deferred tools included only with `include_deferred`. Tools the
 * policy denies to the session are never listed.
 *
 * `tool/call/req` answers `tool/call/resp` with the result (failures of the
 * tool included), or throws `unknown_tool` / `tool_denied` for the
 * dispatcher to send as an `error`. With `streaming: true`, each event is
 * also sent as a `tool/event` as it happens.
 *
 * @param options registry, sandbox, configurations, policy, broadcast
 * @returns the capability; `close()` stops following the registry
 * @example List with a stand-in registry
 * ```ts
 * import { createToolsCapability } from "./capability.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/echo.ts", hash: "h", error: null,
 *   definitions: [{ export: "default", kind: "tool", name: "echo", permissions: {}, runnable: true,
 *     fields: { description: "Echo text back", input: { type: "object", properties: { text: { type: "string" } } } } }],
 * } }]);
 * const tools = createToolsCapability({
 *   registry: { snapshot, onChange: () => () => {} },
 *   configs: createToolkitConfigs(),
 *   sandbox: {
 *     call: () => Promise.reject(new Error("unused")),
 *     resolvePermissions: () => Promise.resolve({}),
 *   },
 * });
 * assert.deepEqual(Object.keys(tools.definition("echo")?.inputSchema.properties ?? {}), ["text"]);
 * await tools.close?.();
 * ```
 */
export function createToolsCapability(
  options: ToolsCapabilityOptions,
): ToolsCapability {
  const { registry } = options;
  const policy = options.policy ?? parseHostPolicy({});
  const caller = createToolCaller({
    registry,
    sandbox: options.sandbox,
    configs: options.configs,
    policy,
    maxEvents: options.maxEvents,
    egress: options.egress,
    observer: options.observer,
    code: options.code,
  });
  // The index follows the registry incrementally (tool_changes.ts).
  const index = new ToolIndex<ToolEntry>([...registry.snapshot.tools.values()]);
  const unsubscribe = registry.onChange((change) => {
    reindex(index, change);
    const event = options.broadcast && toolsChangedEvent(change);
    if (event) options.broadcast?.(event);
  });
  return {
    name: "tools",
    caller,
    definition: (name) => index.get(name),
    handlers: {
      "tool/list/req": ({ request, session }) =>
        Promise.resolve({
          tools: findTools(index, registry.snapshot, policy, request, session),
        }),
      "tool/call/req": (exchange) => answerCall(caller, exchange),
    },
    close() {
      unsubscribe();
      return Promise.resolve();
    },
  };
}

// `tool/list/req`: the listed tools (no query) or the search hits, minus
// those the policy denies to the session.
function findTools(
  index: ToolIndex<ToolEntry>,
  snapshot: RegistrySnapshot,
  policy: HostPolicy,
  request: Request<"tool/list/req">,
  session: SessionScope,
): Tool[] {
  const filter = {
    filterKind: request.filterKind,
    filterTags: request.filterTags,
  };
  const found = request.query.trim() === ""
    ? listTools(indexed(index, snapshot), filter)
    : index.search(request.query, {
      ...filter,
      includeDeferred: request.includeDeferred,
    }).map((hit) => hit.entry);
  return found.filter((tool) =>
    checkToolPolicy(policy.tools, tool, session.token).allowed
  );
}

// The index's entries of the snapshot's tools.
function indexed(
  index: ToolIndex<ToolEntry>,
  snapshot: RegistrySnapshot,
): ToolEntry[] {
  const out: ToolEntry[] = [];
  for (const name of snapshot.tools.keys()) {
    const entry = index.get(name);
    if (entry) out.push(entry);
  }
  return out;
}

// `tool/call/req`: one call; with `streaming`, each event also goes to the
// session as a `tool/event` as it happens.
async function answerCall(
  caller: ToolCaller,
  { request, session, signal }: Exchange<"tool/call/req">,
): Promise<{ result: ToolOutcome }> {
  const { result } = await caller.call({
    name: request.toolName,
    args: request.arguments,
    session,
    signal,
    timeoutSeconds: request.timeout,
    callId: request.id,
    metadata: request.correlationId === ""
      ? {}
      : { correlation_id: request.correlationId },
    onEvent: request.streaming
      ? (event) => session.send(encodeEvent("tool/event", request.id, event))
      : undefined,
  });
  return { result };
}
