/**
 * Turns what the sandbox read out of modules into one registry snapshot:
 * checks each definition's fields, assigns tools to toolkits, and reports
 * name clashes and broken files instead of letting one definition win.
 *
 * Who gets a name several definitions claim ({@link NameRules}): builtin
 * first, then imported MCP servers, then the skills folders in config
 * order, then (within one folder) the definition that held the name before.
 * Trust from place ({@link Places}): a tool's folder gives it its toolkit,
 * and a toolkit's `tools` list claims only loose tools of its own tree.
 * An imported server's namespace ({@link Namespaces}) is closed to drop-ins.
 *
 * @module
 */

import { basename, dirname, relative } from "node:path";
import { z } from "zod";
import type { DescribedDefinition, DescribedModule } from "../sandbox/types.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import { describeZodError } from "../../protocol/request_schemas.ts";
import { MAX_FAN_OUT, schemaFanOut, slowPattern } from "../schema/validator.ts";
import { compareCodeUnits } from "../tools/filter.ts";
import { within } from "../confine/mount_rule.ts";
import type {
  ModuleRef,
  Origin,
  RegistryError,
  RegistryRefusal,
  RegistryRoot,
  RegistrySnapshot,
  SkillEntry,
  ToolEntry,
  ToolkitEntry,
} from "./types.ts";

/** A definition read from a module, its name not yet granted. */
type Candidate<T> = {
  entry: T;
  /** The skills folder its file was found under. */
  root: string;
};
/** A toolkit candidate: the entry before its tools are known. */
type KitCandidate = Candidate<Omit<ToolkitEntry, "tools">> & {
  /** The tools its `tools` list claims. */
  listed: readonly string[];
};
/** A tool candidate: the entry, and its toolkit once its place gives one. */
type ToolCandidate = Candidate<Omit<ToolEntry, "toolkit">> & {
  /** Its `toolkit` field, or null. */
  explicit: string | null;
  /** The toolkit it joins (its place's, or a claim's), or null for none. */
  toolkit: string | null;
};
type Kind = RegistryRefusal["kind"];
type Named = { name: string; path: string; origin: Origin };
/** Where a module was found: its origin and skills folder. */
type FoundIn = { origin: Origin; root: string };

const LABEL: Record<Kind, string> = {
  tool: "Tool",
  toolkit: "Toolkit",
  skill: "Skill",
};

// Shipped code first, then what the operator configured by name (imported
// MCP servers), then the drop-in folders.
const ORIGIN_RANK: Record<Origin, number> = { builtin: 0, mcp: 1, file: 2 };

/**
 * A refusal, frozen.
 *
 * @param kind what was refused
 * @param entry the refused definition (or the toolkit whose claim was)
 * @param reason the sentence saying why
 * @returns the refusal
 */
function refusal(
  kind: Kind,
  entry: Named,
  reason: string,
): RegistryRefusal {
  return Object.freeze({
    kind,
    name: entry.name,
    path: entry.path,
    origin: entry.origin,
    reason,
  });
}

// The refusal of a definition itself (not of a toolkit's claim).
function refusedDefinition(kind: Kind, entry: Named, why: string) {
  const what = `${LABEL[kind]} "${entry.name}" in "${entry.path}"`;
  return refusal(kind, entry, `${what} is refused: ${why}`);
}

/**
 * A definition's file as a reason names it: a shipped one by its place in
 * skillbox's skills folder, an imported server by its name, a drop-in by
 * its absolute path.
 *
 * @param entry the definition's path and origin
 * @param root the skills folder it was found under
 * @returns the words, values quoted
 */
function shown(
  entry: { path: string; origin: Origin },
  root: string,
): string {
  if (entry.origin === "builtin") {
    return `builtin "${basename(root)}/${relative(root, entry.path)}"`;
  }
  if (entry.origin === "mcp") {
    return `MCP server "${entry.path.slice(root.length)}"`;
  }
  return `"${entry.path}"`;
}

