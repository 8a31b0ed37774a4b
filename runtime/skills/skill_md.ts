/**
 * Agent Skills folders: a `SKILL.md` (or A2E's lower-case `skill.md`) with
 * YAML frontmatter and a Markdown body that is the skill's instructions,
 * read into a manifest; and the files the body links to, read on demand.
 *
 * Every dialect loads: the Agent Skills specification's fields (`name`,
 * `description`, `license`, `compatibility`, `metadata`), A2E's (`version`,
 * `triggers`, `when_to_use`, `tools`, `max_turns`, ..., with `inputs` /
 * `outputs` parameter maps turned into JSON Schema), and other runtimes'
 * tool names (`tool_names.ts`). Loading is lenient, as the specification's
 * client guide recommends: a broken rule or a field of the wrong type is a
 * warning (in discovery's `metadata.warnings`) and the field keeps its
 * default; only YAML that cannot be parsed, a missing description or a file
 * too big make a skill unloadable. A folder with only `name` and
 * `description` loads with defaults: no tools, no schema, the host's LLM.
 *
 * Files the body links to are listed, not loaded: the agent loop's
 * `read_skill_file` tool reads them on demand, each checked to stay inside
 * the folder.
 *
 * @module
 */

import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { Buffer } from "node:buffer";
import { basename, isAbsolute, join, resolve } from "node:path";
import { type Document, isScalar, parseDocument, visit } from "yaml";
import { SkillboxError } from "../../protocol/errors.ts";
import { within } from "../confine/mount_rule.ts";
import { printableLine } from "../../protocol/lines.ts";
import {
  isPlainObject,
  type JsonObject,
  type JsonSchema,
} from "../../protocol/json.ts";
import {
  type CommandRule,
  describeCommandRule,
  mapToolNames,
  splitToolList,
} from "./tool_names.ts";
import { readScriptEnv, readScriptNet } from "./scripts/script_access.ts";

/** The biggest skill file accepted, in bytes. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;

/**
 * The longest YAML frontmatter accepted, in characters. yaml reads a
 * full-size file of short keys in seconds on the host's one thread, and real
 * frontmatter (a name, a description, a few schemas) is a few KiB.
 */
export const MAX_FRONTMATTER_CHARS = 32 * 1024;

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
  /** The folder's name: the name to match, and the fallback. @default none */
  folder?: string;
  /**
   * The file's size in bytes, when the text was read from one: its text
   * is longer in UTF-8 when some bytes were not UTF-8 (each reads as
   * U+FFFD, three bytes). @default the text's length in UTF-8
   */
  bytes?: number;
}

/** Keys that only A2E's dialect uses: one of them makes a file A2E's. */
export const A2E_KEYS: readonly string[] = [
  "triggers",
  "when_to_use",
  "when-to-use",
  "argument_hint",
  "toolkits",
  "tools",
  "max_turns",
  "max-turns",
  "timeout_seconds",
  "timeout-seconds",
  "inputs",
  "outputs",
  "input_schema",
  "output_schema",
  "llm",
  "category",
  "tags",
  "icon",
];

/**
 * Parses the text of a skill file.
 *
 * @param text the whole file
 * @param options where it came from, folder name
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
  // Counted, not encoded: a huge text is not copied to be measured.
  if ((options.bytes ?? Buffer.byteLength(text)) > MAX_SKILL_MD_BYTES) {
    cannotLoad(path, `file is larger than ${MAX_SKILL_MD_BYTES} bytes`);
  }
  const { data, body } = splitFrontmatter(text, path);
  const fields = new FieldReader(data);
  const a2e = A2E_KEYS.some((k) => data[k] !== undefined);
  let name: string;
  let description: string;
  try {
    name = checkSkillName(fields, { folder: options.folder, a2e });
    description = readDescription(fields);
  } catch (error) {
    cannotLoad(path, (error as Error).message);
  }
  const { tool_names: names, user_invocable, ...declared } = readA2eFields(
    fields,
  );
  const env = readScriptEnv(fields);
  const net = readScriptNet(fields);
  const metadata = readSpecMetadata(fields);
  // Any key no reader asked for is kept in metadata as written (another
  // runtime's field, e.g. `model`); so is the specification's
  // `allowed-tools`, beside the `tool_names` made of it.
  for (const [key, value] of Object.entries(data)) {
    if (fields.asked.has(key) && key !== "allowed-tools") continue;
    if (RESERVED_METADATA_KEYS.includes(key)) {
      fields.warn(`field "${key}" is reserved for skillbox: ignored`);
    } else metadata[key] = value as JsonObject[string];
  }
  metadata.dialect = a2e ? "a2e" : "agent-skills";
  if (Object.keys(names.mapped).length + names.unknown.length > 0) {
    metadata.tool_names = names;
  }
  if (declared.command_rules !== null) {
    metadata.command_rules = declared.command_rules.map(describeCommandRule);
  }
  if (user_invocable !== null) metadata.user_invocable = user_invocable;
  if (fields.warnings.length > 0) metadata.warnings = [...fields.warnings];
  return {
    name,
    description,
    ...declared,
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
 * Finds a folder's skill file (`SKILL.md` first, then `skill.md`). One
 * file under both names (a case-insensitive filesystem answers both with
 * it) counts once, as `SKILL.md`.
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
  // Each name looked up, not the folder listed: the catalog asks on every
  // request, and listing a folder of 100,000 files took 1.5 s.
  const found: { name: string; info: Deno.FileInfo }[] = [];
  for (const name of SKILL_MD_NAMES) {
    const info = await Deno.lstat(join(folder, name)).catch(() => null);
    if (info && !info.isDirectory) found.push({ name, info });
  }
  const [first, other] = found;
  if (first === undefined) return null;
  const same = other?.info.dev === first.info.dev &&
    other?.info.ino === first.info.ino;
  return { name: first.name, ignored: other && !same ? other.name : null };
}

/**
 * Reads a skill folder's `SKILL.md` (or `skill.md`) and checks which linked
 * files exist inside the folder (symlinks leading out are dropped).
 *
 * @param folder the folder holding the skill file
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
export async function loadSkillFolder(folder: string): Promise<SkillFolder> {
  const folderName = basename(resolve(folder));
  const dir = await Deno.realPath(resolve(folder));
  const found = await findSkillFile(dir);
  const file = join(dir, found?.name ?? SKILL_MD_NAMES[0]!);
  // Typed where declared, so a call narrows like a throw.
  const fail: (detail: string, cause?: unknown) => never = (d, c) =>
    cannotLoad(file, d, c);
  if (found === null) fail("the folder has no SKILL.md or skill.md");
  // A skill file that is a link out of its folder would put a host file into
  // the instructions sent to clients and the LLM.
  let real: string;
  try {
    real = await Deno.realPath(file);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), error);
  }
  if (!within(real, dir)) {
    fail("the skill file is a link that leads out of its folder");
  }
  const read = await readRegularFile(real, MAX_SKILL_MD_BYTES);
  if (!(read instanceof Uint8Array)) fail(read.problem);
  const manifest = parseSkillMd(new TextDecoder().decode(read), {
    path: file,
    folder: folderName,
    bytes: read.length,
  });
  if (found.ignored !== null) {
    const warning =
      `the folder also has "${found.ignored}", which is ignored: "${found.name}" is read`;
    manifest.warnings.push(warning);
    manifest.metadata.warnings = [...manifest.warnings];
  }
  const resources: string[] = [];
  for (const link of manifest.links) {
    if (await insideFolder(dir, link)) resources.push(link);
  }
  return { ...manifest, folder: dir, file_path: file, resources };
}

// The one shape of a skill file that cannot be loaded: a `skill_error`
// naming the file.
function cannotLoad(path: string, detail: string, cause?: unknown): never {
  throw new SkillboxError("skill_error", `Cannot load "${path}": ${detail}`, {
    cause,
  });
}

/** A skill file split into its frontmatter mapping and its body. */
export interface Frontmatter {
  /** The frontmatter as a plain mapping. */
  data: Record<string, unknown>;
  /** The Markdown body, trimmed. */
  body: string;
}

