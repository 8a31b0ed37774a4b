/**
 * The A2E `skill` capability: `skill/discover/req` and `skill/call/req`.
 *
 * Wiring, in the host (the catalog is `catalog.ts`, the tool host
 * `tool_host.ts`, the LLM resolver `host_llm.ts`):
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
 * never listed; Blocked and Created ones are, with their status.
 *
 * @module
 */

import type { Capability } from "../capability.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { resolveSkillStatus } from "./skill_status.ts";
import type { SkillRecord } from "./skill_record.ts";
import type { LlmResolver, SkillLimits, SkillToolHost } from "./run_types.ts";
import { runSkill } from "./run.ts";
import type { SkillCatalog } from "./catalog.ts";
import type { RunObserver } from "../store/recorder.ts";
import { hostLlm } from "./host_llm.ts";

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
 * import { codeSkillRecord } from "./code_skill.ts";
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
          .filter((d) => d.status !== "Archived")
          .filter((d) => {
            const own = new Set((d.tags ?? []).map((t) => t.toLowerCase()));
            return tags.every((t) => own.has(t));
          })
          .filter((d) =>
            categories.every((c) => (d.category ?? "").toLowerCase() === c)
          )
          .sort((a, b) => a.name.localeCompare(b.name));
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