/** Where {@link NameRules} reports, and the modules that failed to load. */
type NameOutcomes = {
  refused: RegistryRefusal[];
  errors: RegistryError[];
  broken: ReadonlyMap<string, FoundIn>;
};

/**
 * Who gets a name when several definitions of one kind claim it; the
 * losers are told to `refused`, ties of equal standing to `errors` (and
 * the name blocked).
 */
class NameRules {
  #roots: readonly RegistryRoot[];
  #previous: RegistrySnapshot | undefined;
  #out: NameOutcomes;
  /** Who holds each name now (`kind\0name` to path), for the next load. */
  readonly held = new Map<string, string>();
  /** Names no definition gets, and why. */
  readonly blocked = new Map<string, string>();

  constructor(
    roots: readonly RegistryRoot[],
    previous: RegistrySnapshot | undefined,
    out: NameOutcomes,
  ) {
    this.#roots = roots;
    this.#previous = previous;
    this.#out = out;
  }

  /**
   * Grants each name to one candidate.
   *
   * @param kind the candidates' kind
   * @param candidates every valid definition of that kind
   * @returns the winners by name
   */
  pick<C extends Candidate<Named>>(
    kind: Kind,
    candidates: readonly C[],
  ): Map<string, C> {
    const byName = Map.groupBy(candidates, (c) => c.entry.name);
    const unique = new Map<string, C>();
    for (const [name, list] of byName) {
      const key = `${kind}\0${name}`;
      const holder = this.#previous?.holders?.get(key) ?? null;
      // A holder whose file fails to load for now (an edit half done) still
      // claims its name, at its standing: newcomers of no higher standing
      // are refused.
      const found = holder === null ? undefined : this.#out.broken.get(holder);
      const absent = found && {
        entry: { name, path: holder!, origin: found.origin },
        root: found.root,
      };
      // The folder's standing, then the holder first.
      const rank = (c: Candidate<Named>) =>
        this.#standing(c.entry.origin, c.root) * 2 +
        (c.entry.path === holder ? 0 : 1);
      const ranked = (absent ? [...list, absent] : list)
        .toSorted((a, b) => rank(a) - rank(b));
      const top = ranked.filter((c) => rank(c) === rank(ranked[0]!));
      const kept = absent !== undefined && top[0] === absent;
      let why: string;
      if (kept) {
        this.held.set(key, holder!);
        why = `the name is held by ${
          shown(absent.entry, absent.root)
        }, which failed to load`;
      } else if (top.length === 1) {
        const winner = top[0] as C;
        unique.set(name, winner);
        this.held.set(key, winner.entry.path);
        why = `the name is taken by ${shown(winner.entry, winner.root)}`;
      } else {
        why = `${LABEL[kind]} name "${name}" is defined in ${
          listed(top.map((c) => c.entry.path))
        }: neither is served`;
        this.blocked.set(name, why);
        // In path order already: candidates come in path order, and the
        // ranking's sort is stable.
        for (const c of top) {
          this.#out.errors.push({ path: c.entry.path, name, message: why });
        }
      }
      // Newcomers to a held name are refused in path order.
      for (const c of kept ? list : ranked.slice(top.length)) {
        if (c === absent) continue;
        this.#out.refused.push(refusedDefinition(kind, c.entry, why));
      }
    }
    return unique;
  }

  // Origin, then the folder's place in the config: one number, compared
  // as a number.
  #standing(origin: Origin, root: string): number {
    const index = this.#roots.findIndex((r) =>
      r.path === root && r.origin === origin
    );
    const folders = this.#roots.length + 1;
    return ORIGIN_RANK[origin] * folders +
      (index < 0 ? this.#roots.length : index);
  }
}

