/**
 * `code_api`, answered by the host: the TypeScript declarations of what
 * `run_code`'s `tools` and `skills` globals hold for the calling session.
 *
 * The tool is an ordinary registry entry (`skills/code/code_api.ts`, in the
 * `code` toolkit), so a call of it takes the one call path: the policy,
 * argument validation, the run history and events. Only the last step
 * differs: where another tool's call goes to a sandbox, the tool caller
 * sends the shipped `code_api`'s to the {@link CodeApi} (a hosted tool,
 * known by its registry entry), which answers it in the host, reading the
 * registry as the calling session sees it.
 *
 * What a session may call, and so what is declared: the registry's tools
 * (deferred ones included) that the policy lets the session's token call,
 * whose static grant the permission cap allows, and whose toolkit the
 * session's configuration makes runnable; never `run_code` itself. Skills:
 * every `Published` one. A `query` narrows both with the BM25 index the
 * host's tool search uses.
 *
 * @module
 */

import type { SessionScope } from "../capability.ts";
import { output } from "../../protocol/output.ts";
import type { Skill } from "../../protocol/skill.ts";
import { tool } from "../../protocol/tool.ts";
import type { Registry } from "../registry/registry.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import { resolveSkillStatus, type SkillCatalog } from "../skills/catalog.ts";
import { ToolIndex } from "../search/tool_index.ts";
import type { SandboxOutcome } from "../sandbox/types.ts";
import type { ToolkitConfigs } from "../toolkits/configs.ts";
import type { HostedCall, HostedTool } from "../tools/call.ts";
import {
  checkToolPolicy,
  type HostPolicy,
  toolStatuses,
} from "../tools/policy.ts";
import { reindex } from "../tools/capability.ts";
import { compareCodeUnits } from "../tools/filter.ts";
import { renderDeclarations } from "./declarations.ts";
import { CODE_TOOL } from "./inner_calls.ts";

/**
 * The tool's name: the shipped entry of that name is answered by the host
 * (a drop-in cannot take it from the shipped one, and a drop-in of another
 * name is a plain tool wherever its file sits).
 */
export const CODE_API_TOOL = "code_api";

// How many tools (and skills) a query declares when it names no limit.
const DEFAULT_QUERY_LIMIT = 20;

// The declarations' text bound: what a model reads in one answer.
const LIMITS = { maxChars: 128 * 1024 };

/** Options of {@link createCodeApi}. */
export interface CodeApiOptions {
  /** The live registry; the search index follows its changes. */
  registry: Pick<Registry, "snapshot" | "onChange">;
  /** The host policy: tool rules and the permission cap. */
  policy: Pick<HostPolicy, "tools" | "permissions">;
  /** The sessions' toolkit configurations. */
  configs: Pick<ToolkitConfigs, "resolve">;
  /** The skills a session may call now (`Published`). @default none */
  skills?: () => Promise<readonly Skill[]>;
}

/** What a session asks. */
export interface CodeApiRequest {
  /** The session whose view is declared. */
  session: SessionScope;
  /** Words narrowing the answer; empty: everything. @default "" */
  query?: string;
  /** With a query, how many tools and skills at most. @default 20 */
  limit?: number;
}

/** The answer (the tool's result `data`, wire names). */
export interface CodeApiAnswer {
  /** The TypeScript declarations. */
  declarations: string;
  /** The tools declared. */
  tools: string[];
  /** The skills declared. */
  skills: string[];
  /** Left out to keep the text within its bound. */
  omitted: number;
}

/**
 * Declares sessions' code APIs; as a hosted tool, answers the shipped
 * `code_api`'s calls for the session making each.
 */
export interface CodeApi extends HostedTool {
  /**
   * The declarations for one session now.
   *
   * @returns the declarations and what they hold
   */
  declare(request: CodeApiRequest): Promise<CodeApiAnswer>;
  /** Stops following the registry. */
  close(): void;
}

const NO_RULES = { allow: [], deny: [], tokens: {} };

