/**
 * The A2E `skill` capability: `skill/discover/req` and `skill/call/req`.
 *
 * Wiring, in the host:
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

import { basename, dirname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Capability, OutgoingMessage } from "../capability.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { checkGrant, resolvePermissionPaths } from "../sandbox/permissions.ts";
import type { Policy } from "../sandbox/permissions.ts";
import { output, type Permissions } from "../../sandbox/sdk/types.ts";
import type { ToolCaller } from "../tools/call.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import { envelope, nowSeconds } from "../../protocol/envelope.ts";
import type { LLMConfig, SkillDefinition } from "../../protocol/models.ts";
import type { RegistrySnapshot, SkillEntry } from "../registry/types.ts";
import {
  createProvider,
  type LlmConfig,
  resolveLlmConfig,
} from "../llm/config.ts";
import {
  codeSkillRecord,
  failedSkillRecord,
  instructionSkillRecord,
  resolveSkillStatus,
  type SkillRecord,
  skillSource,
} from "./definition.ts";
import {
  type LlmResolver,
  runSkill,
  type SkillLimits,
  type SkillToolHost,
} from "./run.ts";
import {
  findSkillFile,
  loadSkillFolder,
  type SkillFolder,
} from "./skill_md.ts";

/** Where the skills capability gets its skills. */
export interface SkillCatalog {
  /** Every skill now; called per request so hot reloads show at once. */
  skills(): Promise<readonly SkillRecord[]>;
}

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
}

/**
 * Creates the `skill` capability.
 *
 * @param options the catalog, tools, sandbox, LLM and limits
 * @returns the capability (name `skill`)
 * @example Discover one skill
 * ```ts
 * import { createSkillsCapability } from "./capability.ts";
 * import { codeSkillRecord } from "./definition.ts";
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
 *   request: { type: "skill/discover/req", id: "r", filter_tags: ["data"], filter_categories: [] },
 *   session, signal: session.signal,
 * });
 * assert.equal((resp.skills as { name: string }[])[0]?.name, "a");
 * ```
 */