function listed(paths: string[]): string {
  const quoted = paths.sort().map((p) => `"${p}"`);
  return `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}

/**
 * Where toolkits are defined, so that a tool's place decides its toolkit
 * and a toolkit's `tools` list claims only loose tools of its own tree.
 */
class Places {
  #byDir: Map<string, KitCandidate[]>;
  #served: ReadonlyMap<string, KitCandidate>;

  constructor(
    all: readonly KitCandidate[],
    served: ReadonlyMap<string, KitCandidate>,
  ) {
    this.#byDir = Map.groupBy(all, (kit) => dirname(kit.entry.path));
    this.#served = served;
  }

  /**
   * The tool's toolkit by place.
   *
   * @param tool the tool
   * @returns the toolkit's name, null for none, or why the tool is refused
   */
  toolkitOf(tool: ToolCandidate): string | null | { refused: string } {
    const { explicit } = tool;
    const folder = this.#folderKits(tool);
    let target: KitCandidate | undefined;
    if (explicit !== null) {
      // Its folder's, or one defined in its own folder even at the top of
      // the skills folder (a loose toolkit beside its loose tools, an
      // imported server's module).
      const named = (k: KitCandidate) => k.entry.name === explicit;
      target = folder.find(named) ??
        this.#kitsIn(dirname(tool.entry.path), tool).find(named) ??
        (folder.length === 0 ? this.#lister(tool, explicit) : undefined);
      if (target === undefined) {
        return { refused: this.#wrongKit(explicit, folder) };
      }
    } else if (folder.length === 1) target = folder[0]!;
    else return null; // none, or two in one folder (reported); claims later
    if (this.#served.get(target.entry.name) !== target) {
      const { name, path } = target.entry;
      return {
        refused: `the toolkit of its folder, "${name}" in "${path}", ` +
          "is not served",
      };
    }
    return target.entry.name;
  }

  /**
   * The tools a toolkit's `tools` list may claim, or why a claim is refused.
   *
   * @param kit the served toolkit
   * @param tools the served tools by name
   * @returns each granted tool, or a refusal's reason
   */
  *claims(
    kit: KitCandidate,
    tools: ReadonlyMap<string, ToolCandidate>,
  ): Generator<ToolCandidate | string> {
    for (const name of kit.listed) {
      const tool = tools.get(name);
      if (tool === undefined) continue;
      const folder = this.#folderKits(tool);
      if (folder.includes(kit)) continue; // its own folder's tool anyway
      if (folder.length === 0 && this.#inTree(tool, kit)) {
        yield tool;
        continue;
      }
      const why = folder.length > 0
        ? `it belongs to toolkit "${folder[0]!.entry.name}" of its folder`
        : `it is ${shown(tool.entry, tool.root)}, outside the toolkit's ` +
          "folder";
      yield `Toolkit "${kit.entry.name}" in "${kit.entry.path}" cannot ` +
        `claim tool "${name}": ${why}`;
    }
  }

  /**
   * Reports folders holding two toolkits: they give their tools none.
   *
   * @param errors where the reports go
   */
  reportCrowdedFolders(errors: RegistryError[]): void {
    for (const [dir, all] of this.#byDir) {
      // Each imported MCP server is a module with one toolkit of its own;
      // servers sit side by side under the MCP root and crowd no folder.
      const kits = all.filter((k) => k.entry.origin !== "mcp");
      const names = [...new Set(kits.map((k) => k.entry.name))];
      if (names.length < 2) continue;
      // Reported at the second name's own file: a name defined twice in
      // the folder must not pair one toolkit's name with another's file.
      const second = kits.find((k) => k.entry.name === names[1])!;
      const count = names.length === 2 ? "two" : String(names.length);
      errors.push({
        path: second.entry.path,
        name: second.entry.name,
        message: `Folder "${dir}" holds ${count} toolkits ` +
          `${listed([...names])}: its tools need an explicit "toolkit" field`,
      });
    }
  }

  // The toolkits of the tool's folder or the nearest folder above it that
  // defines any, in the same skills folder and origin. The skills folder
  // itself is no toolkit folder: a toolkit module at the top would
  // otherwise claim every loose tool.
  #folderKits(tool: ToolCandidate): KitCandidate[] {
    for (let dir = dirname(tool.entry.path);; dir = dirname(dir)) {
      // Up to the skills folder, not past it (nor past "/").
      if (dir === tool.root || dir === "/" || !within(dir, tool.root)) {
        return [];
      }
      const here = this.#kitsIn(dir, tool);
      if (here.length > 0) return here;
    }
  }

  // The toolkits defined in a folder, in the tool's skills folder and origin.
  #kitsIn(dir: string, tool: ToolCandidate): KitCandidate[] {
    return (this.#byDir.get(dir) ?? []).filter((k) =>
      k.root === tool.root && k.entry.origin === tool.entry.origin
    );
  }

  // The served toolkit of that name, when its list validly claims the tool.
  #lister(
    tool: ToolCandidate,
    name: string,
  ): KitCandidate | undefined {
    const kit = this.#served.get(name);
    return kit && kit.listed.includes(tool.entry.name) &&
        this.#inTree(tool, kit)
      ? kit
      : undefined;
  }

  #inTree(tool: ToolCandidate, kit: KitCandidate): boolean {
    return tool.root === kit.root && tool.entry.origin === kit.entry.origin &&
      within(tool.entry.path, dirname(kit.entry.path));
  }

  #wrongKit(explicit: string, folder: readonly KitCandidate[]): string {
    const other = this.#served.get(explicit);
    const where = other ? `, defined in ${shown(other.entry, other.root)}` : "";
    const own = folder.length > 0
      ? `its folder's is "${folder.map((k) => k.entry.name).join('" or "')}"`
      : "none is defined in its folder or a folder above it";
    return `its "toolkit" field names "${explicit}"${where}, but a tool ` +
      `belongs to the toolkit of its own folder (${own})`;
  }
}