/**
 * Splits a skill file into its YAML frontmatter and Markdown body.
 *
 * @param text the whole file (a leading byte-order mark is dropped)
 * @param path where it came from, for messages
 * @returns the mapping and the body
 * @throws {SkillboxError} `skill_error` when there is no frontmatter, it is
 *   not closed, is longer than {@link MAX_FRONTMATTER_CHARS}, is not valid
 *   YAML (with its line in the file) or is not a
 *   mapping: the only shapes that make a skill unloadable
 * @example
 * ```ts
 * import { splitFrontmatter } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const { data, body } = splitFrontmatter("---\nname: pdf\n---\n# Use it\n", "SKILL.md");
 * assert.equal(data.name, "pdf");
 * assert.equal(body, "# Use it");
 * assert.throws(() => splitFrontmatter("---\nname: [x\n---\n", "s.md"), /YAML error at line 2/);
 * ```
 */
export function splitFrontmatter(text: string, path: string): Frontmatter {
  const fail: (detail: string) => never = (d) => cannotLoad(path, d);
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    fail('no YAML frontmatter: the file must start with a "---" line');
  }
  const end = lines.findIndex((l, i) =>
    i > 0 && (l.trimEnd() === "---" || l.trimEnd() === "...")
  );
  if (end < 0) fail('the YAML frontmatter has no closing "---" line');
  const yamlText = lines.slice(1, end).join("\n");
  if (yamlText.length > MAX_FRONTMATTER_CHARS) {
    fail(
      `the YAML frontmatter is longer than ${MAX_FRONTMATTER_CHARS} characters`,
    );
  }
  const body = lines.slice(end + 1).join("\n").trim();

  let data: unknown;
  try {
    // YAML 1.1's tags (`!!set`, `!!binary`, `!!timestamp`, ...) would make
    // a Set, Map, Buffer or Date: read as plain values, the frontmatter is
    // JSON, as served and as compared with an imported server's listing.
    const doc = parseDocument(yamlText, {
      // Not its " at line N, column M" and excerpt: the line is counted here.
      prettyErrors: false,
      resolveKnownTags: false,
      // Its warnings (a collection as a key) would go to the host's stderr.
      logLevel: "error",
      // Its check compares each key with every earlier one: a 256 KiB
      // mapping held the host's thread for minutes. duplicateKeyAt() is
      // the same check, linear.
      uniqueKeys: false,
    });
    // The earlier of yaml's first error and a duplicate key.
    const duplicate = duplicateKeyAt(doc);
    const first = doc.errors[0];
    const error = duplicate !== null && !(first && first.pos[0] < duplicate)
      ? { at: duplicate, message: "Map keys must be unique" }
      : first && { at: first.pos[0], message: first.message.split("\n")[0] };
    if (error) {
      // The frontmatter starts on the file's second line.
      const line = yamlText.slice(0, error.at).split("\n").length + 1;
      fail(`YAML error at line ${line}: ${error.message}`);
    }
    // A small alias budget defuses "billion laughs" documents.
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (error) {
    if (error instanceof SkillboxError) throw error;
    fail(`YAML error: ${error instanceof Error ? error.message : error}`);
  }
  if (!isPlainObject(data)) fail("the frontmatter must be a YAML mapping");
  // Aliases under the budget still share nodes: written out (discovery's
  // metadata, the console) they could make a 200 KB file 20 MB of JSON, or
  // never end when one names a node it is inside of.
  const most = EXPANSION * yamlText.length + 4096;
  if (expandsPast(data, most)) {
    fail(`the frontmatter's YAML aliases expand it past ${most} bytes`);
  }
  return { data, body };
}

