/**
 * Turns what the sandbox read out of modules into one registry snapshot:
 * checks each definition's fields, assigns tools to toolkits, and reports
 * name clashes and broken files instead of letting one definition win.
 *
 * @module
 */

import { dirname, relative } from "node:path";
import { z } from "zod";
import type { DescribedDefinition, DescribedModule } from "../sandbox/types.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { describeZodError } from "../../protocol/messages.ts";
import type {
  Origin,
  RegistryError,
  RegistrySnapshot,
  SkillEntry,
  ToolEntry,
  ToolkitEntry,
} from "./types.ts";

/** A module as read by the sandbox, with where it was found. */
export interface LoadedModule {
  readonly module: DescribedModule;
  readonly origin: Origin;
  /** The skills folder it was found under (toolkit folders stop there). */
  readonly root: string;
}

/** Inputs of {@link buildSnapshot} besides the modules. */
export interface BuildOptions {
  /** The new snapshot's generation. @default 0 */
  generation?: number;
  /** Agent Skills folders found by the scan. @default [] */
  agentSkills?: readonly string[];
  /** Errors met before describing (unreadable folders). @default [] */
  errors?: readonly RegistryError[];
}

// Tool names end up as function names in LLM APIs, which accept only these.
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const schemaField = z.record(z.string(), z.unknown());
const tags = z.array(z.string()).default([]);

const ToolFields = z.object({
  description: z.string().default(""),
  version: z.string().default("1.0.0"),
  tags,
  input: schemaField.optional(),
  input_schema: schemaField.optional(),
  output: schemaField.optional(),
  output_schema: schemaField.optional(),
  streaming: z.boolean().default(true),
  idempotent: z.boolean().default(false),
  defer_loading: z.boolean().default(false),
  toolkit: z.string().nullable().optional(),
  prompt: z.string().default(""),
  isolation: z.enum(["warm", "per-call"]).default("warm"),
  runs_client_code: z.boolean().default(false),
});

const ToolkitFields = z.object({
  alias: z.string().default(""),
  description: z.string().default(""),
  category: z.string().default(""),
  tags,
  icon_svg: z.string().nullable().default(null),
  version: z.string().default("1.0.0"),
  config: schemaField.optional(),
  tools: z.array(z.string()).default([]),
});

type Candidate<T> = { entry: T; listed: readonly string[] };

/**
 * Builds a snapshot from described modules. Never throws for bad modules:
 * each problem becomes a {@link RegistryError} and the rest is served.
 *
 * Toolkit membership, first match wins: the tool's own `toolkit` field; the
 * toolkit defined in the tool's folder or the nearest folder above it (below
 * the skills folder itself); a toolkit that lists the tool in its `tools`.
 *
 * @param modules every module read, in any order
 * @param options generation, Agent Skills folders, earlier errors
 * @returns a frozen snapshot with entries sorted by name
 * @example Two files defining the same tool: neither is served
 * ```ts
 * import { buildSnapshot } from "./normalize.ts";
 * import assert from "node:assert/strict";
 * const mod = (path: string) => ({
 *   origin: "file" as const,
 *   root: "/s",
 *   module: {
 *     path, hash: "h", error: null,
 *     definitions: [{ export: "default", kind: "tool" as const, name: "echo",
 *       fields: { description: "Echo" }, permissions: {}, runnable: true }],
 *   },
 * });
 * const snap = buildSnapshot([mod("/s/a.ts"), mod("/s/b.ts")]);
 * assert.equal(snap.tools.size, 0);
 * assert.match(snap.blocked.get("echo") ?? "", /"\/s\/a.ts" and "\/s\/b.ts"/);
 * assert.equal(snap.errors.length, 2);
 * ```
 */