/**
 * The imported MCP servers' namespaces: server `kit` names its tools and
 * skills `kit__<name>`, and a drop-in there would be taken over whenever the
 * server starts listing that name (imported servers outrank drop-ins). So a
 * drop-in's name in a configured server's namespace is refused whether the
 * server lists it or not, and no name changes hands at runtime.
 */
class Namespaces {
  // Longest first: a name belongs to the longest server name it starts with.
  #prefixes: { server: string; prefix: string }[];

  constructor(modules: readonly LoadedModule[]) {
    this.#prefixes = modules.filter((m) => m.origin === "mcp")
      .map((m) => m.module.path.slice(m.root.length))
      .map((server) => ({ server, prefix: `${server}__` }))
      .sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /**
   * The candidates outside every server's namespace; the others are told
   * to `refused`.
   *
   * @param kind the candidates' kind
   * @param candidates the candidates
   * @param refused where refusals go
   * @returns the candidates kept
   */
  outside<C extends Candidate<Named>>(
    kind: Kind,
    candidates: readonly C[],
    refused: RegistryRefusal[],
  ): C[] {
    if (this.#prefixes.length === 0) return [...candidates];
    return candidates.filter((c) => {
      if (c.entry.origin !== "file") return true;
      const space = this.#prefixes.find((p) =>
        c.entry.name.startsWith(p.prefix)
      );
      if (space === undefined) return true;
      refused.push(refusedDefinition(
        kind,
        c.entry,
        `its name is in the namespace of the MCP server "${space.server}" ` +
          `("${space.prefix}"), whose names are the server's`,
      ));
      return false;
    });
  }
}

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
 * block the name: neither is served. A drop-in named `<server>__...` for
 * an imported MCP server is refused, listed by that server or not.
 *
 * @param modules every module read, in any order
 * @param options generation, folders, the snapshot replaced, earlier errors
 * @returns a frozen snapshot with entries sorted by name
 * @example Two files defining the same tool: neither is served
 * ```ts
 * import { buildSnapshot } from "./snapshot.ts";
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
  const collected = collect(modules, errors);
  const { broken } = collected;
  const spaces = new Namespaces(modules);
  const tools = spaces.outside("tool", collected.tools, refused);
  const kits = spaces.outside("toolkit", collected.kits, refused);
  const skills = spaces.outside("skill", collected.skills, refused);
  const roots = options.roots ?? [];
  const names = new NameRules(roots, options.previous, {
    refused,
    errors,
    broken,
  });

  const uniqueKits = names.pick("toolkit", kits);
  const place = new Places(kits, uniqueKits);
  const placed = tools.filter((tool) => {
    const toolkit = place.toolkitOf(tool);
    if (typeof toolkit === "object" && toolkit !== null) {
      refused.push(refusedDefinition("tool", tool.entry, toolkit.refused));
      return false;
    }
    tool.toolkit = toolkit;
    return true;
  });
  const uniqueTools = names.pick("tool", placed);
  for (const kit of uniqueKits.values()) {
    for (const claim of place.claims(kit, uniqueTools)) {
      if (typeof claim === "string") {
        refused.push(refusal("toolkit", kit.entry, claim));
      } else claim.toolkit ??= kit.entry.name;
    }
  }
  const uniqueSkills = names.pick("skill", skills);
  for (const r of refused) {
    errors.push({ path: r.path, name: r.name, message: r.reason });
  }
  place.reportCrowdedFolders(errors);

  return Object.freeze({
    generation: options.generation ?? 0,
    ...entryMaps({ uniqueTools, uniqueKits, uniqueSkills }),
    blocked: names.blocked,
    agentSkills: Object.freeze([...(options.agentSkills ?? [])].sort()),
    errors: Object.freeze(errors),
    refused: Object.freeze(refused),
    roots: Object.freeze([...roots]),
    holders: names.held,
  });
}

// The served entries, frozen and sorted by name; a toolkit's `tools` are
// its members.
function entryMaps(won: {
  uniqueTools: Map<string, ToolCandidate>;
  uniqueKits: Map<string, KitCandidate>;
  uniqueSkills: Map<string, Candidate<SkillEntry>>;
}) {
  const tools = new Map<string, ToolEntry>();
  for (const { entry, toolkit } of sortByName(won.uniqueTools)) {
    tools.set(entry.name, Object.freeze({ ...entry, toolkit }));
  }
  // Tools are in name order, so each toolkit's members are too.
  const members = Map.groupBy(tools.values(), (tool) => tool.toolkit);
  const toolkits = new Map<string, ToolkitEntry>();
  for (const { entry } of sortByName(won.uniqueKits)) {
    const list = (members.get(entry.name) ?? []).map((tool) => tool.name);
    toolkits.set(
      entry.name,
      Object.freeze({ ...entry, tools: Object.freeze(list) }),
    );
  }
  const skills = new Map(
    sortByName(won.uniqueSkills).map(({ entry }) => [entry.name, entry]),
  );
  return { tools, toolkits, skills };
}

// Every definition of every module, as candidates (names still to be made
// unique), in path order; refused ones are told to `errors`. Modules that
// failed to load are `broken`, by path: a name they held stays theirs.
function collect(modules: readonly LoadedModule[], errors: RegistryError[]) {
  const broken = new Map<string, FoundIn>();
  const tools: ToolCandidate[] = [];
  const kits: KitCandidate[] = [];
  const skills: Candidate<SkillEntry>[] = [];

  const sorted = [...modules].sort((a, b) =>
    compareCodeUnits(a.module.path, b.module.path)
  );
  for (const { module, origin, root } of sorted) {
    if (module.error !== null) {
      broken.set(module.path, { origin, root });
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
      // Every refusal of a known kind says what and where the same way.
      const fail = (why: string) =>
        errors.push({
          path: module.path,
          name: def.name,
          message:
            `Cannot load ${def.kind} "${def.name}" from "${module.path}": ${why}`,
        });
      if (typeof def.name !== "string" || !NAME.test(def.name)) {
        fail("a name needs 1 to 64 letters, digits, _ . or -");
        continue;
      }
      if (def.kind === "tool") {
        const tool = toolCandidate(def, ref);
        if (typeof tool === "string") {
          fail(tool);
          continue;
        }
        tools.push({ ...tool, root, toolkit: null });
      } else if (def.kind === "toolkit") {
        const kit = toolkitCandidate(def, ref);
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
          root,
        });
      } else {
        errors.push({
          path: module.path,
          name: def.name,
          message: `Cannot load "${String(def.name)}" from "${module.path}": ` +
            `unknown kind "${String((def as { kind: unknown }).kind)}"`,
        });
      }
    }
  }
  return { tools, kits, skills, broken };
}

// A tool definition's entry and its explicit toolkit, or why it is refused
// (the reason alone: collect() says which definition and file).
function toolCandidate(
  def: DescribedDefinition,
  ref: ModuleRef,
): Omit<ToolCandidate, "root" | "toolkit"> | string {
  const parsed = ToolFields.safeParse(def.fields);
  if (!parsed.success) return describeZodError(parsed.error);
  if (!def.runnable) return 'it has no "run" function';
  const f = parsed.data;
  for (const field of ["input", "input_schema", "output", "output_schema"]) {
    const schema = f[field as keyof typeof f] as Record<string, unknown>;
    if (schema === undefined) continue;
    const broad = tooBroad(schema, field, def.fields[field]);
    if (broad) return broad;
  }
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
  return { entry, explicit: f.toolkit ? f.toolkit : null };
}

// A toolkit definition's entry and the tools it lists, or why it is refused
// (the reason alone: collect() says which definition and file).
function toolkitCandidate(
  def: DescribedDefinition,
  ref: ModuleRef,
): Omit<KitCandidate, "root"> | string {
  const parsed = ToolkitFields.safeParse(def.fields);
  if (!parsed.success) return describeZodError(parsed.error);
  const f = parsed.data;
  const broad = f.config && tooBroad(f.config, "config", def.fields.config);
  if (broad) return broad;
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

// Why a schema the host validates values against, on its own thread, is
// refused (see schemaFanOut and slowPattern), or null. A schema nested so
// deep that these walks overflow the stack is refused too, unchecked: their
// throw would otherwise end the whole load, every other definition with it.
// `described` is the schema as the module's description holds it (`schema`
// is zod's copy of it): the registry builds every reload's snapshot from
// the descriptions it keeps, and a check compiles the schema's patterns,
// about 10 µs a character, so each is checked once.
function tooBroad(
  schema: Record<string, unknown>,
  field: string,
  described: unknown,
): string | null {
  const key = described as object;
  let problem = problems.get(key);
  if (problem === undefined) problems.set(key, problem = problemOf(schema));
  return problem && `its "${field}" schema${problem}`;
}

// What tooBroad() found, by described schema.
const problems = new WeakMap<object, string | null>();

function problemOf(schema: Record<string, unknown>): string | null {
  try {
    if (schemaFanOut(schema) > MAX_FAN_OUT) {
      return ` applies more than ${MAX_FAN_OUT} subschemas to one value ` +
        '("anyOf", "allOf", "oneOf", "$ref", ... nested)';
    }
    const slow = slowPattern(schema);
    return slow && `'s ${slow}`;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return " is nested too deep to check";
  }
}

function sortByName<C extends Candidate<{ name: string }>>(
  map: Map<string, C>,
): C[] {
  return [...map.values()].sort((a, b) =>
    compareCodeUnits(a.entry.name, b.entry.name)
  );
}
