/**
 * The A2E `skill` capability: `skill/discover/req` and `skill/call/req`.
 *
 * Wiring, in the host: the catalog (`catalog.ts`), and the tool host and
 * LLM resolver below, over the registry's tools and the host's configured
 * LLMs:
 *
 * ```ts ignore
 * const registry = await loadRegistry({ sandbox, dirs, watch: true });
 * host.addCapability(createSkillsCapability({
 *   catalog: registryCatalog({ registry, policy }),
 *   tools: registryToolHost({ registry, caller: toolsCapability.caller }),
 *   sandbox,
 *   llm: hostLlm(config.llm),
 *   archived: ["old_skill"],
 *   limits: { maxTimeoutSeconds: 300 },
 * }));
 * ```
 *
 * Discover filters: `filter_tags` and `filter_categories` are each AND
 * within the list, both case-insensitive. A skill matches `filter_tags` when
 * it carries every listed tag; it matches `filter_categories` when its
 * `category` equals every listed category (so one category selects, and two
 * different ones select nothing, exactly as AND says). Archived skills are
 * never listed; Blocked ones are, with their status.
 *
 * @module
 */

import type { Capability } from "../capability.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { output } from "../../protocol/output.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { encodeLlmChoice } from "../../protocol/skill.ts";
import type { ToolCaller } from "../tools/call.ts";
import type { RegistrySnapshot } from "../registry/types.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { GrantCache } from "../sandbox/grants.ts";
import type { RunObserver } from "../store/recorder.ts";
import { type LlmConfig, resolveLlmConfig } from "../llm/config.ts";
import { createProvider, type CreateProviderOptions } from "../llm/provider.ts";
import {
  resolveSkillStatus,
  type SkillCatalog,
  type SkillRecord,
} from "./catalog.ts";
import type { LlmResolver, SkillLimits, SkillToolHost } from "./relays.ts";
import { runSkill } from "./run.ts";
import { compareCodeUnits } from "../tools/filter.ts";

/** Options for {@link createSkillsCapability}. */
export interface SkillsCapabilityOptions {
  /** The skills. */
  catalog: SkillCatalog;
  /** The tools skills may call, and the path that runs them. */
  tools: SkillToolHost;
  /** Runs code skills. @default none: code skills fail with a clear error */
  sandbox?: Pick<Sandbox, "call">;
  /** Picks the LLM. @default none configured: LLM calls fail naming what to set */
  llm?: LlmResolver;
  /** Skill names the operator archived (hidden, calls refused). @default [] */
  archived?: Iterable<string>;
  /** Limits; see {@link SkillLimits}. @default {} */
  limits?: SkillLimits;
  /** Receives every skill run. @default none */
  observer?: RunObserver;
}

/**
 * Creates the `skill` capability.
 *
 * @param options the catalog, tools, sandbox, LLM and limits
 * @returns the capability (name `skill`)
 * @example Discover one skill
 * ```ts
 * import { createSkillsCapability } from "./capability.ts";
 * import { codeSkillRecord } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const record = codeSkillRecord({
 *   path: "/s/a.ts", export: "default", hash: "h", name: "a", runnable: true,
 *   fields: { description: "A", tags: ["data"] },
 * }, { source: "system" });
 * const cap = createSkillsCapability({
 *   catalog: { skills: () => Promise.resolve([record]) },
 *   tools: { tool: () => undefined, toolkit: () => undefined, call: () => Promise.reject(new Error("no")) },
 * });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const resp = await cap.handlers["skill/discover/req"]!({
 *   request: { type: "skill/discover/req", id: "r", filterTags: ["data"], filterCategories: [] },
 *   session, signal: session.signal,
 * });
 * assert.equal(resp.skills[0]?.name, "a");
 * ```
 */
