/**
 * The A2E `toolkits` capability: `toolkit/list/req` and
 * `toolkit/configure/req` (A2E-WIRE.md §5).
 *
 * @module
 */

import type { Capability } from "../capability.ts";
import type { Toolkit } from "../../protocol/tool.ts";
import type { ToolkitConfigureResponse } from "../../protocol/responses.ts";
import type { Registry } from "../registry/registry.ts";
import type { RegistrySnapshot, ToolkitEntry } from "../registry/types.ts";
import { checkToolPolicy, type ToolPolicyConfig } from "../tools/policy.ts";
import type { ToolkitConfigs } from "./configs.ts";
import { publicSchema } from "./secrets.ts";
import { compareCodeUnits, hasAllTags } from "../tools/filter.ts";

/** Options of {@link createToolkitsCapability}. */
export interface ToolkitsCapabilityOptions {
  /** Where toolkits come from; read at every request. */
  registry: Pick<Registry, "snapshot">;
  /** Shared with the tools capability, which hands configs to tools. */
  configs: ToolkitConfigs;
  /**
   * The `policy.tools` rules: a session's listing names only the tools it
   * may list, and a toolkit none of whose tools it may list is, for that
   * session, a toolkit that does not exist. @default no rules
   */
  tools?: ToolPolicyConfig;
}

/**
 * Creates the `toolkits` capability.
 *
 * `toolkit/list/req`: `filter_kind` matches a toolkit's origin (`builtin`,
 * `file`) or its category; `filter_tags` needs every tag (case-insensitive);
 * sorted by name; `configured` is per session. The listed `schema` never
 * carries a secret's default.
 *
 * `toolkit/configure/req`: always answers `toolkit/configure/resp`; an
 * empty or unknown name, or a config failing the schema, gets `status:
 * "error"` and a message naming the field, never its value.
 *
 * Both follow the tools policy (`tools`): a toolkit is listed with the
 * tools the session may list, and one with tools, none of which it may
 * list, is neither listed nor configurable: it is answered as unknown.
 *
 * @param options the registry and the configuration store
 * @returns the capability, to pass to `createHost`
 * @example Configure, then list
 * ```ts
 * import { createToolkitsCapability } from "./capability.ts";
 * import { createToolkitConfigs } from "./configs.ts";
 * import assert from "node:assert/strict";
 * const kit = {
 *   kind: "toolkit" as const, name: "github", alias: "", description: "GitHub", category: "dev", tags: [],
 *   iconSvg: null, version: "1.0.0", tools: ["list_issues"], path: "/s/github/toolkit.ts",
 *   export: "default", hash: "h", origin: "file" as const, permissions: {},
 *   configSchema: { type: "object", properties: { token: { type: "string", secret: true } }, required: ["token"] },
 * };
 * const registry = { snapshot: { toolkits: new Map([["github", kit]]), blocked: new Map() } } as never;
 * const cap = createToolkitsCapability({ registry, configs: createToolkitConfigs() });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const exchange = (request: Record<string, unknown>) => ({ request, session, signal: session.signal }) as never;
 * const resp = await cap.handlers["toolkit/configure/req"]!(exchange({
 *   type: "toolkit/configure/req", id: "r1", sessionId: "", toolkitName: "github", config: { token: "ghp_1" },
 * }));
 * assert.equal(resp.status, "ok");
 * const list = await cap.handlers["toolkit/list/req"]!(exchange({ type: "toolkit/list/req", id: "r2", filterKind: "", filterTags: [] }));
 * assert.equal(list.toolkits[0]?.configured, true);
 * ```
 */
export function createToolkitsCapability(
  options: ToolkitsCapabilityOptions,
): Capability {
  const { registry, configs } = options;
  // The kit as this session may see it, or null when it may see none of it.
  const visible = (
    snapshot: RegistrySnapshot,
    kit: ToolkitEntry,
    token: string,
  ): ToolkitEntry | null => {
    if (!options.tools || kit.tools.length === 0) return kit;
    const rules = options.tools;
    const tools = kit.tools.filter((name) => {
      const tool = snapshot.tools.get(name);
      return tool !== undefined && checkToolPolicy(rules, tool, token).allowed;
    });
    if (tools.length === 0) return null;
    return tools.length === kit.tools.length ? kit : { ...kit, tools };
  };
  return {
    name: "toolkits",
    handlers: {
      "toolkit/list/req": ({ request, session }) => {
        const kind = request.filterKind;
        const toolkits: Toolkit[] = [];
        const snapshot = registry.snapshot;
        for (const entry of snapshot.toolkits.values()) {
          const kit = visible(snapshot, entry, session.token);
          if (kit === null) continue;
          if (kind !== "" && kit.origin !== kind && kit.category !== kind) {
            continue;
          }
          if (!hasAllTags(kit, request.filterTags)) continue;
          toolkits.push(
            toDefinition(kit, configs.resolve(session, kit).configured),
          );
        }
        toolkits.sort((a, b) => compareCodeUnits(a.name, b.name));
        return Promise.resolve({ toolkits });
      },
      "toolkit/configure/req": ({ request, session }) => {
        const name = request.toolkitName;
        const answer = (status: "ok" | "error", message: string | null) =>
          Promise.resolve<ToolkitConfigureResponse>({
            toolkitName: name,
            status,
            message,
          });
        if (name === "") {
          return answer(
            "error",
            'Cannot configure a toolkit: "toolkit_name" is empty',
          );
        }
        const snapshot = registry.snapshot;
        const listed = snapshot.toolkits.get(name);
        const kit = listed && visible(snapshot, listed, session.token);
        const problem = kit
          ? configs.configure(session, kit, request.config)
          : snapshot.blocked.get(name) || "no such toolkit";
        return problem === null
          ? answer("ok", null)
          : answer("error", `Cannot configure toolkit "${name}": ${problem}`);
      },
    },
  };
}

/**
 * Builds the toolkit as listed.
 *
 * @param kit the registry entry
 * @param configured whether the calling session has it configured
 * @returns the definition, secrets' defaults stripped from `schema`
 * @example
 * ```ts
 * import { toDefinition } from "./capability.ts";
 * import assert from "node:assert/strict";
 * const def = toDefinition({
 *   kind: "toolkit", name: "fs", alias: "files", description: "", category: "", tags: [],
 *   iconSvg: null, version: "2.0.0", tools: ["read_file"], path: "/s/fs/toolkit.ts",
 *   export: "default", hash: "h", origin: "builtin", configSchema: {}, permissions: {},
 * }, false);
 * assert.equal(def.alias, "files");
 * assert.deepEqual(def.tools, ["read_file"]);
 * ```
 */
export function toDefinition(
  kit: ToolkitEntry,
  configured: boolean,
): Toolkit {
  return {
    name: kit.name,
    alias: kit.alias,
    description: kit.description,
    category: kit.category,
    tags: [...kit.tags],
    iconSvg: kit.iconSvg,
    schema: publicSchema(kit.configSchema),
    tools: [...kit.tools],
    configured,
    version: kit.version,
  };
}
