/**
 * Turns what the registry found (code skill modules, Agent Skills folders,
 * files that failed to load) into skill records: the wire
 * `SkillDefinition` an agent discovers, plus what the host needs to run it.
 *
 * `source` says who put the skill there:
 *
 * | source | where the skill was found |
 * |---|---|
 * | `system` | skillbox's own `skills/` folder (registry origin `builtin`) |
 * | `user` | a skills folder under the operator's home directory (e.g. `~/.skillbox/skills`) |
 * | `project` | any other skills folder the operator configured (e.g. `./skills` beside `skillbox.jsonc`) |
 *
 * `status`, decided per request by {@link resolveSkillStatus} so hot reloads
 * and tool changes show at once:
 *
 * | status | when |
 * |---|---|
 * | `Published` | runnable |
 * | `Blocked` | the file failed to load, it declares a tool or toolkit that does not exist, or asks for more than the policy grants; `metadata.blocked_reason` says which |
 * | `Archived` | the operator listed it in config: hidden from discover, calls refused as `unknown_skill` |
 * | `Created` | found but still being validated (the registry has not read it yet) |
 *
 * @module
 */

import { dirname, relative, resolve } from "node:path";
import { skillDefinition } from "../../protocol/models.ts";
import type {
  JsonObject,
  LLMConfig,
  SkillDefinition,
} from "../../protocol/models.ts";
import type { SkillStatus } from "../../protocol/codes.ts";
import type { JsonSchema, Permissions } from "../../sandbox/sdk/types.ts";
import type { SkillFolder } from "./skill_md.ts";
import type { CommandRule } from "./tool_names.ts";
import { redactLlmConfig } from "../llm/config.ts";

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
}