export function buildSnapshot(
  modules: readonly LoadedModule[],
  options: BuildOptions = {},
): RegistrySnapshot {
  const errors: RegistryError[] = [...(options.errors ?? [])];
  const { tools, explicitKit, kits, skills, roots } = collect(
    modules,
    errors,
  );

  const blocked = new Map<string, string>();
  const uniqueTools = dedupe("Tool", tools, blocked, errors);
  const uniqueKits = dedupe("Toolkit", kits, blocked, errors);
  const uniqueSkills = dedupe("Skill", skills, blocked, errors);

  const kitByDir = toolkitsByFolder(uniqueKits.values(), errors);
  const listedBy = new Map<string, string>();
  for (const { entry, listed } of uniqueKits.values()) {
    for (const name of listed) {
      if (!listedBy.has(name)) listedBy.set(name, entry.name);
    }
  }

  const toolMap = new Map<string, ToolEntry>();
  const members = new Map<string, string[]>();
  for (const { entry } of sortByName(uniqueTools)) {
    const toolkit = explicitKit.get(entry) ??
      folderKit(entry.path, roots.get(entry.path) ?? "/", kitByDir) ??
      listedBy.get(entry.name) ?? null;
    toolMap.set(entry.name, Object.freeze({ ...entry, toolkit }));
    if (toolkit !== null) {
      const list = members.get(toolkit) ?? [];
      list.push(entry.name);
      members.set(toolkit, list);
    }
  }
  const kitMap = new Map<string, ToolkitEntry>();
  for (const { entry } of sortByName(uniqueKits)) {
    const names = (members.get(entry.name) ?? []).sort();
    kitMap.set(
      entry.name,
      Object.freeze({ ...entry, tools: Object.freeze(names) }),
    );
  }
  const skillMap = new Map<string, SkillEntry>();
  for (const { entry } of sortByName(uniqueSkills)) {
    skillMap.set(entry.name, entry);
  }

  return Object.freeze({
    generation: options.generation ?? 0,
    tools: toolMap,
    toolkits: kitMap,
    skills: skillMap,
    blocked,
    agentSkills: Object.freeze([...(options.agentSkills ?? [])].sort()),
    errors: Object.freeze(errors),
  });
}

// Every definition of every module, as candidates (names still to be made
// unique), in path order; refused ones are told to `errors`.
function collect(modules: readonly LoadedModule[], errors: RegistryError[]) {
  const tools: Candidate<Omit<ToolEntry, "toolkit">>[] = [];
  const explicitKit = new Map<Omit<ToolEntry, "toolkit">, string | null>();
  const kits: Candidate<Omit<ToolkitEntry, "tools">>[] = [];
  const skills: Candidate<SkillEntry>[] = [];
  const roots = new Map<string, string>();

  const sorted = [...modules].sort((a, b) =>
    a.module.path < b.module.path ? -1 : a.module.path > b.module.path ? 1 : 0
  );
  for (const { module, origin, root } of sorted) {
    roots.set(module.path, root);
    if (module.error !== null) {
      errors.push({
        path: module.path,
        name: null,
        message: `Cannot load "${module.path}": ${module.error}`,
      });
      continue;
    }
    for (const def of module.definitions) {
      const ref = {
        path: module.path,
        export: def.export,
        hash: module.hash,
        origin,
      };
      const fail = (message: string) =>
        errors.push({ path: module.path, name: def.name, message });
      if (typeof def.name !== "string" || !NAME.test(def.name)) {
        fail(
          `Cannot load ${def.kind} "${def.name}" from "${module.path}": ` +
            "a name needs 1 to 64 letters, digits, _ . or -",
        );
        continue;
      }
      if (def.kind === "tool") {
        const tool = toolCandidate(def, ref, module.path);
        if (typeof tool === "string") {
          fail(tool);
          continue;
        }
        explicitKit.set(tool.entry, tool.toolkit);
        tools.push({ entry: tool.entry, listed: [] });
      } else if (def.kind === "toolkit") {
        const kit = toolkitCandidate(def, ref, module.path);
        if (typeof kit === "string") {
          fail(kit);
          continue;
        }
        kits.push(kit);
      } else if (def.kind === "skill") {
        skills.push({
          entry: Object.freeze({
            ...ref,
            kind: "skill" as const,
            name: def.name,
            fields: Object.freeze({ ...def.fields }),
            permissions: def.permissions as Permissions | "dynamic",
            runnable: def.runnable,
          }),
          listed: [],
        });
      } else {
        fail(
          `Cannot load "${String(def.name)}" from "${module.path}": ` +
            `unknown kind "${String((def as { kind: unknown }).kind)}"`,
        );
      }
    }
  }
  return { tools, explicitKit, kits, skills, roots };
}

type ModuleRef = {
  path: string;
  export: string;
  hash: string;
  origin: Origin;
};
type ToolCandidate = Omit<ToolEntry, "toolkit">;