/**
 * Creates the host's `code_api` answerer.
 *
 * @param options the registry, policy, configurations and skills
 * @returns the answerer
 * @example A tool the policy denies to the session is not declared
 * ```ts
 * import { createCodeApi } from "./code_api.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import { createToolkitConfigs } from "../toolkits/configs.ts";
 * import { parseHostPolicy } from "../tools/policy.ts";
 * import assert from "node:assert/strict";
 * const def = (name: string) => ({ export: name, kind: "tool" as const, name, permissions: {}, runnable: true,
 *   fields: { description: `Tool ${name}`, input: { type: "object", properties: { n: { type: "number" } } } } });
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/t.ts", hash: "h", error: null, definitions: [def("open"), def("shut")] } }]);
 * const api = createCodeApi({
 *   registry: { snapshot, onChange: () => () => {} },
 *   policy: parseHostPolicy({ tools: { deny: ["shut"] } }),
 *   configs: createToolkitConfigs(),
 * });
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const answer = await api.declare({ session });
 * assert.deepEqual(answer.tools, ["open"]);
 * assert.match(answer.declarations, /open: \(args\?: \{/);
 * api.close();
 * ```
 */
export function createCodeApi(options: CodeApiOptions): CodeApi {
  const { registry, policy, configs } = options;
  // The search index is built on the first query, then follows reloads.
  let index: ToolIndex<ToolEntry> | null = null;
  const unsubscribe = registry.onChange((change) => {
    if (index) reindex(index, change);
  });
  const refusedBySnapshot = new WeakMap<RegistrySnapshot, Set<string>>();
  // Tools whose static grant the permission cap refuses (`tool_denied` on
  // every call): one pass per snapshot.
  const refused = (snapshot: RegistrySnapshot) =>
    refusedBySnapshot.getOrInsertComputed(snapshot, () =>
      new Set(
        toolStatuses(snapshot, {
          tools: NO_RULES,
          permissions: policy.permissions,
        }).filter((s) => s.status === "blocked").map((s) => s.name),
      ));

  const declare = async (
    request: CodeApiRequest,
  ): Promise<CodeApiAnswer> => {
    const query = (request.query ?? "").trim();
    const limit = query === ""
      ? Infinity
      : Math.max(1, Math.floor(request.limit ?? DEFAULT_QUERY_LIMIT));
    const snapshot = registry.snapshot;
    const candidates = query === ""
      ? [...snapshot.tools.values()].sort(byName)
      : (index ??= new ToolIndex([...snapshot.tools.values()]))
        .search(query, { includeDeferred: true })
        .map((hit) => hit.entry);
    const view = sessionTools(candidates, {
      snapshot,
      session: request.session,
      policy,
      configs,
      refused: refused(snapshot),
      limit,
    });
    const published = (await options.skills?.() ?? []).filter((s) =>
      s.status === "Published"
    );
    const skills = query === ""
      ? [...published].sort(byName)
      : searchSkills(published, query, limit);
    const { text, ...declared } = renderDeclarations({
      tools: view.tools,
      skills,
      header: header(view.tools.length, skills.length, query),
      notes: view.notes,
    }, LIMITS);
    return { declarations: text, ...declared };
  };
  return {
    declare,
    run({ call, request }: HostedCall): Promise<SandboxOutcome> {
      const args = call.args as { query?: string; limit?: number };
      return declare({
        session: request.session,
        query: args.query,
        limit: args.limit,
      }).then((answer): SandboxOutcome => ({
        ok: true,
        // The declarations are what a model reads: the summary (an MCP
        // client's text) is the text itself.
        value: output({ data: answer, summary: answer.declarations }),
        truncated: false,
      }));
    },
    close: unsubscribe,
  };
}

/** What {@link sessionTools} checks a tool against. */
interface SessionView {
  snapshot: RegistrySnapshot;
  session: SessionScope;
  policy: Pick<HostPolicy, "tools">;
  configs: Pick<ToolkitConfigs, "resolve">;
  refused: Set<string>;
  limit: number;
}

