/**
 * Agent Skills folders: a `SKILL.md` (or A2E's lower-case `skill.md`) with
 * YAML frontmatter and a Markdown body that is the skill's instructions.
 *
 * Every dialect loads: the Agent Skills specification's fields
 * (`spec_fields.ts`), A2E's (`a2e_dialect.ts`, with `inputs`/`outputs`
 * parameter maps), and other runtimes' tool names (`tool_names.ts`). Loading
 * is lenient, as the specification's client guide recommends: a broken rule
 * or a field of the wrong type is a warning (in discovery's
 * `metadata.warnings`), and only YAML that cannot be parsed or a missing
 * description make a skill unloadable. A folder with only `name` and
 * `description` loads with defaults: no tools, no schema, the host's LLM.
 *
 * Files the body links to are listed, not loaded: the agent loop reads them
 * on demand (`skill_links.ts`).
 *
 * @module
 */

import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { FieldReader, splitFrontmatter } from "./frontmatter.ts";
import {
  checkSkillName,
  readDescription,
  readSpecMetadata,
  RESERVED_METADATA_KEYS,
} from "./spec_fields.ts";
import { A2E_KEYS, type A2eFields, readA2eFields } from "./a2e_dialect.ts";
import { describeCommandRule } from "./tool_names.ts";
import { findLinks, insideFolder } from "./skill_links.ts";
import {
  ENV_KEY,
  NET_KEY,
  readScriptEnv,
  readScriptNet,
} from "./scripts/script_access.ts";

/** The biggest skill file accepted, in bytes. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;

/** The file names that make a folder a skill, preferred first. */
export const SKILL_MD_NAMES: readonly string[] = ["SKILL.md", "skill.md"];

/**
 * What a skill file declares, with defaults filled in: the A2E fields (see
 * {@link A2eFields}; `user_invocable` and `tool_names` go into `metadata`)
 * plus the specification's own.
 */
export interface SkillMdManifest
  extends Omit<A2eFields, "user_invocable" | "tool_names"> {
  name: string;
  description: string;
  /** One line per rule broken or value ignored. */
  warnings: string[];
  /** Discovery metadata: `license`, `compatibility`, the author's
   * `metadata`, other keys, and skillbox's `dialect`, `warnings`,
   * `tool_names`, `command_rules`, `user_invocable`. */
  metadata: JsonObject;
  /** The Markdown body. */
  instructions: string;
  /** Relative link targets found in the body (not yet checked on disk). */
  links: string[];
  /** Variables its scripts ask for (`env`, see `scripts/script_access.ts`). */
  env: string[] | null;
  /** Hosts its scripts ask for (`net`, see `scripts/script_access.ts`). */
  net: string[] | null;
}

/** Options for {@link parseSkillMd}. */
export interface ParseSkillMdOptions {
  /** Where the text came from, for messages. @default "SKILL.md" */
  path?: string;
  /** Size cap in bytes. @default MAX_SKILL_MD_BYTES */
  maxBytes?: number;
  /** The folder's name: the name to match, and the fallback. @default none */
  folder?: string;
}

// Keys read by the specification's or A2E's readers; any other key is kept
// in metadata as written (another runtime's field, e.g. `model`).
const READ_KEYS = new Set([
  ...A2E_KEYS,
  "name",
  "description",
  "version",
  "argument-hint",
  "user-invocable",
  "user_invocable",
  "license",
  "compatibility",
  "metadata",
  ENV_KEY,
  NET_KEY,
]);

/**
 * Parses the text of a skill file.
 *
 * @param text the whole file
 * @param options where it came from, size cap, folder name
 * @returns the manifest with defaults filled in and warnings collected
 * @throws {SkillboxError} `skill_error` when the file is too big, has no
 *   frontmatter or a YAML error (with its line), lacks a description, or has
 *   no usable name and no folder name to fall back on
 * @example The minimal folder another runtime would write
 * ```ts
 * import { parseSkillMd } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const m = parseSkillMd("---\nname: pdf\ndescription: Fill PDF forms\n---\nUse [the guide](guide.md).\n");
 * assert.equal(m.name, "pdf");
 * assert.equal(m.version, "1.0.0");
 * assert.equal(m.tools, null);
 * assert.deepEqual(m.links, ["guide.md"]);
 * assert.deepEqual(m.warnings, []);
 * ```
 */