/** A skill as the host keeps it. */
export interface SkillRecord {
  /** What `skill/discover` sends: complete, `llm_config` redacted. */
  readonly definition: SkillDefinition;
  /** How to run it, or null when it cannot be run (load failure). */
  readonly run: CodeSkillRun | InstructionSkillRun | null;
  /** The skill's own LLM choice as written, for the host only. */
  readonly llmConfig: LLMConfig | null;
  /** Why it cannot run regardless of tools (load failure, policy). */
  readonly loadProblem: string | null;
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

const str = (v: unknown): string | null => typeof v === "string" ? v : null;
const strList = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? [...v] : null;
const positive = (v: unknown): number | null =>
  typeof v === "number" && v > 0 && Number.isFinite(v) ? v : null;
const object = (v: unknown): JsonObject | null =>
  typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as JsonObject
    : null;

/**
 * Builds the record of a code skill module.
 *
 * @param entry the registry's skill entry
 * @param options its source, grant and policy verdict
 * @returns the record; a skill with neither `run` nor `instructions` is
 *   Blocked
 * @example A described module
 * ```ts
 * import { codeSkillRecord } from "./definition.ts";
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
  const inputSchema = object(f.input_schema) ?? object(f.input) ?? {};
  const instructions = str(f.instructions);
  const llm = llmConfigOf(f.llm_config);
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
  const definition = skillDefinition({
    name: entry.name,
    description: str(f.description) ?? "",
    version: str(f.version) ?? "1.0.0",
    triggers: strList(f.triggers) ?? [],
    when_to_use: str(f.when_to_use) ?? "",
    argument_hint: str(f.argument_hint) ?? "",
    source: options.source,
    tools: strList(f.tools),
    toolkits: strList(f.toolkits),
    instructions,
    file_path: entry.path,
    llm_config: llm ? redactLlmConfig(llm) : null,
    category: str(f.category),
    tags: strList(f.tags),
    max_turns: positive(f.max_turns),
    timeout_seconds: positive(f.timeout_seconds),
    icon: str(f.icon),
    metadata: { ...object(f.metadata), format: "code" },
    input_schema: inputSchema,
    output_schema: object(f.output_schema) ?? object(f.output) ?? {},
    arguments: strList(f.arguments) ?? argumentNames(inputSchema),
  });
  return { definition, run, llmConfig: llm, loadProblem };
}

/**
 * Builds the record of an Agent Skills folder.
 *
 * @param skill the loaded folder
 * @param options its source
 * @returns the record, run by the agent loop
 * @example
 * ```ts
 * import { instructionSkillRecord } from "./definition.ts";
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
  skill: SkillFolder,
  options: { source: SkillSource },
): SkillRecord {
  const llm: LLMConfig | null = skill.llm
    ? { ...skill.llm, is_default: false }
    : null;
  const definition = skillDefinition({
    name: skill.name,
    description: skill.description,
    version: skill.version,
    triggers: skill.triggers,
    when_to_use: skill.when_to_use,
    argument_hint: skill.argument_hint,
    source: options.source,
    tools: skill.tools,
    toolkits: skill.toolkits,
    instructions: skill.instructions,
    file_path: skill.file_path,
    llm_config: llm ? redactLlmConfig(llm) : null,
    category: skill.category,
    tags: skill.tags,
    max_turns: skill.max_turns,
    timeout_seconds: skill.timeout_seconds,
    icon: skill.icon,
    metadata: {
      ...skill.metadata,
      format: "agent_skill",
      resources: [...skill.resources],
    },
    input_schema: skill.input_schema,
    output_schema: skill.output_schema,
    arguments: argumentNames(skill.input_schema),
  });
  return {
    definition,
    run: {
      format: "instructions",
      folder: skill.folder,
      resources: skill.resources,
      commandRules: skill.command_rules,
    },
    llmConfig: llm,
    loadProblem: null,
  };
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
 * import { failedSkillRecord, resolveSkillStatus } from "./definition.ts";
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
  return {
    definition: skillDefinition({
      name,
      description: `Could not be loaded: ${options.message}`,
      source: options.source,
      file_path: options.path,
      metadata: {},
    }),
    run: null,
    llmConfig: null,
    loadProblem: options.message,
  };
}

/** What {@link resolveSkillStatus} checks a skill against. */
export interface StatusContext {
  /** Whether a tool of that name is loaded. */
  hasTool(name: string): boolean;
  /** Whether a toolkit of that name is loaded. */
  hasToolkit(name: string): boolean;
  /** Names the operator archived. @default none */
  archived?: ReadonlySet<string>;
  /** Names still being validated. @default none */
  pending?: ReadonlySet<string>;
}

/**
 * Decides a skill's status now: Archived, Created, Blocked (with
 * `metadata.blocked_reason`) or Published.
 *
 * @param record the skill
 * @param context loaded tools and toolkits, operator lists
 * @returns the wire definition with `status` (and reason) set
 * @example A skill needing a missing tool
 * ```ts
 * import { codeSkillRecord, resolveSkillStatus } from "./definition.ts";
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
): SkillDefinition {
  const def = record.definition;
  let status: SkillStatus = "Published";
  let reason: string | null = null;
  if (context.archived?.has(def.name)) status = "Archived";
  else if (context.pending?.has(def.name)) status = "Created";
  else {
    reason = record.loadProblem ?? missingDependency(def, context);
    if (reason !== null) status = "Blocked";
  }
  const metadata = { ...def.metadata };
  delete metadata.blocked_reason;
  if (reason !== null) metadata.blocked_reason = reason;
  return { ...def, status, metadata };
}

function missingDependency(
  def: SkillDefinition,
  context: StatusContext,
): string | null {
  const tools = (def.tools ?? []).filter((t) => !context.hasTool(t));
  const kits = (def.toolkits ?? []).filter((t) => !context.hasToolkit(t));
  const parts: string[] = [];
  if (tools.length > 0) {
    parts.push(
      `tool${tools.length > 1 ? "s" : ""} ${
        tools.map((t) => `"${t}"`).join(", ")
      }`,
    );
  }
  if (kits.length > 0) {
    parts.push(
      `toolkit${kits.length > 1 ? "s" : ""} ${
        kits.map((t) => `"${t}"`).join(", ")
      }`,
    );
  }
  if (parts.length === 0) return null;
  return `Skill "${def.name}" needs ${parts.join(" and ")}, which ${
    tools.length + kits.length > 1 ? "are" : "is"
  } not loaded`;
}

/**
 * Tells a skill's source from where it was found (see the module doc).
 *
 * @param path the skill's file or folder
 * @param options registry origin, home directory
 * @returns `system` for builtin, `user` under the home directory, else `project`
 * @example
 * ```ts
 * import { skillSource } from "./definition.ts";
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
  const home = options.home === undefined ? homeDir() : options.home;
  if (home) {
    const rel = relative(resolve(home), resolve(path));
    if (rel !== "" && !rel.startsWith("..") && !rel.startsWith("/")) {
      return "user";
    }
  }
  return "project";
}

function homeDir(): string | null {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? null;
  } catch {
    return null; // no env permission: nothing counts as a user folder
  }
}

function llmConfigOf(value: unknown): LLMConfig | null {
  const v = object(value);
  if (!v || typeof v.provider_name !== "string") return null;
  return {
    provider_name: v.provider_name,
    provider_credentials: object(v.provider_credentials) ?? {},
    provider_config: object(v.provider_config) ?? {},
    is_default: false,
  };
}

function argumentNames(schema: JsonSchema): string[] | null {
  const props = object(schema.properties);
  return props ? Object.keys(props) : null;
}
