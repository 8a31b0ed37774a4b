/**
 * The skills' tool host: the registry's tools and toolkits, called through
 * the tools capability's caller.
 *
 * @module
 */

import { output } from "../../protocol/output.ts";
import type { ToolCaller } from "../tools/call.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import type { RegistrySnapshot } from "../registry/types.ts";
import type { SkillToolHost } from "./run_types.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { GrantCache } from "../sandbox/grants.ts";

/** Options for {@link registryToolHost}. */
export interface RegistryToolHostOptions {
  /** The live registry. */
  registry: { readonly snapshot: RegistrySnapshot };
  /**
   * The tools capability's caller (`createToolsCapability(...).caller`): the
   * one path with policy checks, argument validation and the sandbox.
   */
  caller: Pick<ToolCaller, "call">;
  /**
   * The sessions' toolkit configurations and the grant cache over the host
   * policy (the ones the tools capability's caller uses), for
   * `toolkitGrant`. @default none: `toolkitGrant` finds nothing
   */
  toolkits?: {
    configs: Pick<ToolkitConfigs, "resolve">;
    grants: Pick<GrantCache, "of">;
  };
}

/**
 * A {@link SkillToolHost} over the registry's tools and toolkits that runs
 * calls through the tools capability's caller, so a skill's tool calls get
 * the same policy, validation and sandbox as an agent's `tool/call/req`.
 * A tool's failure comes back as an outcome; an unknown or denied tool
 * throws, and the skill sees either as a failed call.
 *
 * @param options the registry and the caller
 * @returns the tool host
 * @example Look a tool up and call it
 * ```ts
 * import { registryToolHost } from "./tool_host.ts";
 * import { toolOutcome } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const tool = { kind: "tool", name: "grep", description: "Search", inputSchema: { type: "object" },
 *   toolkit: "filesystem", prompt: "" };
 * const snapshot = { generation: 1, tools: new Map([["grep", tool]]),
 *   toolkits: new Map([["filesystem", { tools: ["grep"] }]]), skills: new Map(),
 *   blocked: new Map(), agentSkills: [], errors: [], refused: [], roots: [] };
 * const host = registryToolHost({
 *   registry: { snapshot } as never,
 *   caller: { call: (req) => Promise.resolve({ breakLoop: false, entry: tool as never,
 *     result: toolOutcome({ success: true, toolName: req.name, durationMs: 1, data: { hits: 2 } }) }) },
 * });
 * assert.equal(host.tool("grep")?.toolkit, "filesystem");
 * assert.deepEqual(host.toolkit("filesystem")?.tools, ["grep"]);
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const outcome = await host.call("grep", {}, { session, signal: session.signal, timeoutMs: 1000 });
 * assert.deepEqual(outcome, { ok: true, value: { hits: 2 } });
 * ```
 */
export function registryToolHost(
  options: RegistryToolHostOptions,
): SkillToolHost {
  return {
    // The registry's entries are domain tools with their guidance already.
    tool: (name) => options.registry.snapshot.tools.get(name),
    toolkit(name) {
      const k = options.registry.snapshot.toolkits.get(name);
      return k ? { tools: k.tools } : undefined;
    },
    async toolkitGrant(name, session, override) {
      const kit = options.registry.snapshot.toolkits.get(name);
      if (!kit || !options.toolkits) return null;
      const resolved = options.toolkits.configs.resolve(session, kit);
      if (!resolved.configured) return null;
      if (resolved.problem !== null) {
        return {
          ok: false,
          reason:
            `the configuration of toolkit "${name}" is invalid: ${resolved.problem}`,
        };
      }
      const config = { ...resolved.config, ...override };
      // The toolkit's own permissions for this configuration, checked as a
      // call of one of its tools is (same cache, same policy).
      const check = await options.toolkits.grants.of(kit, undefined, config);
      return check.ok
        ? { ok: true, config, grant: check.grant }
        : { ok: false, reason: check.reason };
    },
    async call(
      name,
      args,
      { session, signal, timeoutMs, onEvent, parentRunId },
    ) {
      const { result, breakLoop } = await options.caller.call({
        name,
        args,
        session,
        signal,
        parentRunId,
        timeoutSeconds: Math.max(0.001, timeoutMs / 1000),
        onEvent: onEvent && ((event) => onEvent(event.kind, event.data)),
      });
      if (!result.success) {
        return {
          ok: false,
          code: (result.errorCode ?? "tool_error") as ErrorCode,
          message: result.error ?? `Tool "${name}" failed`,
        };
      }
      return {
        ok: true,
        // The agent loop ends on break_loop; it reads it from the marker.
        value: breakLoop
          ? output({
            data: result.data,
            summary: result.summary,
            break_loop: true,
          })
          : result.data,
      };
    },
  };
}