// Where the first key that repeats an earlier key of its mapping starts,
// or null. Keys compare as yaml's own check compares them: scalars by
// value, other keys never.
function duplicateKeyAt(doc: Document): number | null {
  let at: number | null = null;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        // A Set finds NaN equal to NaN; yaml's === does not.
        if (!isScalar(key) || Number.isNaN(key.value)) continue;
        const start = key.range?.[0] ?? 0;
        if (seen.has(key.value) && (at === null || start < at)) at = start;
        seen.add(key.value);
      }
    },
  });
  return at;
}

// What a frontmatter may become, written out, for each character of its
// YAML: without aliases JSON is at most about 2.5 times as long (`[~,~]`).
const EXPANSION = 4;

// Whether a parsed value, written out as JSON, would pass `max` characters
// (about: quotes and separators counted, escapes not), without writing
// more of it than that. JSON.stringify writes a shared node each time it
// is named, and throws for a value inside itself, which is endless.
function expandsPast(value: unknown, max: number): boolean {
  let size = 0;
  const stop = new Error("past the limit");
  try {
    JSON.stringify(value, function (this: unknown, key, node) {
      if (!Array.isArray(this)) size += key.length + 3;
      if (typeof node === "string") size += node.length + 3;
      else if (node === null || typeof node !== "object") {
        size += String(node).length + 1;
      } else size += 2;
      if (size > max) throw stop;
      return node;
    });
  } catch {
    return true;
  }
  return false;
}

// The most warnings a skill file's reader keeps, and the longest, in
// characters (some quote the value refused).
const MAX_WARNINGS = 100;
const MAX_WARNING_CHARS = 400;

/**
 * Reads frontmatter fields leniently: a value of the wrong type is dropped
 * (the field takes its default) and a warning says so, because the Agent
 * Skills client guide asks hosts to load what they can.
 *
 * @example
 * ```ts
 * import { FieldReader } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const r = new FieldReader({ max_turns: -2, tags: "a, b", when_to_use: "Often" });
 * assert.equal(r.positive("max_turns", true), null);
 * assert.deepEqual(r.strList("tags"), ["a", "b"]);
 * assert.equal(r.str("when_to_use", "when-to-use"), "Often");
 * assert.ok(r.asked.has("when-to-use"));
 * assert.deepEqual(r.warnings, ['field "max_turns" must be a positive integer, got -2: ignored']);
 * ```
 */
export class FieldReader {
  /**
   * One line per problem found, in the order found: at most 100, then
   * one saying more were left out.
   */
  readonly warnings: string[] = [];
  /** Every key a reader asked for, set or not: the fields this file knows. */
  readonly asked: Set<string> = new Set();
  readonly #data: Record<string, unknown>;

  /** @param data the frontmatter mapping */
  constructor(data: Record<string, unknown>) {
    this.#data = data;
  }

  /**
   * The first of `keys` that is set (neither missing nor null).
   *
   * @param keys a field's spellings, preferred first
   * @returns the key found and its value, or null
   */
  pick(...keys: string[]): { key: string; value: unknown } | null {
    keys.forEach((key) => this.asked.add(key));
    for (const key of keys) {
      const value = this.#data[key];
      if (value !== undefined && value !== null) return { key, value };
    }
    return null;
  }

  /**
   * Records a warning.
   *
   * @param message one line
   */
  warn(message: string): void {
    // Served with every discover and printed in the banner: a hostile file
    // made 29,000 of them, 11 times its own size.
    // A key or value quoted in one may hold a newline or an escape.
    const count = this.warnings.length;
    if (count < MAX_WARNINGS) {
      this.warnings.push(cut(printableLine(message), MAX_WARNING_CHARS, "…"));
    } else if (count === MAX_WARNINGS) {
      this.warnings.push(
        `more warnings were left out: at most ${MAX_WARNINGS} are kept`,
      );
    }
  }

  /**
   * A string field; numbers and booleans are taken as their text.
   *
   * @param keys the field's spellings
   * @returns the string, or null when missing or of the wrong type
   */
  str(...keys: string[]): string | null {
    const found = this.pick(...keys);
    if (!found) return null;
    const { key, value } = found;
    if (typeof value === "number" || typeof value === "boolean") {
      return String(value);
    }
    if (typeof value !== "string") {
      this.warn(`field "${key}" must be a string: ignored`);
      return null;
    }
    return value;
  }

  /**
   * A string field cut to `max` characters, with a warning when cut.
   *
   * @param key the field
   * @param max the most characters kept
   * @returns the string (cut), or null
   */
  capped(key: string, max: number): string | null {
    const value = this.str(key);
    if (value === null || value.length <= max) return value;
    this.warn(
      `field "${key}" is ${value.length} characters, more than ${max}: cut to ${max}`,
    );
    return cut(value, max);
  }