export function parseSkillMd(
  text: string,
  options: ParseSkillMdOptions = {},
): SkillMdManifest {
  const path = options.path ?? "SKILL.md";
  const maxBytes = options.maxBytes ?? MAX_SKILL_MD_BYTES;
  // Characters never outnumber UTF-8 bytes, so this first check is cheap.
  if (
    text.length > maxBytes ||
    new TextEncoder().encode(text).length > maxBytes
  ) {
    throw new SkillboxError(
      "skill_error",
      `Cannot load "${path}": file is larger than ${maxBytes} bytes`,
    );
  }
  const { data, body } = splitFrontmatter(text, path);
  const fields = new FieldReader(data);
  const a2e = A2E_KEYS.some((k) => data[k] !== undefined);
  let name: string;
  let description: string;
  try {
    const checked = checkSkillName(data.name, { folder: options.folder, a2e });
    checked.warnings.forEach((w) => fields.warn(w));
    name = checked.name;
    description = readDescription(fields);
  } catch (error) {
    throw new SkillboxError(
      "skill_error",
      `Cannot load "${path}": ${(error as Error).message}`,
    );
  }
  const dialect = readA2eFields(fields);
  const env = readScriptEnv(fields);
  const net = readScriptNet(fields);
  const metadata = readSpecMetadata(fields);
  for (const [key, value] of Object.entries(data)) {
    if (READ_KEYS.has(key)) continue;
    if (RESERVED_METADATA_KEYS.includes(key)) {
      fields.warn(`field "${key}" is reserved for skillbox: ignored`);
    } else metadata[key] = value as JsonObject[string];
  }
  metadata.dialect = a2e ? "a2e" : "agent-skills";
  const names = dialect.tool_names;
  if (Object.keys(names.mapped).length + names.unknown.length > 0) {
    metadata.tool_names = names;
  }
  if (dialect.command_rules !== null) {
    metadata.command_rules = dialect.command_rules.map(describeCommandRule);
  }
  if (dialect.user_invocable !== null) {
    metadata.user_invocable = dialect.user_invocable;
  }
  if (fields.warnings.length > 0) metadata.warnings = [...fields.warnings];
  return {
    name,
    description,
    version: dialect.version,
    triggers: dialect.triggers,
    when_to_use: dialect.when_to_use,
    argument_hint: dialect.argument_hint,
    tools: dialect.tools,
    toolkits: dialect.toolkits,
    max_turns: dialect.max_turns,
    timeout_seconds: dialect.timeout_seconds,
    category: dialect.category,
    tags: dialect.tags,
    icon: dialect.icon,
    input_schema: dialect.input_schema,
    output_schema: dialect.output_schema,
    llm: dialect.llm,
    command_rules: dialect.command_rules,
    warnings: fields.warnings,
    metadata,
    instructions: body,
    links: findLinks(body),
    env,
    net,
  };
}

/** A loaded Agent Skills folder. */
export interface SkillFolder extends SkillMdManifest {
  /** Absolute path of the folder. */
  folder: string;
  /** Absolute path of its skill file (`SKILL.md` or `skill.md`). */
  file_path: string;
  /** Linked files that exist as regular files inside the folder. */
  resources: string[];
}

/**
 * Finds a folder's skill file by its exact name (`SKILL.md` first, then
 * `skill.md`), so a case-insensitive filesystem cannot make one file count
 * twice.
 *
 * @param folder the folder
 * @returns the file's name and any other skill file the folder also holds,
 *   or null when it has none
 * @example
 * ```ts
 * import { findSkillFile } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/skill.md`, "---\nname: a\ndescription: A\n---\n");
 * assert.deepEqual(await findSkillFile(dir), { name: "skill.md", ignored: null });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function findSkillFile(
  folder: string,
): Promise<{ name: string; ignored: string | null } | null> {
  const present: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (SKILL_MD_NAMES.includes(entry.name) && !entry.isDirectory) {
        present.push(entry.name);
      }
    }
  } catch {
    return null;
  }
  const [name, ignored] = SKILL_MD_NAMES.filter((n) => present.includes(n));
  return name === undefined ? null : { name, ignored: ignored ?? null };
}

/**
 * Reads a skill folder's `SKILL.md` (or `skill.md`) and checks which linked
 * files exist inside the folder (symlinks leading out are dropped).
 *
 * @param folder the folder holding the skill file
 * @param options size cap
 * @returns the manifest, the folder, and its readable resources
 * @throws {SkillboxError} `skill_error` when the skill file is missing,
 *   leads out of the folder, is too big, or cannot be loaded
 * @example Load a folder
 * ```ts
 * import { loadSkillFolder } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: demo\ndescription: Demo\n---\nRead [notes](notes.md) and [gone](gone.md).");
 * await Deno.writeTextFile(`${dir}/notes.md`, "hi");
 * const skill = await loadSkillFolder(dir);
 * assert.deepEqual(skill.resources, ["notes.md"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadSkillFolder(
  folder: string,
  options: { maxBytes?: number } = {},
): Promise<SkillFolder> {
  const folderName = basename(resolve(folder));
  const dir = await Deno.realPath(resolve(folder));
  const found = await findSkillFile(dir);
  const file = join(dir, found?.name ?? SKILL_MD_NAMES[0]!);
  const fail = (detail: string, cause?: unknown): never => {
    throw new SkillboxError("skill_error", `Cannot load "${file}": ${detail}`, {
      cause,
    });
  };
  if (found === null) fail("the folder has no SKILL.md or skill.md");
  // A skill file that is a link out of its folder would put a host file into
  // the instructions sent to clients and the LLM.
  let real = "";
  try {
    real = await Deno.realPath(file);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), error);
  }
  const back = relative(dir, real);
  if (back.startsWith("..") || isAbsolute(back)) {
    fail("the skill file is a link that leads out of its folder");
  }
  const maxBytes = options.maxBytes ?? MAX_SKILL_MD_BYTES;
  const info = await Deno.stat(real);
  // Check the size before reading so a huge file is never pulled into memory.
  if (info.size > maxBytes) fail(`file is larger than ${maxBytes} bytes`);
  const manifest = parseSkillMd(await Deno.readTextFile(real), {
    path: file,
    maxBytes,
    folder: folderName,
  });
  if (found!.ignored !== null) {
    const warning = `the folder also has "${
      found!.ignored
    }", which is ignored: "${found!.name}" is read`;
    manifest.warnings.push(warning);
    manifest.metadata.warnings = [...manifest.warnings];
  }
  const resources: string[] = [];
  for (const link of manifest.links) {
    if (await insideFolder(dir, link)) resources.push(link);
  }
  return { ...manifest, folder: dir, file_path: file, resources };
}