// A tool definition's entry and its explicit toolkit, or why it is refused.
function toolCandidate(
  def: DescribedDefinition,
  ref: ModuleRef,
  path: string,
): { entry: ToolCandidate; toolkit: string | null } | string {
  const parsed = ToolFields.safeParse(def.fields);
  if (!parsed.success) {
    return `Cannot load tool "${def.name}" from "${path}": ` +
      describeZodError(parsed.error);
  }
  if (!def.runnable) {
    return `Cannot load tool "${def.name}" from "${path}": it has no "run" function`;
  }
  const f = parsed.data;
  const entry = {
    ...ref,
    kind: "tool" as const,
    name: def.name,
    description: f.description,
    version: f.version,
    tags: Object.freeze([...f.tags]),
    inputSchema: f.input ?? f.input_schema ??
      { type: "object", properties: {} },
    outputSchema: f.output ?? f.output_schema ?? {},
    streaming: f.streaming,
    idempotent: f.idempotent,
    deferLoading: f.defer_loading,
    prompt: f.prompt,
    permissions: def.permissions,
    isolation: f.isolation,
    runsClientCode: f.runs_client_code,
  };
  return { entry, toolkit: f.toolkit ? f.toolkit : null };
}

// A toolkit definition's entry and the tools it lists, or why it is refused.
function toolkitCandidate(
  def: DescribedDefinition,
  ref: ModuleRef,
  path: string,
): Candidate<Omit<ToolkitEntry, "tools">> | string {
  const parsed = ToolkitFields.safeParse(def.fields);
  if (!parsed.success) {
    return `Cannot load toolkit "${def.name}" from "${path}": ` +
      describeZodError(parsed.error);
  }
  const f = parsed.data;
  return {
    entry: {
      ...ref,
      kind: "toolkit",
      name: def.name,
      alias: f.alias,
      description: f.description,
      category: f.category,
      tags: Object.freeze([...f.tags]),
      iconSvg: f.icon_svg,
      version: f.version,
      configSchema: f.config ?? {},
      permissions: def.permissions,
    },
    listed: f.tools,
  };
}

// Folder convention: a folder holding exactly one toolkit owns the tools in
// it and below it (null: a folder with two, which own nothing).
function toolkitsByFolder(
  kits: Iterable<Candidate<Omit<ToolkitEntry, "tools">>>,
  errors: RegistryError[],
): Map<string, string | null> {
  const kitByDir = new Map<string, string | null>();
  for (const { entry } of kits) {
    const dir = dirname(entry.path);
    const other = kitByDir.get(dir);
    if (other === undefined) kitByDir.set(dir, entry.name);
    else if (other !== null) {
      kitByDir.set(dir, null);
      errors.push({
        path: entry.path,
        name: entry.name,
        message: `Folder "${dir}" holds two toolkits "${other}" and ` +
          `"${entry.name}": its tools need an explicit "toolkit" field`,
      });
    }
  }
  return kitByDir;
}

function dedupe<T extends { name: string; path: string }>(
  label: string,
  candidates: Candidate<T>[],
  blocked: Map<string, string>,
  errors: RegistryError[],
): Map<string, Candidate<T>> {
  const byName = new Map<string, Candidate<T>[]>();
  for (const c of candidates) {
    const list = byName.get(c.entry.name) ?? [];
    list.push(c);
    byName.set(c.entry.name, list);
  }
  const unique = new Map<string, Candidate<T>>();
  for (const [name, list] of byName) {
    if (list.length === 1) {
      unique.set(name, list[0]!);
      continue;
    }
    const paths = list.map((c) => `"${c.entry.path}"`);
    const where = paths.length === 2
      ? `${paths[0]} and ${paths[1]}`
      : `${paths.slice(0, -1).join(", ")} and ${paths.at(-1)}`;
    const message =
      `${label} name "${name}" is defined in ${where}: neither is served`;
    blocked.set(name, message);
    for (const c of list) {
      errors.push({ path: c.entry.path, name, message });
    }
  }
  return unique;
}

function folderKit(
  path: string,
  root: string,
  kitByDir: Map<string, string | null>,
): string | null {
  // The skills folder itself is not a toolkit folder: a toolkit module at the
  // top would otherwise claim every loose tool.
  for (let dir = dirname(path);; dir = dirname(dir)) {
    const rel = relative(root, dir);
    if (rel === "" || rel.startsWith("..") || dirname(dir) === dir) return null;
    const kit = kitByDir.get(dir);
    if (kit !== undefined) return kit;
  }
}

function sortByName<T extends { name: string }>(
  map: Map<string, Candidate<T>>,
): Candidate<T>[] {
  return [...map.values()].sort((a, b) =>
    a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0
  );
}