  /**
   * A list of strings; a string is split on commas and white space (the
   * shorthand `tags: a, b` other runtimes write).
   *
   * @param keys the field's spellings
   * @returns the list, or null
   */
  strList(...keys: string[]): string[] | null {
    const found = this.pick(...keys);
    if (!found) return null;
    const { key, value } = found;
    if (typeof value === "string") {
      return value.split(/[,\s]+/).filter((s) => s.length > 0);
    }
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      this.warn(`field "${key}" must be a list of strings: ignored`);
      return null;
    }
    return [...value as string[]];
  }

  /**
   * A positive number (or integer).
   *
   * @param key the field; its `-` spelling is read too
   * @param int whether it must be an integer
   * @returns the number, or null
   */
  positive(key: string, int: boolean): number | null {
    const found = this.pick(key, key.replaceAll("_", "-"));
    if (!found) return null;
    const { value } = found;
    if (
      typeof value !== "number" || !(value > 0) || !Number.isFinite(value) ||
      (int && !Number.isInteger(value))
    ) {
      this.warn(
        `field "${found.key}" must be a positive ${
          int ? "integer" : "number"
        }, got ${JSON.stringify(value)}: ignored`,
      );
      return null;
    }
    return value;
  }

  /**
   * A boolean field (`true`/`false`, also as strings).
   *
   * @param keys the field's spellings
   * @returns the boolean, or null
   */
  bool(...keys: string[]): boolean | null {
    const found = this.pick(...keys);
    if (!found) return null;
    const { key, value } = found;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    this.warn(`field "${key}" must be true or false: ignored`);
    return null;
  }

  /**
   * A mapping field (e.g. a JSON Schema object).
   *
   * @param key the field
   * @returns the mapping, or null
   */
  mapping(key: string): JsonObject | null {
    const found = this.pick(key);
    if (!found) return null;
    if (isPlainObject(found.value)) return found.value;
    this.warn(`field "${key}" must be a mapping: ignored`);
    return null;
  }
}

/**
 * Cuts a string to at most `max` UTF-16 units without splitting a surrogate
 * pair, and marks the cut when asked to: skills' messages, events and
 * banner lines are all shortened here.
 *
 * @param text the string
 * @param max the most units kept
 * @param mark appended when something was cut, not counted in `max`
 *   (none by default)
 * @returns the string as it was, or cut and marked
 * @example
 * ```ts
 * import { cut } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * assert.equal(cut("abc", 2), "ab");
 * assert.equal(cut("a\u{1F600}", 2), "a");
 * assert.equal(cut("abc", 2, "…"), "ab…");
 * assert.equal(cut("ab", 2, "…"), "ab");
 * ```
 */
export function cut(text: string, max: number, mark = ""): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return text.slice(0, end) + mark;
}

/** The specification's longest `description`, in characters. */
export const MAX_DESCRIPTION_CHARS = 1024;

/** The specification's longest `compatibility`, in characters. */
export const MAX_COMPATIBILITY_CHARS = 500;

/** The specification's name rule: 1-64 lower-case letters, digits, single inner `-`. */
const SPEC_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A2E's names are snake_case (its reference skill is `example_analysis`). */
const A2E_NAME = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
/** What can name a skill at all: it goes on the wire and into messages. */
const USABLE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Options for {@link checkSkillName}. */
export interface CheckNameOptions {
  /** The folder's own name, the fallback and the name to match. @default none */
  folder?: string;
  /** The file uses A2E's dialect, whose names may hold `_`. @default false */
  a2e?: boolean;
}

/**
 * Reads `name` and says which rules it breaks. A missing or unusable name
 * (a path, spaces, control characters) falls back to the folder's name; a
 * usable name that breaks the specification's rule, or does not match its
 * folder, is kept with a warning.
 *
 * @param fields the frontmatter reader (warnings go there)
 * @param options the folder name, dialect
 * @returns the name to serve the skill under
 * @throws {SkillboxError} `skill_error` when neither the declared name nor
 *   the folder's name can name a skill
 * @example
 * ```ts
 * import { checkSkillName, FieldReader } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const ok = new FieldReader({ name: "pdf-forms" });
 * assert.equal(checkSkillName(ok, { folder: "pdf-forms" }), "pdf-forms");
 * assert.deepEqual(ok.warnings, []);
 * const odd = new FieldReader({ name: "PDF--Forms" });
 * assert.equal(checkSkillName(odd, { folder: "pdf" }), "PDF--Forms");
 * assert.equal(odd.warnings.length, 2);
 * assert.equal(checkSkillName(new FieldReader({}), { folder: "notes" }), "notes");
 * ```
 */
export function checkSkillName(
  fields: FieldReader,
  options: CheckNameOptions = {},
): string {
  const declared = fields.pick("name")?.value;
  const folder = options.folder;
  let name: string;
  let fromFolder = false;
  const text = typeof declared === "number" ? String(declared) : declared;
  if (typeof text === "string" && USABLE_NAME.test(text)) {
    name = text;
  } else {
    const why = text === undefined || text === null
      ? 'field "name" is missing'
      : typeof text !== "string"
      ? 'field "name" must be a string'
      : `name ${
        JSON.stringify(text.slice(0, 80))
      } cannot name a skill (letters, digits, ".", "_" and "-" only, at most 128)`;
    if (folder === undefined || !USABLE_NAME.test(folder)) {
      throw new SkillboxError(
        "skill_error",
        folder === undefined
          ? why
          : `${why}, and the folder name "${folder}" cannot stand in`,
      );
    }
    fields.warn(`${why}: using the folder name "${folder}"`);
    name = folder;
    fromFolder = true;
  }
  const rule = options.a2e ? A2E_NAME : SPEC_NAME;
  if (name.length > 64 || !rule.test(name)) {
    fields.warn(
      `name "${name}" breaks the Agent Skills rule (1-64 lower-case letters, digits and "-"${
        options.a2e ? ' or "_"' : ""
      }, no leading, trailing or double "-")`,
    );
  }
  if (!fromFolder && folder !== undefined && folder !== name) {
    fields.warn(`name "${name}" does not match its folder "${folder}"`);
  }
  return name;
}