export function createSkillsCapability(
  options: SkillsCapabilityOptions,
): Capability {
  const archived = new Set(options.archived ?? []);
  const llm = options.llm ?? hostLlm([]);
  const current = async () => {
    const records = await options.catalog.skills();
    return records.map((record: SkillRecord) => ({
      record,
      definition: resolveSkillStatus(record, {
        hasTool: (n) => options.tools.tool(n) !== undefined,
        hasToolkit: (n) => options.tools.toolkit(n) !== undefined,
        archived,
      }),
    }));
  };

  return {
    name: "skill",
    handlers: {
      "skill/discover/req": async ({ request }) => {
        const tags = request.filterTags.map((t) => t.toLowerCase());
        const categories = request.filterCategories.map((c) => c.toLowerCase());
        const skills = (await current())
          .map((s) => s.definition)
          .filter((d) => {
            const own = new Set((d.tags ?? []).map((t) => t.toLowerCase()));
            const category = (d.category ?? "").toLowerCase();
            return d.status !== "Archived" && tags.every((t) => own.has(t)) &&
              categories.every((c) => category === c);
          })
          .sort((a, b) => compareCodeUnits(a.name, b.name));
        return { skills };
      },
      "skill/call/req": async ({ request, session, signal }) => {
        const found = (await current()).find((s) =>
          s.definition.name === request.name
        );
        if (!found || found.definition.status === "Archived") {
          return {
            name: request.name,
            result: null,
            error: {
              code: "unknown_skill",
              message: found
                ? `Skill "${request.name}" is archived`
                : `Unknown skill "${request.name}"`,
              retryable: false,
            },
          };
        }
        const result = await runSkill(found.record, found.definition, {
          reqId: request.id,
          arguments: request.arguments,
          timeout: request.timeout,
          streaming: request.streaming,
          llmOverride: request.llmOverride,
          metadata: request.metadata,
          session,
          signal,
          tools: options.tools,
          sandbox: options.sandbox,
          llm,
          limits: options.limits,
          observer: options.observer,
        });
        return { name: request.name, result, error: null };
      },
    },
  };
}

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
 * Every failure throws: an unknown or denied tool as the caller throws
 * it, a tool that ran and failed as a `SkillboxError` with its code.
 *
 * @param options the registry and the caller
 * @returns the tool host
 * @example Look a tool up and call it
 * ```ts
 * import { registryToolHost } from "./capability.ts";
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
 * const value = await host.call("grep", {}, { session, signal: session.signal, timeoutMs: 1000 });
 * assert.deepEqual(value, { hits: 2 });
 * ```
 */
export function registryToolHost(
  options: RegistryToolHostOptions,
): SkillToolHost {
  return {
    // The registry's entries are domain tools with their guidance already,
    // and toolkits with their tools' names.
    tool: (name) => options.registry.snapshot.tools.get(name),
    toolkit: (name) => options.registry.snapshot.toolkits.get(name),
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
        throw new SkillboxError(
          (result.errorCode ?? "tool_error") as ErrorCode,
          result.error ?? `Tool "${name}" failed`,
        );
      }
      // The agent loop ends on break_loop; it reads it from the marker.
      return breakLoop
        ? output({
          data: result.data,
          summary: result.summary,
          break_loop: true,
        })
        : result.data;
    },
  };
}

/**
 * An {@link LlmResolver} over the host's `llm` entries (`skillbox.jsonc`):
 * `llm_override`, else the skill's `llm_config`, else the host default, with
 * credentials kept in the host (see `runtime/llm/config.ts`).
 *
 * @param host the `llm` entries
 * @param options the operator's `llm` rules and the egress broker that
 *   checks endpoints a client or a skill chose (see `createProvider`)
 * @returns the resolver
 * @throws nothing itself; the resolver throws `skill_error` naming what to set
 * @example No provider configured
 * ```ts
 * import { hostLlm } from "./capability.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => hostLlm([])({ override: null, skill: null }), /provider/i);
 * ```
 */
export function hostLlm(
  host: readonly LlmConfig[],
  options: CreateProviderOptions = {},
): LlmResolver {
  // One provider (one SDK client, one connection pool) per distinct
  // choice: a fresh client per call would pay connection setup every time.
  const providers = new Map<string, ReturnType<typeof createProvider>>();
  return ({ override, skill }) => {
    // The LLM module reads choices in the configuration's (wire) shape.
    const resolved = resolveLlmConfig(host, {
      override: override && encodeLlmChoice(override),
      skill: skill && encodeLlmChoice(skill),
    });
    const key = JSON.stringify(resolved);
    // Least recently used first out: overrides are unbounded, and one
    // client cycling them must not flush the providers others are using.
    const provider = providers.get(key) ?? createProvider(resolved, options);
    providers.delete(key); // a Map keeps insertion order: re-add as newest
    providers.set(key, provider);
    if (providers.size > 32) providers.delete(providers.keys().next().value!);
    return provider;
  };
}
