/**
 * Reports every call through a {@link ToolCaller} to a {@link RunObserver}:
 * the one place tool calls are observed, whether a client, the embedding API
 * or a skill (as a child run) made them.
 *
 * @module
 */

import type { Registry } from "../registry/registry.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { ToolCaller, ToolCallRequest } from "../tools/call.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import { errorEnd, type RunObserver } from "./observer.ts";

/** What {@link observeToolCaller} needs to find a call's toolkit secrets. */
export interface ObserveToolsOptions {
  /** The registry the caller reads. */
  registry: Pick<Registry, "snapshot">;
  /** The toolkit configurations the caller resolves. */
  configs: Pick<ToolkitConfigs, "resolve">;
}

/**
 * Wraps a tool caller so that each call is reported as a run: started,
 * each event, finished with its result or the error it threw.
 *
 * @param caller the caller to wrap
 * @param observer receives the runs
 * @param options registry and configurations, for the toolkit's secrets
 * @returns a caller with the same behaviour
 * @example Observe one call
 * ```ts
 * import { observeToolCaller } from "./observe_tools.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * const caller = observeToolCaller({
 *   call: () => Promise.reject(Object.assign(new Error("Unknown tool"), { code: "unknown_tool" })),
 * }, {
 *   started: (s) => (seen.push(`start ${s.name}`), "r1"),
 *   event: () => {},
 *   finished: (id, end) => seen.push(`end ${id} ${end.outcome}`),
 * }, { registry: { snapshot: { toolkits: new Map() } } as never, configs: createToolkitConfigs() });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * await assert.rejects(caller.call({ name: "nope", args: {}, session }));
 * assert.deepEqual(seen, ["start nope", "end r1 unknown_tool"]);
 * ```
 */
export function observeToolCaller(
  caller: ToolCaller,
  observer: RunObserver,
  options: ObserveToolsOptions,
): ToolCaller {
  return {
    call(request) {
      const id = observer.started({
        kind: "tool",
        name: request.name,
        session: request.session,
        args: request.args,
        parentId: request.parentRunId ?? null,
      });
      const onEvent = request.onEvent;
      const observed: ToolCallRequest = {
        ...request,
        runId: id,
        onEvent: onEvent
          ? (event: CallEvent) => {
            observer.event(id, event);
            onEvent(event);
          }
          : (event: CallEvent) => observer.event(id, event),
      };
      return caller.call(observed).then((outcome) => {
        const { result, entry } = outcome;
        const kit = entry.toolkit === null
          ? undefined
          : options.registry.snapshot.toolkits.get(entry.toolkit);
        observer.finished(id, {
          outcome: result.success ? "ok" : result.errorCode ?? "tool_error",
          error: result.error ?? null,
          result: result.data,
          summary: typeof result.summary === "string" ? result.summary : null,
          toolkit: entry.toolkit,
          secrets: kit
            ? options.configs.resolve(request.session, kit).secrets
            : [],
        });
        return outcome;
      }, (error) => {
        observer.finished(id, errorEnd(error));
        throw error;
      });
    },
  };
}
