/**
 * The A2E `tools` capability: `tool/list/req` (list and search modes) and
 * `tool/call/req` (A2E-WIRE.md §4), over the registry, the sandbox and the
 * host policy. It follows the registry's reloads: its search index is
 * brought up to date with the tools that changed (one re-indexed tool per
 * touched file, not all of them), and every session is told with an
 * `invoke/event` of kind `tools.changed` when tools, toolkits or skills
 * changed.
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
import { changesWhatIsServed, type Registry } from "../registry/registry.ts";
import type {
  RegistryChange,
  RegistrySnapshot,
  ToolEntry,
} from "../registry/types.ts";
import { ToolIndex } from "../search/tool_index.ts";
import {
  createToolCaller,
  type ToolCaller,
  type ToolCallerOptions,
} from "./call.ts";
import { listTools } from "./filter.ts";
import { checkToolPolicy, type HostPolicy, parseHostPolicy } from "./policy.ts";

/** Options of {@link createToolsCapability}: the caller's, and two more. */
export interface ToolsCapabilityOptions extends ToolCallerOptions {
  /** The live registry; the capability follows its changes. */
  registry: Pick<Registry, "snapshot" | "onChange">;
  /**
   * Sends a push message to every session (the host's `broadcast`); called
   * with an `invoke/event` of kind `tools.changed` after each reload that
   * changed tools, toolkits or skills. @default no push
   */
  broadcast?: (message: OutgoingMessage) => void;
}

/** The tools capability, plus what skills need to call tools. */
export interface ToolsCapability extends Capability {
  /** The caller behind `tool/call/req`, for `ctx.tools.call` in skills. */
  readonly caller: ToolCaller;
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
 * @example Search with a stand-in registry
 * ```ts
 * import { createToolsCapability } from "./capability.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import { decodeRequest, REQUEST_SCHEMAS } from "../../protocol/request_schemas.ts";
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
 * const request = decodeRequest(REQUEST_SCHEMAS["tool/list/req"].parse({ type: "tool/list/req", id: "r1", query: "echo" }));
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const found = await tools.handlers["tool/list/req"]!({ request, session, signal: session.signal } as never);
 * assert.deepEqual(found.tools.map((tool) => tool.name), ["echo"]);
 * await tools.close?.();
 * ```
 */
export function createToolsCapability(
  options: ToolsCapabilityOptions,
): ToolsCapability {
  const { registry } = options;
  const policy = options.policy ?? parseHostPolicy({});
  const caller = createToolCaller({ ...options, policy });
  // The index follows the registry incrementally.
  const index = new ToolIndex<ToolEntry>([...registry.snapshot.tools.values()]);
  const unsubscribe = registry.onChange((change) => {
    reindex(index, change);
    const event = options.broadcast && toolsChangedEvent(change);
    if (event) options.broadcast?.(event);
  });
  return {
    name: "tools",
    caller,
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
    ? listTools(snapshot.tools.values(), filter)
    : index.search(request.query, {
      ...filter,
      includeDeferred: request.includeDeferred,
    }).map((hit) => hit.entry);
  return found.filter((tool) =>
    checkToolPolicy(policy.tools, tool, session.token).allowed
  );
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

/**
 * Brings an index up to date with a reload: removed tools leave it, added
 * and changed ones are (re-)indexed from the new snapshot.
 *
 * @param index the capability's index
 * @param change what the reload changed
 * @example One added tool
 * ```ts
 * import { reindex } from "./capability.ts";
 * import { ToolIndex } from "../search/tool_index.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/echo.ts", hash: "h", error: null,
 *   definitions: [{ export: "default", kind: "tool", name: "echo", permissions: {}, runnable: true,
 *     fields: { description: "Echo", input: { type: "object" } } }],
 * } }]);
 * const index = new ToolIndex<ToolEntry>();
 * const none = { added: [], changed: [], removed: [] };
 * reindex(index, { snapshot, tools: { ...none, added: ["echo"] }, toolkits: none,
 *   skills: none, agentSkillsChanged: false, errorsChanged: false });
 * assert.equal(index.search("echo")[0]?.entry.name, "echo");
 * ```
 */
export function reindex(
  index: ToolIndex<ToolEntry>,
  change: RegistryChange,
): void {
  for (const name of change.tools.removed) index.remove(name);
  for (const name of [...change.tools.added, ...change.tools.changed]) {
    const tool = change.snapshot.tools.get(name);
    if (tool) index.replace(tool);
  }
}

// The `tools.changed` push of a reload (its `seq` the snapshot's
// generation), or null when it changed no tool, toolkit or skill. Skills
// count: MCP serves them as tools.
function toolsChangedEvent(
  change: RegistryChange,
): OutgoingMessage | null {
  if (!changesWhatIsServed(change)) return null;
  return encodeEvent("invoke/event", null, {
    kind: "tools.changed",
    data: {
      added: change.tools.added,
      changed: change.tools.changed,
      removed: change.tools.removed,
      toolkits: [
        ...change.toolkits.added,
        ...change.toolkits.changed,
        ...change.toolkits.removed,
      ],
      skills: [
        ...change.skills.added,
        ...change.skills.changed,
        ...change.skills.removed,
      ],
    },
    seq: change.snapshot.generation,
  });
}