export function createSkillsCapability(
  options: SkillsCapabilityOptions,
): Capability {
  const archived = new Set(options.archived ?? []);
  const llm = options.llm ?? hostLlm([]);
  const current = async (): Promise<
    { record: SkillRecord; definition: SkillDefinition }[]
  > => {
    const records = await options.catalog.skills();
    return records.map((record) => ({
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
      "skill/discover/req": async ({ request }): Promise<OutgoingMessage> => {
        const tags = request.filter_tags.map((t) => t.toLowerCase());
        const categories = request.filter_categories.map((c) =>
          c.toLowerCase()
        );
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
        return envelope("skill/discover/resp", {
          req_id: request.id,
          skills,
        });
      },
      "skill/call/req": async (
        { request, session, signal },
      ): Promise<OutgoingMessage> => {
        const found = (await current()).find((s) =>
          s.definition.name === request.name
        );
        if (!found || found.definition.status === "Archived") {
          return envelope("skill/call/resp", {
            req_id: request.id,
            name: request.name,
            data: null,
            error: {
              code: "unknown_skill",
              message: found
                ? `Skill "${request.name}" is archived`
                : `Unknown skill "${request.name}"`,
              retryable: false,
            },
            created_at: nowSeconds(),
          });
        }
        const result = await runSkill(found.record, found.definition, {
          reqId: request.id,
          arguments: request.arguments,
          timeout: request.timeout,
          streaming: request.streaming,
          llmOverride: request.llm_override as LLMConfig | null,
          metadata: request.metadata,
          session,
          signal,
          tools: options.tools,
          sandbox: options.sandbox,
          llm,
          limits: options.limits,
        });
        return envelope("skill/call/resp", {
          req_id: request.id,
          name: request.name,
          data: result,
          error: null,
          created_at: nowSeconds(),
        });
      },
    },
  };
}

/**
 * An {@link LlmResolver} over the host's `llm` entries (`skillbox.jsonc`):
 * `llm_override`, else the skill's `llm_config`, else the host default, with
 * credentials kept in the host (see `runtime/llm/config.ts`).
 *
 * @param host the `llm` entries
 * @param options an env reader for `api_key_env`. @default Deno.env.get
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
  options: { env?: (name: string) => string | undefined } = {},
): LlmResolver {
  // One provider (one SDK client, one connection pool) per distinct
  // choice: a fresh client per call would pay connection setup every time.
  const providers = new Map<string, ReturnType<typeof createProvider>>();
  return ({ override, skill }) => {
    const resolved = resolveLlmConfig(host, {
      override: override as LlmConfig | null,
      skill: skill as LlmConfig | null,
      env: options.env,
    });
    const key = JSON.stringify(resolved);
    let provider = providers.get(key);
    if (!provider) {
      if (providers.size >= 32) providers.clear(); // overrides are unbounded
      provider = createProvider(resolved);
      providers.set(key, provider);
    }
    return provider;
  };
}

/**
 * The folder of skillbox's own skills: what is found here is `system`. Empty
 * when skillbox itself was loaded from a remote URL (e.g. JSR), where there
 * is no folder to scan.
 */
export const SYSTEM_SKILLS_DIR: string = import.meta.url.startsWith("file:")
  ? fileURLToPath(new URL("../../skills", import.meta.url))
  : "";

/** Options for {@link registryCatalog}. */
export interface RegistryCatalogOptions {
  /** The live registry (its `snapshot` is read on every request). */
  registry: { readonly snapshot: RegistrySnapshot };
  /** The permission cap code skills are checked against. @default {} (own folder only) */
  policy?: Policy;
  /** The operator's home directory, for `source: "user"`. @default $HOME */
  home?: string | null;
  /** Folders whose skills are `system`. @default [SYSTEM_SKILLS_DIR] */
  systemDirs?: readonly string[];
}

/**
 * A catalog over the registry: its code skills, plus its Agent Skills
 * folders loaded here (cached by `SKILL.md` size and mtime, so a hot reload
 * of one folder re-reads only that folder). Code skills' permissions are
 * resolved against their folder and checked against the policy; a skill
 * asking for more is Blocked with the permission named.
 *
 * @param options the registry and policy
 * @returns the catalog
 * @example A registry snapshot with one Agent Skills folder
 * ```ts
 * import { registryCatalog } from "./capability.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: notes\ndescription: Notes\n---\nBe brief.");
 * const snapshot = { generation: 1, tools: new Map(), toolkits: new Map(), skills: new Map(),
 *   blocked: new Map(), agentSkills: [dir], errors: [] };
 * const catalog = registryCatalog({ registry: { snapshot }, home: null });
 * const [skill] = await catalog.skills();
 * assert.equal(skill?.definition.name, "notes");
 * assert.equal(skill?.definition.source, "project");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function registryCatalog(options: RegistryCatalogOptions): SkillCatalog {
  const cache = new Map<
    string,
    {
      stamp: string;
      file: string;
      folder: SkillFolder | null;
      error: string | null;
    }
  >();
  const systemDirs = (options.systemDirs ?? [SYSTEM_SKILLS_DIR]).filter((d) =>
    d !== ""
  ).map((d) => resolve(d));
  const isSystem = (path: string) =>
    systemDirs.some((d) => path === d || path.startsWith(d + sep));
  const sourceOf = (path: string, origin: "file" | "builtin") =>
    skillSource(path, {
      origin: origin === "builtin" || isSystem(path) ? "builtin" : "file",
      home: options.home,
    });

  const loadFolder = async (dir: string) => {
    let stamp = "missing";
    let file = "SKILL.md";
    try {
      file = (await findSkillFile(dir))?.name ?? file;
      const info = await Deno.stat(`${dir}/${file}`);
      stamp = `${file}:${info.size}:${info.mtime?.getTime() ?? 0}`;
    } catch {
      // loadSkillFolder reports the missing file
    }
    const hit = cache.get(dir);
    if (hit && hit.stamp === stamp) return hit;
    let entry: {
      stamp: string;
      file: string;
      folder: SkillFolder | null;
      error: string | null;
    };
    try {
      entry = { stamp, file, folder: await loadSkillFolder(dir), error: null };
    } catch (error) {
      entry = {
        stamp,
        file,
        folder: null,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    cache.set(dir, entry);
    return entry;
  };

  return {
    async skills() {
      const snapshot = options.registry.snapshot;
      const records: SkillRecord[] = [];
      for (const entry of snapshot.skills.values()) {
        records.push(
          codeRecord(entry, sourceOf(entry.path, entry.origin), options.policy),
        );
      }
      const folders = await Promise.all(snapshot.agentSkills.map(loadFolder));
      snapshot.agentSkills.forEach((dir, i) => {
        const loaded = folders[i]!;
        const source = sourceOf(dir, "file");
        records.push(
          loaded.folder
            ? instructionSkillRecord(loaded.folder, { source })
            : failedSkillRecord(basename(dir), {
              path: `${dir}${sep}${loaded.file}`,
              message: loaded.error ?? "Cannot load SKILL.md",
              source,
            }),
        );
      });
      // Names clashing in the registry, or between a module and a folder,
      // are served by neither, like tools.
      for (const [name, reason] of snapshot.blocked) {
        if (/^Skill name/.test(reason)) {
          records.push(
            failedSkillRecord(name, {
              path: "",
              message: reason,
              source: "project",
            }),
          );
        }
      }
      const byName = new Map<string, SkillRecord[]>();
      for (const r of records) {
        byName.set(r.definition.name, [
          ...(byName.get(r.definition.name) ?? []),
          r,
        ]);
      }
      return [...byName.values()].map((list) =>
        list.length === 1 ? list[0]! : clash(list)
      );
    },
  };
}

function codeRecord(
  entry: SkillEntry,
  source: ReturnType<typeof skillSource>,
  policy: Policy | undefined,
): SkillRecord {
  const folder = dirname(entry.path);
  let grant: Permissions | undefined;
  let denied: string | null = null;
  if (entry.permissions === "dynamic") {
    // A skill has no toolkit configuration to compute permissions from.
    denied =
      `Skill "${entry.name}" computes its permissions from configuration, which skills do not have`;
  } else {
    const check = checkGrant(
      resolvePermissionPaths(entry.permissions, folder),
      { modulePath: entry.path, policy },
    );
    if (check.ok) grant = check.grant;
    else denied = check.reason;
  }
  return codeSkillRecord(entry, { source, grant, denied });
}

function clash(list: SkillRecord[]): SkillRecord {
  const first = list[0]!;
  const where = list.map((r) => `"${r.definition.file_path ?? "?"}"`).join(
    " and ",
  );
  return failedSkillRecord(first.definition.name, {
    path: first.definition.file_path ?? "",
    message:
      `Skill name "${first.definition.name}" is defined in ${where}: neither is served`,
    source: first.definition.source as ReturnType<typeof skillSource>,
  });
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
 * import { registryToolHost } from "./capability.ts";
 * import { toolResult } from "../../protocol/models.ts";
 * import assert from "node:assert/strict";
 * const tool = { kind: "tool", name: "grep", description: "Search", inputSchema: { type: "object" },
 *   toolkit: "filesystem", prompt: "" };
 * const snapshot = { generation: 1, tools: new Map([["grep", tool]]),
 *   toolkits: new Map([["filesystem", { tools: ["grep"] }]]), skills: new Map(),
 *   blocked: new Map(), agentSkills: [], errors: [] };
 * const host = registryToolHost({
 *   registry: { snapshot } as never,
 *   caller: { call: (req) => Promise.resolve({ breakLoop: false, entry: tool as never,
 *     result: toolResult({ success: true, tool_name: req.name, duration_ms: 1, data: { hits: 2 } }) }) },
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
    tool(name) {
      const t = options.registry.snapshot.tools.get(name);
      return t
        ? {
          name: t.name,
          description: t.description,
          input_schema: t.inputSchema,
          toolkit: t.toolkit,
          prompt: t.prompt,
        }
        : undefined;
    },
    toolkit(name) {
      const k = options.registry.snapshot.toolkits.get(name);
      return k ? { tools: k.tools } : undefined;
    },
    async call(name, args, { session, signal, timeoutMs, onEvent }) {
      const { result, breakLoop } = await options.caller.call({
        name,
        args,
        session,
        signal,
        timeoutSeconds: Math.max(0.001, timeoutMs / 1000),
        onEvent: onEvent && ((event) => onEvent(event.kind, event.data)),
      });
      if (!result.success) {
        return {
          ok: false,
          code: (result.error_code ?? "tool_error") as ErrorCode,
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