/**
 * Why an Agent Skills folder's name breaks the Agent Skills naming rules
 * (1 to 64 lower-case letters, digits and single hyphens, no leading or
 * trailing hyphen, equal to the folder's name), or null when it keeps them.
 * MCP clients that verify skills (`skills/list`, SEP-2640) reject a skill
 * that breaks them, so such a skill is left out of `skills/list`.
 *
 * @param name the skill's `name`
 * @param folder the skill's folder (its last segment is compared)
 * @returns the problem, or null
 * @example
 * ```ts
 * import { agentSkillsNameProblem } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * assert.equal(agentSkillsNameProblem("find-todos", "/s/find-todos"), null);
 * assert.match(agentSkillsNameProblem("find_todos", "/s/find_todos") ?? "", /lower-case/);
 * assert.match(agentSkillsNameProblem("notes", "/s/my-notes") ?? "", /folder "my-notes"/);
 * ```
 */
export function agentSkillsNameProblem(
  name: string,
  folder: string,
): string | null {
  if (name.length > 64 || !SPEC_NAME.test(name)) {
    return `name "${name}" breaks the Agent Skills naming rules (1 to 64 lower-case letters, digits and single hyphens)`;
  }
  const dir = basename(folder);
  if (dir !== name) {
    return `name "${name}" does not match its folder "${dir}" as the Agent Skills rules require`;
  }
  return null;
}

/**
 * Reads `description`: required, cut to {@link MAX_DESCRIPTION_CHARS} with
 * a warning when longer.
 *
 * @param fields the frontmatter reader (warnings go there)
 * @returns the description
 * @throws {SkillboxError} `skill_error` when it is missing, empty or not text
 * @example
 * ```ts
 * import { FieldReader, readDescription } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const r = new FieldReader({ description: "x".repeat(2000) });
 * assert.equal(readDescription(r).length, 1024);
 * assert.match(r.warnings[0]!, /2000 characters, more than 1024: cut/);
 * ```
 */
export function readDescription(fields: FieldReader): string {
  const found = fields.pick("description");
  if (
    found === null ||
    (typeof found.value !== "string" && typeof found.value !== "number") ||
    String(found.value).trim() === ""
  ) {
    throw new SkillboxError(
      "skill_error",
      found === null || typeof found.value === "string"
        ? 'field "description" is required'
        : 'field "description" must be text',
    );
  }
  return fields.capped("description", MAX_DESCRIPTION_CHARS)!;
}

/** Keys skillbox itself writes into a skill's discovery metadata. */
export const RESERVED_METADATA_KEYS: readonly string[] = [
  "blocked_reason",
  "command_rules",
  "dialect",
  "format",
  "resources",
  "tool_names",
  "user_invocable",
  "warnings",
];

/**
 * Reads the specification's `license`, `compatibility` and `metadata` (a
 * string map; other values are kept with a warning). Keys skillbox writes
 * itself ({@link RESERVED_METADATA_KEYS}) are dropped from the author's
 * map, so a skill cannot hide its own warnings.
 *
 * @param fields the frontmatter reader (warnings go there)
 * @returns the discovery metadata these fields make
 * @example
 * ```ts
 * import { FieldReader, readSpecMetadata } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const r = new FieldReader({ license: "MIT", metadata: { author: "ann", warnings: "none" } });
 * assert.deepEqual(readSpecMetadata(r), { author: "ann", license: "MIT" });
 * assert.match(r.warnings[0]!, /"metadata.warnings" is reserved/);
 * ```
 */
export function readSpecMetadata(fields: FieldReader): JsonObject {
  const out: JsonObject = {};
  const declared = fields.mapping("metadata");
  for (const [key, value] of Object.entries(declared ?? {})) {
    if (RESERVED_METADATA_KEYS.includes(key)) {
      fields.warn(`field "metadata.${key}" is reserved for skillbox: ignored`);
      continue;
    }
    if (typeof value !== "string") {
      fields.warn(
        `field "metadata.${key}" should be a string (the specification's metadata is a string map)`,
      );
    }
    out[key] = value;
  }
  const license = fields.str("license");
  if (license !== null) out.license = license;
  const compatibility = fields.capped("compatibility", MAX_COMPATIBILITY_CHARS);
  if (compatibility !== null) out.compatibility = compatibility;
  return out;
}

/** A skill's own LLM choice, as written in its frontmatter (`llm:`). */
export interface SkillLlmConfig {
  provider_name: string;
  provider_credentials: JsonObject;
  provider_config: JsonObject;
}

/** What the A2E fields say, with defaults filled in. */
export interface A2eFields {
  version: string;
  triggers: string[];
  when_to_use: string;
  argument_hint: string;
  /** `user-invocable`. @default null (not said) */
  user_invocable: boolean | null;
  /** skillbox tool names, from `tools` and `allowed-tools`. */
  tools: string[] | null;
  toolkits: string[] | null;
  max_turns: number | null;
  timeout_seconds: number | null;
  category: string | null;
  tags: string[] | null;
  icon: string | null;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  llm: SkillLlmConfig | null;
  /** What `run_command` may run; null when not narrowed. */
  command_rules: CommandRule[] | null;
  /** Names that were translated, and names that grant nothing. */
  tool_names: { mapped: Record<string, string[]>; unknown: string[] };
}

