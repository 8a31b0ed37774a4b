/**
 * The skills the host serves. Each is kept as a {@link SkillRecord}: the
 * domain `Skill` an agent discovers (encoded for the wire only by the
 * protocol codec), how to run it, and its own LLM choice. Records are built
 * from the registry's code skill modules, its Agent Skills folders
 * (`skill_md.ts`) and its imported MCP servers' skills, with code skills'
 * permissions checked against the policy; a skill that cannot load is
 * still listed, Blocked, with the reason.
 *
 * `source` says who put a skill there:
 *
 * | source | where the skill was found |
 * |---|---|
 * | `system` | skillbox's own `skills/` folder (registry origin `builtin`) |
 * | `user` | a skills folder under the operator's home directory (e.g. `~/.skillbox/skills`) |
 * | `project` | any other skills folder the operator configured (e.g. `./skills` beside `skillbox.jsonc`) |
 *
 * A skill's status is decided per request, so hot reloads and tool changes
 * show at once:
 *
 * | status | when |
 * |---|---|
 * | `Published` | runnable |
 * | `Blocked` | the file failed to load, it declares a tool or toolkit that does not exist, or asks for more than the policy grants; `metadata.blocked_reason` says which |
 * | `Archived` | the operator listed it in config: hidden from discover, calls refused as `unknown_skill` |
 *
 * The wire's fourth status, `Created`, is not used: a skill is checked as
 * it is listed.
 *
 * Loading warnings (a dialect's, a script's `env`/`net` the policy does not
 * grant, a name MCP clients reject) are in discovery's `metadata.warnings`
 * and, one line each, in the host's banner.
 *
 * @module
 */

