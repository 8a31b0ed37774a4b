/**
 * Turns what the sandbox read out of modules into one registry snapshot:
 * checks each definition's fields, assigns tools to toolkits, and reports
 * name clashes and broken files instead of letting one definition win.
 *
 * @module
 */

import { z } from "zod";
import type { DescribedDefinition, DescribedModule } from "../sandbox/types.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { describeZodError } from "../../protocol/request_schemas.ts";
import {
  type Candidate,
  type KitCandidate,
  NameRules,
  refusal,
  type ToolCandidate,
} from "./names.ts";
import { Places } from "./places.ts";
import type {
  Origin,
  RegistryError,
  RegistryRefusal,
  RegistryRoot,
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
  /**
   * The skills folders in precedence order (builtin first, then the
   * config's). @default [] (folders of one origin are then of equal standing)
   */
  roots?: readonly RegistryRoot[];
  /** The snapshot this one replaces: its entries keep their names. */
  previous?: RegistrySnapshot;
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

/**
 * Builds a snapshot from described modules. Never throws for bad modules:
 * each problem becomes a {@link RegistryError} and the rest is served.
 *
 * Trust comes from place. A tool belongs to the toolkit defined in its
 * folder or the nearest folder above it (below the skills folder itself);
 * its `toolkit` field may name that one, or one defined in its own folder
 * (a loose toolkit beside it, an imported server's module); a loose tool may be claimed by
 * a toolkit whose folder holds it (its `tools` list). A `toolkit` field
 * naming any other toolkit refuses the tool, and a `tools` list naming a
 * tool outside the toolkit's folder tree or origin is a refused claim.
 *
 * A name goes to the definition of highest standing: builtin first, then
 * imported MCP servers, then the skills folders in `roots` order; within
 * one folder, the definition that held it in `previous` (a file that
 * appears later with a taken name is the impostor). The others are listed
 * in `refused`. Two definitions of equal standing, neither the holder,
 * block the name: neither is served.
 *
 * @param modules every module read, in any order
 * @param options generation, folders, the snapshot replaced, earlier errors
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
 * // The file that held the name before keeps it; the newcomer is refused.
 * const next = buildSnapshot([mod("/s/a.ts"), mod("/s/b.ts")], {
 *   previous: buildSnapshot([mod("/s/b.ts")]),
 * });
 * assert.equal(next.tools.get("echo")?.path, "/s/b.ts");
 * assert.match(next.refused[0]?.reason ?? "", /^Tool "echo" in "\/s\/a.ts" is refused: the name is taken by "\/s\/b.ts"/);
 * ```
 */
export function buildSnapshot(
  modules: readonly LoadedModule[],
  options: BuildOptions = {},
): RegistrySnapshot {
  const errors: RegistryError[] = [...(options.errors ?? [])];
  const refused: RegistryRefusal[] = [];
  const { tools, explicitKit, kits, skills } = collect(modules, errors);
  const roots = options.roots ?? [];
  const names = new NameRules(roots, options.previous, {
    refused,
    errors,
    broken: brokenModules(modules),
  });
  const blocked = new Map<string, string>();

  const uniqueKits = names.pick("toolkit", kits, blocked);
  const place = new Places(kits, uniqueKits);
  const placed: Candidate<ToolCandidate>[] = [];
  const kitOf = new Map<ToolCandidate, string | null>();
  for (const tool of tools) {
    const toolkit = place.toolkitOf(tool, explicitKit.get(tool.entry) ?? null);
    if (typeof toolkit === "object" && toolkit !== null) {
      refused.push(refusal("tool", tool.entry, toolkit.refused));
      continue;
    }
    kitOf.set(tool.entry, toolkit);
    placed.push(tool);
  }
  const uniqueTools = names.pick("tool", placed, blocked);
  for (const kit of uniqueKits.values()) {
    for (const claim of place.claims(kit, uniqueTools)) {
      if (typeof claim === "string") {
        refused.push(refusal("toolkit", kit.entry, claim));
      } else if (kitOf.get(claim.entry) === null) {
        kitOf.set(claim.entry, kit.entry.name);
      }
    }
  }
  const uniqueSkills = names.pick("skill", skills, blocked);
  for (const r of refused) {
    errors.push({ path: r.path, name: r.name, message: r.reason });
  }
  place.reportCrowdedFolders(errors);

  return Object.freeze({
    generation: options.generation ?? 0,
    ...entryMaps({ uniqueTools, uniqueKits, uniqueSkills, kitOf }),
    blocked,
    agentSkills: Object.freeze([...(options.agentSkills ?? [])].sort()),
    errors: Object.freeze(errors),
    refused: Object.freeze(refused),
    roots: Object.freeze([...roots]),
    holders: names.held,
  });
}

// Modules that failed to load, by path: a name they held stays theirs.
function brokenModules(
  modules: readonly LoadedModule[],
): Map<string, { origin: Origin; root: string }> {
  const broken = new Map<string, { origin: Origin; root: string }>();
  for (const { module, origin, root } of modules) {
    if (module.error !== null) broken.set(module.path, { origin, root });
  }
  return broken;
}

// The served entries, frozen and sorted by name; a toolkit's `tools` are
// its members.
function entryMaps(won: {
  uniqueTools: Map<string, Candidate<ToolCandidate>>;
  uniqueKits: Map<string, KitCandidate>;
  uniqueSkills: Map<string, Candidate<SkillEntry>>;
  kitOf: ReadonlyMap<ToolCandidate, string | null>;
}) {
  const members = new Map<string, string[]>();
  const tools = new Map<string, ToolEntry>();
  for (const { entry } of sortByName(won.uniqueTools)) {
    const toolkit = won.kitOf.get(entry) ?? null;
    tools.set(entry.name, Object.freeze({ ...entry, toolkit }));
    if (toolkit !== null) {
      members.set(toolkit, [...(members.get(toolkit) ?? []), entry.name]);
    }
  }
  const toolkits = new Map<string, ToolkitEntry>();
  for (const { entry } of sortByName(won.uniqueKits)) {
    const list = (members.get(entry.name) ?? []).sort();
    toolkits.set(
      entry.name,
      Object.freeze({ ...entry, tools: Object.freeze(list) }),
    );
  }
  const skills = new Map<string, SkillEntry>();
  for (const { entry } of sortByName(won.uniqueSkills)) {
    skills.set(entry.name, entry);
  }
  return { tools, toolkits, skills };
}

// Every definition of every module, as candidates (names still to be made
// unique), in path order; refused ones are told to `errors`.
function collect(modules: readonly LoadedModule[], errors: RegistryError[]) {
  const tools: Candidate<ToolCandidate>[] = [];
  const explicitKit = new Map<ToolCandidate, string | null>();
  const kits: KitCandidate[] = [];
  const skills: Candidate<SkillEntry>[] = [];

  const sorted = [...modules].sort((a, b) =>
    a.module.path < b.module.path ? -1 : a.module.path > b.module.path ? 1 : 0
  );
  for (const { module, origin, root } of sorted) {
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
        tools.push({ entry: tool.entry, listed: [], root });
      } else if (def.kind === "toolkit") {
        const kit = toolkitCandidate(def, ref, module.path);
        if (typeof kit === "string") {
          fail(kit);
          continue;
        }
        kits.push({ ...kit, root });
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
          root,
        });
      } else {
        fail(
          `Cannot load "${String(def.name)}" from "${module.path}": ` +
            `unknown kind "${String((def as { kind: unknown }).kind)}"`,
        );
      }
    }
  }
  return { tools, explicitKit, kits, skills };
}

type ModuleRef = {
  path: string;
  export: string;
  hash: string;
  origin: Origin;
};
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
): Omit<KitCandidate, "root"> | string {
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

function sortByName<T extends { name: string }>(
  map: Map<string, Candidate<T>>,
): Candidate<T>[] {
  return [...map.values()].sort((a, b) =>
    a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0
  );
}