/**
 * Reads the A2E fields (and the specification's `allowed-tools`).
 *
 * @param fields the frontmatter reader (warnings go there)
 * @returns the fields, with defaults
 * @example A2E's dialect with other runtimes' tool names
 * ```ts
 * import { FieldReader, readA2eFields } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const f = readA2eFields(new FieldReader({
 *   triggers: ["sum a csv"], argument_hint: "<file>", "user-invocable": true,
 *   tools: ["Read", "Grep"], inputs: { file: { type: "string", required: true } },
 * }));
 * assert.deepEqual(f.tools, ["read_file", "grep"]);
 * assert.equal(f.argument_hint, "<file>");
 * assert.deepEqual(f.input_schema.required, ["file"]);
 * ```
 */
export function readA2eFields(fields: FieldReader): A2eFields {
  const tools = readToolNames(fields, "tools");
  const allowed = readToolNames(fields, "allowed-tools");
  // Mapping no names maps nothing and narrows nothing.
  const mapping = mapToolNames([...tools ?? [], ...allowed ?? []]);
  if (mapping.unknown.length > 0) {
    fields.warn(
      `tool names skillbox does not know grant nothing: ${
        mapping.unknown.map((n) => `"${n}"`).join(", ")
      }`,
    );
  }
  return {
    version: fields.str("version") ?? "1.0.0",
    triggers: fields.strList("triggers") ?? [],
    when_to_use: fields.str("when_to_use", "when-to-use") ?? "",
    argument_hint: fields.str("argument_hint", "argument-hint") ?? "",
    user_invocable: fields.bool("user-invocable", "user_invocable"),
    // Discovery tells a file that declares no tool list (null) from one
    // that declares an empty one.
    tools: tools === null && allowed === null ? null : mapping.tools,
    toolkits: fields.strList("toolkits"),
    // A count: 2.5 turns would allow three.
    max_turns: fields.positive("max_turns", true),
    timeout_seconds: fields.positive("timeout_seconds", false),
    category: fields.str("category"),
    tags: fields.strList("tags"),
    icon: fields.str("icon"),
    input_schema: readSchema(fields, "input_schema", "inputs"),
    output_schema: readSchema(fields, "output_schema", "outputs"),
    llm: readLlm(fields),
    command_rules: mapping.commandRules,
    tool_names: { mapped: mapping.mapped, unknown: mapping.unknown },
  };
}

function readToolNames(fields: FieldReader, key: string): string[] | null {
  const found = fields.pick(key);
  if (!found) return null;
  if (typeof found.value === "string") return splitToolList(found.value);
  if (
    Array.isArray(found.value) &&
    found.value.every((v) => typeof v === "string")
  ) {
    return found.value.flatMap(splitToolList);
  }
  fields.warn(`field "${key}" must be a list of tool names: ignored`);
  return null;
}

function readSchema(
  fields: FieldReader,
  schemaKey: string,
  mapKey: string,
): JsonSchema {
  const schema = fields.mapping(schemaKey);
  const map = fields.pick(mapKey);
  if (schema !== null) {
    if (map) {
      fields.warn(`field "${mapKey}" is ignored: "${schemaKey}" is given`);
    }
    return schema as JsonSchema;
  }
  if (!map) return {};
  const converted = parameterMapToSchema(map.value, mapKey);
  converted.warnings.forEach((w) => fields.warn(w));
  return converted.schema;
}

/**
 * Reads a skill's own LLM choice, `llm`: a provider's name, or a mapping
 * with a non-empty `provider_name` and optional `provider_credentials` and
 * `provider_config` mappings. A code module's `llm_config` is read by it
 * too (`catalog.ts`), so both kinds of skill accept the same shapes.
 *
 * @param fields the frontmatter reader (warnings go there)
 * @returns the choice, or null for the host's default
 * @example
 * ```ts
 * import { FieldReader, readLlm } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * assert.equal(readLlm(new FieldReader({ llm: "openai" }))?.provider_name, "openai");
 * const r = new FieldReader({ llm: { provider_name: "" } });
 * assert.equal(readLlm(r), null);
 * assert.match(r.warnings[0]!, /host's default LLM is used/);
 * ```
 */
export function readLlm(fields: FieldReader): SkillLlmConfig | null {
  const found = fields.pick("llm");
  if (!found) return null;
  const value = found.value;
  if (typeof value === "string" && value !== "") {
    return {
      provider_name: value,
      provider_credentials: {},
      provider_config: {},
    };
  }
  const v = isPlainObject(value) ? value : null;
  if (v === null || typeof v.provider_name !== "string" || !v.provider_name) {
    fields.warn(
      'field "llm" must be a provider name or a mapping with "provider_name": the host\'s default LLM is used',
    );
    return null;
  }
  const obj = (k: string): JsonObject => {
    const x = v[k];
    if (isPlainObject(x)) return x;
    if (x !== undefined && x !== null) {
      fields.warn(`field "llm.${k}" must be a mapping: ignored`);
    }
    return {};
  };
  return {
    provider_name: v.provider_name,
    provider_credentials: obj("provider_credentials"),
    provider_config: obj("provider_config"),
  };
}

const TYPE_NAMES: ReadonlyMap<string, string> = new Map([
  ["string", "string"],
  ["str", "string"],
  ["text", "string"],
  ["integer", "integer"],
  ["int", "integer"],
  ["number", "number"],
  ["float", "number"],
  ["boolean", "boolean"],
  ["bool", "boolean"],
  ["array", "array"],
  ["list", "array"],
  ["object", "object"],
  ["dict", "object"],
  ["map", "object"],
  ["null", "null"],
]);

// Nesting deeper than this is cut: a parameter map is a form, not a program.
const MAX_DEPTH = 8;
const MAX_PARAMETERS = 200;