import { basename, dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { checkGrant, resolvePermissionPaths } from "../sandbox/grants.ts";
import { within } from "../confine/mount_rule.ts";
import type { Policy } from "../sandbox/grants.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { SkillStatus } from "../../protocol/codes.ts";
import { isPlainObject, type JsonSchema } from "../../protocol/json.ts";
import {
  decodeLlmChoice,
  decodeSkill,
  encodeLlmChoice,
  type LlmChoice,
  type Skill,
} from "../../protocol/skill.ts";
import type {
  RegistryRefusal,
  RegistrySnapshot,
  SkillEntry,
} from "../registry/types.ts";
import { readEnv, redactLlmConfig } from "../llm/config.ts";
import { printableLine } from "../../protocol/lines.ts";
import {
  agentSkillsNameProblem,
  cut,
  FieldReader,
  findSkillFile,
  loadSkillFolder,
  readA2eFields,
  type SkillFolder,
} from "./skill_md.ts";
import type { CommandRule } from "./tool_names.ts";
import { refusedEnv, splitScriptNet } from "./scripts/script_access.ts";

/** Who put a skill where it was found (see the module doc). */
export type SkillSource = "system" | "project" | "user";

/** How the host runs a code skill: in a sandbox, through `Sandbox.call`. */
export interface CodeSkillRun {
  readonly format: "code";
  /** Absolute module path. */
  readonly path: string;
  readonly export: string;
  /** The module's content hash. */
  readonly version: string;
  /** Absolute-path permissions, already checked against the policy. */
  readonly grant: Permissions;
  readonly isolation: "warm" | "per-call";
}

/** How the host runs an instruction skill: in its agent loop. */
export interface InstructionSkillRun {
  readonly format: "instructions";
  /** The skill's folder; linked files are read from here. */
  readonly folder: string;
  /** Linked files readable with `read_skill_file`, relative to `folder`. */
  readonly resources: readonly string[];
  /** What `run_command` may run (`Bash(git:*)`); absent or null: not narrowed. */
  readonly commandRules?: readonly CommandRule[] | null;
  /** Variables its scripts ask for (frontmatter `env`). @default [] */
  readonly env?: readonly string[];
  /** Hosts its scripts ask for (frontmatter `net`). @default [] */
  readonly net?: readonly string[];
  /**
   * Where its files come from when they are not in `folder` (a skill of an
   * imported MCP server): `resources` are read through it, and its scripts
   * are never run. @default none
   */
  readonly fetched?: FetchedSkillFiles;
}

/**
 * The files of a skill fetched from where it is served rather than read
 * from a folder (a skill of an imported MCP server), each checked before
 * its text is returned.
 */
export interface FetchedSkillFiles {
  /** The readable paths, relative to the skill's root. */
  readonly resources: readonly string[];
  /** Told to the model with `read_skill_file`: their origin, scripts not run. */
  readonly note: string;
  /**
   * Reads one file. Rejects with `tool_denied` for a path that is not one
   * of `resources` (the model may ask again), and with
   * `SkillFileRefusedError` (`skill_md.ts`) when the bytes are not what
   * was listed: the run then fails.
   */
  read(path: string): Promise<string>;
}

/** A skill as the host keeps it. */
export interface SkillRecord {
  /** What `skill/discover` lists: complete, `llmConfig` redacted. */
  readonly definition: Skill;
  /** How to run it, or null when it cannot be run (load failure). */
  readonly run: CodeSkillRun | InstructionSkillRun | null;
  /** The skill's own LLM choice as written, for the host only. */
  readonly llmConfig: LlmChoice | null;
  /** Why it cannot run regardless of tools (load failure, policy). */
  readonly loadProblem: string | null;
}

/**
 * Completes a skill with A2E's defaults (the wire `SkillDefinition`'s).
 *
 * @param fields at least `name` and `description`
 * @returns the skill, every field present
 * @example
 * ```ts
 * import { skill } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const s = skill({ name: "a", description: "A" });
 * assert.equal(s.version, "1.0.0");
 * assert.equal(s.status, "Published");
 * ```
 */
export function skill(
  fields: Pick<Skill, "name" | "description"> & Partial<Skill>,
): Skill {
  return { ...decodeSkill({}), ...fields };
}

/**
 * A skill's LLM choice as a client may see it: no credentials, only the
 * public provider settings (the LLM module's redaction, through the codec).
 *
 * @param choice the choice as written
 * @returns the redacted choice
 * @example
 * ```ts
 * import { redactedChoice } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const r = redactedChoice({ providerName: "openai", providerCredentials: { api_key: "sk-1" },
 *   providerConfig: { model: "m", secret: "x" }, isDefault: false });
 * assert.deepEqual(r.providerCredentials, {});
 * assert.deepEqual(r.providerConfig, { model: "m" });
 * ```
 */
export function redactedChoice(choice: LlmChoice): LlmChoice {
  const redacted = redactLlmConfig(encodeLlmChoice(choice));
  return decodeLlmChoice({ ...redacted });
}

/**
 * The argument names a schema declares (its `properties`).
 *
 * @param schema the input schema
 * @returns the names, or null when it declares none
 * @example
 * ```ts
 * import { argumentNames } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(argumentNames({ type: "object", properties: { a: {} } }), ["a"]);
 * assert.equal(argumentNames({}), null);
 * ```
 */
export function argumentNames(schema: JsonSchema): string[] | null {
  const props = schema.properties;
  return isPlainObject(props) ? Object.keys(props) : null;
}

/**
 * Builds the record of a skill whose file could not be loaded: listed as
 * Blocked with the reason, never runnable.
 *
 * @param name the skill's name (its folder or file name when unknown)
 * @param options where it is, why it failed, its source
 * @returns a Blocked record
 * @example
 * ```ts
 * import { failedSkillRecord, resolveSkillStatus } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const rec = failedSkillRecord("broken", { path: "/s/broken/SKILL.md", message: "YAML error at line 3", source: "user" });
 * const def = resolveSkillStatus(rec, { hasTool: () => true, hasToolkit: () => true });
 * assert.equal(def.status, "Blocked");
 * assert.equal(def.metadata?.blocked_reason, "YAML error at line 3");
 * ```
 */
export function failedSkillRecord(
  name: string,
  options: { path: string; message: string; source: SkillSource },
): SkillRecord {
  // Clients read why and the name (a folder's, when the file could not
  // say one): both printable. A Blocked skill is never run by its name.
  const message = printableLine(options.message);
  return {
    definition: skill({
      name: printableLine(name),
      description: `Could not be loaded: ${message}`,
      source: options.source,
      filePath: options.path,
      metadata: {},
    }),
    run: null,
    llmConfig: null,
    loadProblem: message,
  };
}

/** Where the skills capability gets its skills. */
export interface SkillCatalog {
  /** Every skill now; called per request so hot reloads show at once. */
  skills(): Promise<readonly SkillRecord[]>;
  /**
   * Skills refused by the last {@link SkillCatalog.skills} because a skill
   * of higher standing holds the name (a `SKILL.md` folder named like a
   * shipped skill), with why. @default none
   */
  refused?(): readonly RegistryRefusal[];
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
  /**
   * The files of imported MCP servers' skills now, by skill name: such a
   * skill's `read_skill_file` reads them. @default none
   */
  importedFiles?: () => ReadonlyMap<string, FetchedSkillFiles>;
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
 * import { registryCatalog } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: notes\ndescription: Notes\n---\nBe brief.");
 * const snapshot = { generation: 1, tools: new Map(), toolkits: new Map(), skills: new Map(),
 *   blocked: new Map(), agentSkills: [dir], errors: [], refused: [], roots: [] };
 * const catalog = registryCatalog({ registry: { snapshot }, home: null });
 * const [skill] = await catalog.skills();
 * assert.equal(skill?.definition.name, "notes");
 * assert.equal(skill?.definition.source, "project");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
// Long (about 90 lines): a factory whose closures share one cache of
// SKILL.md folders' records; each closure is short.
export function registryCatalog(options: RegistryCatalogOptions): SkillCatalog {
  // Each folder's record as last built, with its skill file's name, size
  // and mtime.
  const cache = new Map<string, { stamp: string; record: SkillRecord }>();
  // Who held each name at the last request: a later file is the impostor.
  const holders = new Map<string, string>();
  let refused: readonly RegistryRefusal[] = [];
  const systemDirs = (options.systemDirs ?? [SYSTEM_SKILLS_DIR]).filter((d) =>
    d !== ""
  ).map((d) => resolve(d));
  const isSystem = (path: string) => systemDirs.some((d) => within(path, d));
  const sourceOf = (path: string, origin: string) =>
    skillSource(path, {
      origin: origin === "builtin" || isSystem(path) ? "builtin" : "file",
      home: options.home,
    });

  // The record of a folder: its source and the policy are the catalog's
  // own, so a record stands until its skill file changes.
  const folderRecord = async (dir: string) => {
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
    if (hit && hit.stamp === stamp) return hit.record;
    const source = sourceOf(dir, "file");
    let record: SkillRecord;
    try {
      const folder = await loadSkillFolder(dir);
      record = instructionSkillRecord(
        withServingWarnings(folder, options.policy ?? {}),
        { source },
      );
    } catch (error) {
      record = failedSkillRecord(basename(dir), {
        path: `${dir}${sep}${file}`,
        message: error instanceof Error ? error.message : String(error),
        source,
      });
    }
    cache.set(dir, { stamp, record });
    return record;
  };

  return {
    async skills() {
      const snapshot = options.registry.snapshot;
      const records: SkillRecord[] = [];
      let imported: ReadonlyMap<string, FetchedSkillFiles> | null = null;
      for (const entry of snapshot.skills.values()) {
        const record = codeRecord(
          entry,
          sourceOf(entry.path, entry.origin),
          options.policy,
        );
        if (entry.origin !== "mcp") records.push(record);
        else {
          imported ??= options.importedFiles?.() ?? new Map();
          records.push(importedRecord(record, entry, imported));
        }
      }
      records.push(
        ...await Promise.all(snapshot.agentSkills.map(folderRecord)),
      );
      // A folder no longer listed is forgotten, not kept for the host's life.
      const listed = new Set(snapshot.agentSkills);
      for (const dir of cache.keys()) if (!listed.has(dir)) cache.delete(dir);
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
      const byName = Map.groupBy(records, (r) => r.definition.name);
      const refusedNow: RegistryRefusal[] = [];
      const out = [...byName.values()].map((list) =>
        list.length === 1
          ? list[0]!
          : precedence(list, { snapshot, holders, refused: refusedNow })
      );
      holders.clear();
      for (const r of out) {
        if (r.definition.filePath) {
          holders.set(r.definition.name, r.definition.filePath);
        }
      }
      refused = refusedNow;
      return out;
    },
    refused: () => refused,
  };
}

// Who keeps a name several skills claim: shipped skills first, then the
// skills folders in config order, then the one that held it before; the
// rest are refused. Equal standing, no holder: neither is served. Called
// with two claims or more.
function precedence(
  list: SkillRecord[],
  state: {
    snapshot: RegistrySnapshot;
    holders: ReadonlyMap<string, string>;
    refused: RegistryRefusal[];
  },
): SkillRecord {
  const name = list[0]!.definition.name;
  const holder = state.holders.get(name);
  const roots = state.snapshot.roots;
  // Each claim's file, folder and standing, found once.
  const ranked = list.map((r) => {
    const path = r.definition.filePath ?? "";
    const index = roots.findIndex((root) => within(path, root.path));
    const system = r.definition.source === "system";
    // One number, compared as a number: shipped, then the folder's place,
    // then the holder (a string key sorted folder 10 before folder 2).
    const key = (system ? 0 : 1) * 2 * (roots.length + 1) +
      (index < 0 ? roots.length : index) * 2 +
      (path !== "" && path === holder ? 0 : 1);
    return { r, path, system, root: roots[index], key };
  }).sort((a, b) => a.key - b.key);
  const winner = ranked[0]!;
  if (ranked[1]!.key === winner.key || winner.path === "") return clash(list);
  const { root } = winner;
  const taken = winner.system && root
    ? `builtin "${basename(root.path)}/${relative(root.path, winner.path)}"`
    : `"${winner.path}"`;
  for (const { path, system } of ranked.slice(1)) {
    state.refused.push({
      kind: "skill",
      name,
      path,
      origin: system ? "builtin" : "file",
      reason:
        `Skill "${name}" in "${path}" is refused: the name is taken by ${taken}`,
    });
  }
  return winner.r;
}

function codeRecord(
  entry: SkillEntry,
  source: SkillSource,
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

// An imported MCP server's skill: refused by the host (the reason is in
// its metadata, set by `imported_servers.ts`, never by the server), or run
// with its files fetched from the server.
function importedRecord(
  record: SkillRecord,
  entry: SkillEntry,
  files: ReadonlyMap<string, FetchedSkillFiles>,
): SkillRecord {
  const metadata = entry.fields.metadata as Record<string, unknown> | null;
  if (typeof metadata?.refused === "string") {
    return { ...record, run: null, loadProblem: metadata.refused };
  }
  const fetched = files.get(entry.name);
  if (!fetched || record.run?.format !== "instructions") return record;
  return {
    ...record,
    run: { ...record.run, resources: fetched.resources, fetched },
  };
}

function clash(list: SkillRecord[]): SkillRecord {
  const first = list[0]!;
  const where = list.map((r) => `"${r.definition.filePath ?? "?"}"`).join(
    " and ",
  );
  return failedSkillRecord(first.definition.name, {
    path: first.definition.filePath ?? "",
    message:
      `Skill name "${first.definition.name}" is defined in ${where}: neither is served`,
    source: first.definition.source as SkillSource,
  });
}

/** A code skill as the registry describes it (`SkillEntry` fits). */
export interface CodeSkillEntry {
  readonly path: string;
  readonly export: string;
  readonly hash: string;
  readonly name: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly runnable: boolean;
}

/** Options for {@link codeSkillRecord}. */
export interface CodeSkillOptions {
  source: SkillSource;
  /** The checked grant. @default read of the module's own folder */
  grant?: Permissions;
  /** Why the policy refuses its permissions, or null. @default null */
  denied?: string | null;
}

/**
 * Builds the record of a code skill module: its fields, as the module
 * declared them, read defensively into the domain `Skill`, run in a
 * sandbox (or in the agent loop when it has `instructions` and no `run`).
 *
 * @param entry the registry's skill entry
 * @param options its source, grant and policy verdict
 * @returns the record; a skill with neither `run` nor `instructions` is
 *   Blocked
 * @example A described module
 * ```ts
 * import { codeSkillRecord } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const rec = codeSkillRecord({
 *   path: "/skills/hello/hello.ts", export: "default", hash: "h1", name: "hello",
 *   fields: { description: "Greets", input_schema: { type: "object", properties: { who: { type: "string" } } } },
 *   runnable: true,
 * }, { source: "system" });
 * assert.equal(rec.definition.status, "Published");
 * assert.deepEqual(rec.definition.arguments, ["who"]);
 * assert.equal(rec.run?.format, "code");
 * ```
 */
export function codeSkillRecord(
  entry: CodeSkillEntry,
  options: CodeSkillOptions,
): SkillRecord {
  const f = entry.fields;
  // Read as a SKILL.md's fields are, by the same readers (its `llm_config`
  // as a SKILL.md's `llm`); a module has no discovery warnings, so its
  // warnings are dropped.
  const r = new FieldReader({ ...f, llm: f.llm_config });
  const a2e = readA2eFields(r);
  const inputSchema = r.mapping("input_schema") ?? r.mapping("input") ?? {};
  const instructions = r.str("instructions");
  const llm = a2e.llm && decodeLlmChoice({ ...a2e.llm });
  const folder = dirname(entry.path);
  let run: CodeSkillRun | InstructionSkillRun | null = null;
  let loadProblem = options.denied ?? null;
  if (entry.runnable) {
    run = {
      format: "code",
      path: entry.path,
      export: entry.export,
      version: entry.hash,
      grant: options.grant ?? { read: [folder] },
      isolation: f.isolation === "per-call" ? "per-call" : "warm",
    };
  } else if (instructions) {
    // A code module without `run` is an instruction skill in TypeScript.
    run = { format: "instructions", folder, resources: [] };
  } else {
    loadProblem ??=
      `Skill "${entry.name}" has neither "run" nor "instructions"`;
  }
  // A2E's fields are wire names, so the protocol's decoder reads them; a
  // module's tools and schemas are its own (skillbox's tool names as
  // written, JSON Schemas also as `input` and `output`).
  const definition = {
    ...decodeSkill({
      ...a2e,
      name: entry.name,
      description: r.str("description") ?? "",
      source: options.source,
      tools: r.strList("tools"),
      instructions,
      file_path: entry.path,
      metadata: { ...r.mapping("metadata"), format: "code" },
      input_schema: inputSchema,
      output_schema: r.mapping("output_schema") ?? r.mapping("output") ?? {},
      arguments: r.strList("arguments") ?? argumentNames(inputSchema),
    }),
    llmConfig: llm && redactedChoice(llm),
  };
  return { definition, run, llmConfig: llm, loadProblem };
}

/**
 * Builds the record of an Agent Skills folder.
 *
 * @param folder the loaded folder
 * @param options its source
 * @returns the record, run by the agent loop
 * @example
 * ```ts
 * import { instructionSkillRecord } from "./catalog.ts";
 * import { parseSkillMd } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const manifest = parseSkillMd("---\nname: notes\ndescription: Takes notes\n---\nBe brief.");
 * const rec = instructionSkillRecord(
 *   { ...manifest, folder: "/s/notes", file_path: "/s/notes/SKILL.md", resources: [] },
 *   { source: "project" },
 * );
 * assert.equal(rec.definition.instructions, "Be brief.");
 * assert.equal(rec.definition.source, "project");
 * assert.equal(rec.run?.format, "instructions");
 * ```
 */
export function instructionSkillRecord(
  folder: SkillFolder,
  options: { source: SkillSource },
): SkillRecord {
  const llm = folder.llm && decodeLlmChoice({ ...folder.llm });
  // The manifest's fields are A2E's wire names, so the protocol's decoder
  // reads them.
  const definition = {
    ...decodeSkill({
      ...folder,
      source: options.source,
      metadata: {
        ...folder.metadata,
        format: "agent_skill",
        resources: [...folder.resources],
      },
      arguments: argumentNames(folder.input_schema),
    }),
    llmConfig: llm && redactedChoice(llm),
  };
  return {
    definition,
    run: {
      format: "instructions",
      folder: folder.folder,
      resources: folder.resources,
      commandRules: folder.command_rules,
      env: folder.env ?? [],
      net: folder.net ?? [],
    },
    llmConfig: llm,
    loadProblem: null,
  };
}

/**
 * Tells a skill's source from where it was found (see the module doc).
 *
 * @param path the skill's file or folder
 * @param options registry origin, home directory
 * @returns `system` for builtin, `user` under the home directory, else `project`
 * @example
 * ```ts
 * import { skillSource } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skillSource("/app/skills/a.ts", { origin: "builtin" }), "system");
 * assert.equal(skillSource("/home/ann/.skillbox/skills/a.ts", { origin: "file", home: "/home/ann" }), "user");
 * assert.equal(skillSource("/srv/proj/skills/a.ts", { origin: "file", home: "/home/ann" }), "project");
 * ```
 */
export function skillSource(
  path: string,
  options: { origin: "file" | "builtin"; home?: string | null },
): SkillSource {
  if (options.origin === "builtin") return "system";
  // readEnv: without env permission, nothing counts as a user folder.
  const home = options.home === undefined
    ? readEnv("HOME") ?? readEnv("USERPROFILE")
    : options.home;
  if (home) {
    const [dir, at] = [resolve(home), resolve(path)];
    if (at !== dir && within(at, dir)) return "user";
  }
  return "project";
}

/** What {@link resolveSkillStatus} checks a skill against. */
export interface StatusContext {
  /** Whether a tool of that name is loaded. */
  hasTool(name: string): boolean;
  /** Whether a toolkit of that name is loaded. */
  hasToolkit(name: string): boolean;
  /** Names the operator archived. @default none */
  archived?: ReadonlySet<string>;
}

/**
 * Decides a skill's status now: Archived, Blocked (with
 * `metadata.blocked_reason`) or Published.
 *
 * @param record the skill
 * @param context loaded tools and toolkits, operator lists
 * @returns the skill with `status` (and reason) set
 * @example A skill needing a missing tool
 * ```ts
 * import { codeSkillRecord, resolveSkillStatus } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const rec = codeSkillRecord({
 *   path: "/s/a.ts", export: "default", hash: "h", name: "a", runnable: true,
 *   fields: { description: "A", tools: ["fetch_page"] },
 * }, { source: "project" });
 * const def = resolveSkillStatus(rec, { hasTool: () => false, hasToolkit: () => false });
 * assert.equal(def.status, "Blocked");
 * assert.match(String(def.metadata?.blocked_reason), /tool "fetch_page"/);
 * ```
 */
export function resolveSkillStatus(
  record: SkillRecord,
  context: StatusContext,
): Skill {
  const def = record.definition;
  let status: SkillStatus = "Published";
  let reason: string | null = null;
  if (context.archived?.has(def.name)) status = "Archived";
  else {
    reason = record.loadProblem ?? missingDependency(def, context);
    if (reason !== null) status = "Blocked";
  }
  const metadata = { ...def.metadata };
  delete metadata.blocked_reason;
  if (reason !== null) metadata.blocked_reason = reason;
  return { ...def, status, metadata };
}

function missingDependency(def: Skill, context: StatusContext): string | null {
  const tools = (def.tools ?? []).filter((t) => !context.hasTool(t));
  const kits = (def.toolkits ?? []).filter((t) => !context.hasToolkit(t));
  const parts: string[] = [];
  if (tools.length > 0) parts.push(`${plural("tool", tools)} ${quoted(tools)}`);
  if (kits.length > 0) parts.push(`${plural("toolkit", kits)} ${quoted(kits)}`);
  if (parts.length === 0) return null;
  return `Skill "${def.name}" needs ${parts.join(" and ")}, which ${
    tools.length + kits.length > 1 ? "are" : "is"
  } not loaded`;
}

function plural(word: string, names: string[]): string {
  return names.length > 1 ? `${word}s` : word;
}

function quoted(names: string[]): string {
  return names.map((t) => `"${t}"`).join(", ");
}

/**
 * Adds to an Agent Skills folder's discovery warnings what serving it
 * under this host means. The `env` variables and `net` hosts its scripts
 * declare that the policy does not grant (its scripts run without them),
 * one warning naming them per field. And a name that breaks the Agent
 * Skills naming rules ({@link agentSkillsNameProblem}) keeps the skill out
 * of MCP's `skills/list` (it is still served as a tool and over A2E): the
 * loader's own warning about the name gets the consequence appended, or,
 * when the loader's dialect allowed the name (A2E's `_`), a warning is
 * added.
 *
 * @param folder the folder as loaded
 * @param policy the policy's `permissions` (`env` and `net`)
 * @returns the folder, with the warnings added when there are any
 * @example
 * ```ts
 * import { withServingWarnings } from "./catalog.ts";
 * import { parseSkillMd } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const manifest = parseSkillMd(
 *   "---\nname: gh\ndescription: GitHub\nenv: [GITHUB_TOKEN, HOME_DIR]\nnet: [api.github.com]\n---\n",
 *   { folder: "gh" },
 * );
 * const folder = { ...manifest, folder: "/s/gh", file_path: "/s/gh/SKILL.md", resources: [] };
 * const served = withServingWarnings(folder, { env: ["HOME_DIR"] });
 * assert.deepEqual(served.metadata.warnings, [
 *   'field "env": the policy (policy.permissions.env) does not grant "GITHUB_TOKEN": its scripts run without it',
 *   'field "net": the policy (policy.permissions.net) does not grant "api.github.com": its scripts cannot reach it',
 * ]);
 * const odd = withServingWarnings({ ...folder, name: "my_notes", folder: "/s/my_notes" }, {});
 * assert.match(String(odd.metadata.warnings), /left out of MCP skills\/list/);
 * ```
 */
export function withServingWarnings(
  folder: SkillFolder,
  policy: { env?: readonly string[]; net?: readonly string[] },
): SkillFolder {
  const warnings = [...folder.warnings];
  const refused = (field: string, names: string[], scripts: string) => {
    if (names.length === 0) return;
    warnings.push(
      `field "${field}": the policy (policy.permissions.${field}) does not grant ${
        quoted(names)
      }: its scripts ${scripts} ${names.length > 1 ? "them" : "it"}`,
    );
  };
  refused("env", refusedEnv(folder.env ?? [], policy.env ?? []), "run without");
  refused(
    "net",
    splitScriptNet(folder.net ?? [], policy.net ?? []).refused,
    "cannot reach",
  );
  const name = folder.name;
  const problem = agentSkillsNameProblem(name, folder.folder);
  if (problem !== null) {
    const tail =
      ": served as a tool and over A2E, but left out of MCP skills/list";
    const said = warnings.findIndex((w) => w.startsWith(`name "${name}"`));
    if (said < 0) warnings.push(problem + tail);
    else warnings[said] += tail;
  }
  if (warnings.length === 0) return folder;
  return { ...folder, warnings, metadata: { ...folder.metadata, warnings } };
}

/**
 * Lists the loading warnings of skills, one line each.
 *
 * @param records the skills, as the catalog lists them
 * @returns lines such as `skill "Pdf" (/s/pdf/SKILL.md): name "Pdf" breaks ...`
 * @example
 * ```ts
 * import { failedSkillRecord, skillLoadWarnings } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const rec = failedSkillRecord("bad", { path: "/s/bad/SKILL.md", message: "YAML error at line 2", source: "project" });
 * assert.deepEqual(skillLoadWarnings([rec]), ['skill "bad" (/s/bad/SKILL.md) cannot be loaded: YAML error at line 2']);
 * ```
 */
export function skillLoadWarnings(records: readonly SkillRecord[]): string[] {
  const lines: string[] = [];
  for (const { definition, run, loadProblem } of records) {
    // A folder's name is its writer's choice, newline or bidi override too.
    const where = printableLine(
      `skill "${definition.name}"${
        definition.filePath ? ` (${definition.filePath})` : ""
      }`,
    );
    if (run === null && loadProblem !== null) {
      lines.push(`${where} cannot be loaded: ${oneLine(loadProblem)}`);
      continue;
    }
    const warnings = definition.metadata?.warnings;
    if (!Array.isArray(warnings)) continue;
    for (const warning of warnings) {
      lines.push(`${where}: ${oneLine(String(warning))}`);
    }
  }
  return lines;
}

// A banner line stays one line, and a hostile file cannot flood the terminal.
function oneLine(text: string): string {
  return cut(printableLine(text), 300, "...");
}