// The candidates this session may call now, in order, up to the limit; and
// a note per toolkit whose configuration keeps its tools from running.
function sessionTools(
  candidates: readonly ToolEntry[],
  view: SessionView,
): { tools: ToolEntry[]; notes: string[] } {
  const tools: ToolEntry[] = [];
  const unconfigured = new Map<string, { problem: string; tools: string[] }>();
  for (const entry of candidates) {
    if (tools.length >= view.limit) break;
    // The tool it declares everything for, and never declares.
    if (entry.name === CODE_TOOL) continue;
    if (view.refused.has(entry.name)) continue;
    if (
      !checkToolPolicy(view.policy.tools, entry, view.session.token).allowed
    ) continue;
    const kit = entry.toolkit === null
      ? undefined
      : view.snapshot.toolkits.get(entry.toolkit);
    if (kit) {
      const { problem } = view.configs.resolve(view.session, kit);
      if (problem !== null) {
        const held = unconfigured.get(kit.name) ??
          { problem, tools: [] };
        held.tools.push(entry.name);
        unconfigured.set(kit.name, held);
        continue;
      }
    }
    tools.push(entry);
  }
  const notes = [...unconfigured].map(([name, { problem, tools }]) =>
    `Not declared: the tools of toolkit "${name}" (${
      tools.slice(0, 10).join(", ")
    }${
      tools.length > 10 ? `, and ${tools.length - 10} more` : ""
    }) cannot run until this session configures it (${problem}): send toolkit/configure/req (configure_toolkit over MCP), then ask again.`
  );
  return { tools, notes };
}

// Skills matching the query, best first, through the same BM25 index.
function searchSkills(
  skills: readonly Skill[],
  query: string,
  limit: number,
): Skill[] {
  if (skills.length === 0) return [];
  const byName = new Map(skills.map((s) => [s.name, s]));
  const index = new ToolIndex(skills.map((s) => ({
    ...tool({
      name: s.name,
      description: [s.description, s.whenToUse, ...s.triggers].join(" "),
      inputSchema: s.inputSchema,
      tags: s.tags ?? [],
    }),
    origin: "builtin" as const,
  })));
  return index.search(query, { limit, includeDeferred: true })
    .map((hit) => byName.get(hit.entry.name)!);
}

function header(tools: number, skills: number, query: string): string[] {
  return [
    `What run_code's globals hold for this session: ${tools} tool${
      tools === 1 ? "" : "s"
    } and ${skills} skill${skills === 1 ? "" : "s"}${
      query === "" ? "" : `, those matching the query ${JSON.stringify(query)}`
    }.`,
    "`await tools.<name>(args)` resolves to the tool's result data, `await skills.<name>(args)` to the skill's;",
    "a failed call throws an Error whose `code` is the A2E error code (`tool_denied`, `schema_violation`, ...).",
  ];
}

function byName(a: { name: string }, b: { name: string }): number {
  return compareCodeUnits(a.name, b.name);
}

/**
 * The skills a session may call now, as the skills capability decides
 * their status: the catalog's skills that are `Published`.
 *
 * @param catalog the host's skill catalog
 * @param context the live registry (tools and toolkits a skill needs) and
 *   the names the operator archived
 * @returns the lookup {@link CodeApiOptions.skills} takes
 * @example No skills
 * ```ts
 * import { publishedSkills } from "./code_api.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * const skills = publishedSkills({ skills: () => Promise.resolve([]) },
 *   { registry: { snapshot: buildSnapshot([]) } });
 * assert.deepEqual(await skills(), []);
 * ```
 */
export function publishedSkills(
  catalog: Pick<SkillCatalog, "skills">,
  context: {
    registry: { readonly snapshot: RegistrySnapshot };
    archived?: readonly string[];
  },
): () => Promise<Skill[]> {
  const archived = new Set(context.archived ?? []);
  return async () => {
    const { snapshot } = context.registry;
    return (await catalog.skills()).map((record) =>
      resolveSkillStatus(record, {
        hasTool: (name) => snapshot.tools.has(name),
        hasToolkit: (name) => snapshot.toolkits.has(name),
        archived,
      })
    ).filter((skill) => skill.status === "Published");
  };
}