/**
 * Turns an A2E parameter map (`inputs`/`outputs`) into an object JSON
 * Schema. A map names each parameter; its value is a type name
 * (`path: string`) or a mapping with `type`, `description`, `required`,
 * `enum`, `default`, `items` and nested `properties`. A list of such
 * mappings, each with a `name` (A2E's `ToolParameter` shape), is read the
 * same way.
 *
 * @param value the field's value, as parsed from YAML
 * @param key the field's name, for warnings
 * @returns the schema, and one warning per entry that could not be read
 * @example
 * ```ts
 * import { parameterMapToSchema } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const { schema, warnings } = parameterMapToSchema({
 *   path: { type: "str", description: "CSV file", required: true },
 *   limit: "int",
 * }, "inputs");
 * assert.deepEqual(schema, {
 *   type: "object",
 *   properties: { path: { type: "string", description: "CSV file" }, limit: { type: "integer" } },
 *   required: ["path"],
 * });
 * assert.deepEqual(warnings, []);
 * ```
 */
export function parameterMapToSchema(
  value: unknown,
  key: string,
): { schema: JsonSchema; warnings: string[] } {
  const warnings: string[] = [];
  const schema = objectSchema(value, key, 0, warnings);
  return { schema: schema ?? {}, warnings };
}

function objectSchema(
  value: unknown,
  path: string,
  depth: number,
  warnings: string[],
): JsonSchema | null {
  let entries: [string, unknown][];
  if (Array.isArray(value)) {
    entries = [];
    for (const [i, item] of value.entries()) {
      const name = isPlainObject(item) ? item.name : undefined;
      if (typeof name !== "string" || name === "") {
        warnings.push(`field "${path}[${i}]" has no "name": ignored`);
        continue;
      }
      entries.push([name, item]);
    }
  } else if (isPlainObject(value)) {
    entries = Object.entries(value);
  } else {
    warnings.push(`field "${path}" must be a parameter map: ignored`);
    return null;
  }
  if (entries.length > MAX_PARAMETERS) {
    warnings.push(
      `field "${path}" has ${entries.length} parameters, more than ${MAX_PARAMETERS}: the rest are ignored`,
    );
    entries = entries.slice(0, MAX_PARAMETERS);
  }
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [name, spec] of entries) {
    const where = `${path}.${name}`;
    const prop = parameterSchema(spec, where, depth, warnings);
    if (prop === null) continue;
    properties[name] = prop.schema;
    if (prop.required) required.push(name);
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

function parameterSchema(
  spec: unknown,
  path: string,
  depth: number,
  warnings: string[],
): { schema: JsonSchema; required: boolean } | null {
  if (typeof spec === "string") {
    const type = typeName(spec, path, warnings);
    return { schema: type ? { type } : {}, required: false };
  }
  if (!isPlainObject(spec)) {
    warnings.push(
      `field "${path}" must be a type name or a mapping: ignored`,
    );
    return null;
  }
  const schema: JsonSchema = {};
  if (typeof spec.type === "string") {
    const type = typeName(spec.type, path, warnings);
    if (type) schema.type = type;
  } else if (spec.type !== undefined) {
    warnings.push(`field "${path}.type" must be a type name: ignored`);
  }
  if (typeof spec.description === "string") {
    schema.description = spec.description;
  }
  if (Array.isArray(spec.enum)) schema.enum = spec.enum;
  if (spec.default !== undefined) schema.default = spec.default as never;
  if (spec.properties !== undefined && spec.properties !== null) {
    if (depth + 1 >= MAX_DEPTH) {
      warnings.push(`field "${path}" nests too deep: its properties are cut`);
    } else {
      const inner = objectSchema(
        spec.properties,
        `${path}.properties`,
        depth + 1,
        warnings,
      );
      if (inner) Object.assign(schema, inner);
    }
  }
  if (spec.items !== undefined && depth + 1 < MAX_DEPTH) {
    const item = parameterSchema(
      spec.items,
      `${path}.items`,
      depth + 1,
      warnings,
    );
    if (item) schema.items = item.schema;
  }
  return { schema, required: spec.required === true };
}

function typeName(
  name: string,
  path: string,
  warnings: string[],
): string | null {
  const type = TYPE_NAMES.get(name.toLowerCase());
  if (type) return type;
  warnings.push(`field "${path}" has an unknown type "${name}": any value`);
  return null;
}

/** The tool the agent loop offers to read a skill's linked files. */
export const READ_SKILL_FILE_TOOL = "read_skill_file";

/** The biggest linked file `readSkillFile` returns, in bytes. */
export const MAX_RESOURCE_BYTES = 256 * 1024;

/**
 * A skill file whose bytes are not what its listing promised (a fetched
 * file of an imported skill whose size or digest differs): the run that
 * asked for it fails with this, and the model never sees the bytes.
 *
 * @example
 * ```ts
 * import { SkillFileRefusedError } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const error = new SkillFileRefusedError('File "a.md" of skill "kit__a" is refused: its digest differs');
 * assert.equal(error.code, "skill_error");
 * ```
 */
export class SkillFileRefusedError extends SkillboxError {
  /** @param message what differs, sentence case */
  constructor(message: string) {
    super("skill_error", message);
    this.name = "SkillFileRefusedError";
  }
}

/**
 * Finds the relative link targets of a Markdown body: inline links, images
 * and reference definitions, without URLs, anchors, or paths that climb out
 * of the folder.
 *
 * @param markdown the body
 * @returns unique relative paths, in order of first appearance
 * @example
 * ```ts
 * import { findLinks } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const body = "See [a](ref/a.md#top), [web](https://x.dev), [up](../secret) and\n[b]: ./b.txt";
 * assert.deepEqual(findLinks(body), ["ref/a.md", "b.txt"]);
 * ```
 */
export function findLinks(markdown: string): string[] {
  // A Set: a hostile body holds tens of thousands of distinct links.
  const found = new Set<string>();
  // No "[" in a link's text, no "(" in its target: each match attempt then
  // stops at the next one's start, so a body is scanned in linear time.
  const patterns = [
    /!?\[[^[\]\n]*\]\(\s*<?([^()\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm,
  ];
  for (const pattern of patterns) {
    for (const match of markdown.matchAll(pattern)) {
      const target = normalizeLink(match[1] ?? "");
      if (target !== null) found.add(target);
    }
  }
  return [...found];
}

/**
 * Normalizes a link target to a path relative to the skill folder.
 *
 * @param raw the target as written
 * @returns the path, or null for URLs, anchors, absolute paths and paths
 *   that climb out
 * @example
 * ```ts
 * import { normalizeLink } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeLink("./ref/a%20b.md#x"), "ref/a b.md");
 * assert.equal(normalizeLink("../up.md"), null);
 * ```
 */
export function normalizeLink(raw: string): string | null {
  let target = raw.split("#")[0]!.split("?")[0]!;
  if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  try {
    target = decodeURIComponent(target);
  } catch {
    return null;
  }
  if (isAbsolute(target) || target.startsWith("/")) return null;
  const parts = target.replaceAll("\\", "/").split("/").filter((p) =>
    p !== "" && p !== "."
  );
  if (parts.length === 0 || parts.includes("..")) return null;
  return parts.join("/");
}

/**
 * Resolves a relative path inside a folder, following links, and tells
 * whether it is a regular file that stays inside.
 *
 * @param dir the folder (a real path)
 * @param rel the relative path
 * @returns the file's real path, or null when it leaves the folder, is
 *   missing or is not a regular file
 * @example
 * ```ts
 * import { insideFolder } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(`${dir}/a.md`, "a");
 * assert.equal(await insideFolder(dir, "a.md"), `${dir}/a.md`);
 * assert.equal(await insideFolder(dir, "../etc/passwd"), null);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function insideFolder(
  dir: string,
  rel: string,
): Promise<string | null> {
  try {
    const real = await Deno.realPath(join(dir, rel));
    if (real === dir || !within(real, dir)) return null;
    const info = await Deno.stat(real);
    return info.isFile ? real : null;
  } catch {
    return null;
  }
}

/**
 * Reads one of a skill folder's linked files, on demand.
 *
 * @param skill the loaded folder (only its `resources` are readable)
 * @param path a path relative to the folder, as linked
 * @returns the file's text
 * @throws {SkillboxError} `tool_denied` for a file that is not a listed
 *   resource, `tool_error` when it is too big or unreadable
 * @example Read a linked file
 * ```ts
 * import { loadSkillFolder, readSkillFile } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: demo\ndescription: Demo\n---\nSee [notes](notes.md).");
 * await Deno.writeTextFile(`${dir}/notes.md`, "hi");
 * const skill = await loadSkillFolder(dir);
 * assert.equal(await readSkillFile(skill, "./notes.md"), "hi");
 * await assert.rejects(readSkillFile(skill, "SKILL.md"), /not a file linked/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readSkillFile(
  skill: { name: string; folder: string; resources: readonly string[] },
  path: string,
): Promise<string> {
  const rel = normalizeLink(path);
  if (rel === null || !skill.resources.includes(rel)) {
    throw new SkillboxError(
      "tool_denied",
      `Cannot read "${path}": not a file linked from skill "${skill.name}" (linked: ${
        skill.resources.map((r) => `"${r}"`).join(", ") || "none"
      })`,
    );
  }
  // Re-check on every read: the folder may have changed since it was loaded.
  const real = await insideFolder(skill.folder, rel);
  if (real === null) {
    throw new SkillboxError(
      "tool_denied",
      `Cannot read "${path}": it no longer resolves inside the skill folder`,
    );
  }
  const read = await readRegularFile(real, MAX_RESOURCE_BYTES);
  if (read instanceof Uint8Array) return new TextDecoder().decode(read);
  throw new SkillboxError(
    "tool_error",
    `Cannot read "${path}": ${read.problem}`,
  );
}

// How a folder's file is opened: never through a link put in its place
// since it was checked, and without waiting for a writer (a named pipe
// blocks an ordinary open until one comes, holding a thread forever).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) |
  (constants.O_NONBLOCK ?? 0);

/**
 * Reads a file of a skill folder, checking what was opened rather
 * than what a path named a moment before (the folder may change while it
 * is read): it must be a regular file, and no more than `max` bytes are
 * ever read, however it grows.
 *
 * @param path the file's real path (a link there is refused)
 * @param max the largest size accepted, in bytes
 * @returns its bytes, or why it was not read
 */
async function readRegularFile(
  path: string,
  max: number,
): Promise<Uint8Array | { problem: string }> {
  let handle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { problem: "it is not a regular file" };
    // Bigger is refused before reading, so a huge file is never pulled in.
    if (info.size > max) return { problem: `file is larger than ${max} bytes` };
    // At most one byte past `max` (`end` counts it in), to tell a file
    // grown since its size was read.
    const bytes = Buffer.concat(
      await Array.fromAsync(
        handle.createReadStream({ start: 0, end: max, autoClose: false }),
      ),
    );
    if (bytes.length > max) {
      return { problem: `file is larger than ${max} bytes` };
    }
    return bytes;
  } finally {
    await handle.close();
  }
}
