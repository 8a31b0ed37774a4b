/**
 * Agent Skills folders: a `SKILL.md` with YAML frontmatter (`name`,
 * `description`, plus the optional A2E fields) and a Markdown body that is
 * the skill's instructions.
 *
 * A folder written for another runtime, with only `name` and `description`,
 * loads with defaults: no tools, no schema, the host's default LLM.
 *
 * Files the body links to (`[the style guide](reference/style.md)`) are
 * listed, not loaded: the agent loop offers the model a `read_skill_file`
 * tool that reads exactly those files, on demand (see `agent_loop.ts`). This
 * keeps the folder's own files reachable without granting the skill's
 * filesystem tools access to the host's `skills/` tree.
 *
 * @module
 */

import { parseDocument } from "yaml";
import { isAbsolute, join, relative, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/models.ts";
import type { JsonSchema } from "../../sandbox/sdk/types.ts";

/** The biggest `SKILL.md` accepted, in bytes. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;

/** The biggest linked file `readSkillFile` returns, in bytes. */
export const MAX_RESOURCE_BYTES = 256 * 1024;

/** A skill's own LLM choice, as written in `SKILL.md` (`llm:`). */
export interface SkillLlmConfig {
  provider_name: string;
  provider_credentials: JsonObject;
  provider_config: JsonObject;
}

/** What a `SKILL.md` declares, with defaults filled in. */
export interface SkillMdManifest {
  name: string;
  description: string;
  /** @default "1.0.0" */
  version: string;
  /** @default [] */
  triggers: string[];
  /** @default "" */
  when_to_use: string;
  /** From `argument-hint` (or `argument_hint`). @default "" */
  argument_hint: string;
  /** Tool names the skill may call. @default null (none) */
  tools: string[] | null;
  /** Toolkits whose every tool the skill may call. @default null (none) */
  toolkits: string[] | null;
  /** @default null (the host's default) */
  max_turns: number | null;
  /** @default null (the request's timeout and the policy cap) */
  timeout_seconds: number | null;
  category: string | null;
  tags: string[] | null;
  icon: string | null;
  /** @default {} */
  input_schema: JsonSchema;
  /** @default {} */
  output_schema: JsonSchema;
  /** From `llm:`; a bare string names the provider. @default null */
  llm: SkillLlmConfig | null;
  /** `license`, `compatibility`, `metadata` and other extra keys. */
  metadata: JsonObject;
  /** The Markdown body. */
  instructions: string;
  /** Relative link targets found in the body (not yet checked on disk). */
  links: string[];
}

/** Options for {@link parseSkillMd}. */
export interface ParseSkillMdOptions {
  /** Where the text came from, for messages. @default "SKILL.md" */
  path?: string;
  /** Size cap in bytes. @default MAX_SKILL_MD_BYTES */
  maxBytes?: number;
}

const KNOWN_KEYS = new Set([
  "name",
  "description",
  "version",
  "triggers",
  "when_to_use",
  "when-to-use",
  "argument-hint",
  "argument_hint",
  "tools",
  "toolkits",
  "max_turns",
  "max-turns",
  "timeout_seconds",
  "timeout-seconds",
  "category",
  "tags",
  "icon",
  "input_schema",
  "output_schema",
  "llm",
  "metadata",
]);

/**
 * Parses the text of a `SKILL.md`.
 *
 * @param text the whole file
 * @param options where it came from, size cap
 * @returns the manifest with defaults filled in
 * @throws {SkillboxError} `skill_error` when the file is too big, has no
 *   frontmatter, has a YAML error (with its line) or a field of the wrong type
 * @example The minimal folder another runtime would write
 * ```ts
 * import { parseSkillMd } from "./skill_md.ts";
 * import assert from "node:assert/strict";
 * const m = parseSkillMd("---\nname: pdf\ndescription: Fill PDF forms\n---\nUse [the guide](guide.md).\n");
 * assert.equal(m.name, "pdf");
 * assert.equal(m.version, "1.0.0");
 * assert.equal(m.tools, null);
 * assert.deepEqual(m.links, ["guide.md"]);
 * ```
 */
export function parseSkillMd(
  text: string,
  options: ParseSkillMdOptions = {},
): SkillMdManifest {
  const path = options.path ?? "SKILL.md";
  const fail = (detail: string): never => {
    throw new SkillboxError(
      "skill_error",
      `Cannot load "${path}": ${detail}`,
    );
  };
  const maxBytes = options.maxBytes ?? MAX_SKILL_MD_BYTES;
  // Characters never outnumber UTF-8 bytes, so this first check is cheap.
  if (
    text.length > maxBytes ||
    new TextEncoder().encode(text).length > maxBytes
  ) {
    fail(`file is larger than ${maxBytes} bytes`);
  }
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    fail('no YAML frontmatter: the file must start with a "---" line');
  }
  const end = lines.findIndex((l, i) =>
    i > 0 && (l.trimEnd() === "---" || l.trimEnd() === "...")
  );
  if (end < 0) fail('the YAML frontmatter has no closing "---" line');
  const yamlText = lines.slice(1, end).join("\n");
  const body = lines.slice(end + 1).join("\n").trim();

  let data: unknown;
  try {
    const doc = parseDocument(yamlText, { prettyErrors: true });
    const first = doc.errors[0];
    if (first) {
      // The frontmatter starts on the file's second line.
      const line = (first.linePos?.[0]?.line ?? 0) + 1;
      const message = first.message.split("\n")[0]?.replace(/ at line.*$/, "");
      fail(`YAML error at line ${line}: ${message}`);
    }
    // A small alias budget defuses "billion laughs" documents.
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (error) {
    if (error instanceof SkillboxError) throw error;
    fail(`YAML error: ${error instanceof Error ? error.message : error}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    fail("the frontmatter must be a YAML mapping");
  }
  const fm = data as Record<string, unknown>;
  const field = (...keys: string[]): unknown => {
    for (const k of keys) {
      if (fm[k] !== undefined && fm[k] !== null) return fm[k];
    }
    return undefined;
  };
  const str = (key: string, value: unknown, max = 10_000): string | null => {
    if (value === undefined) return null;
    if (typeof value === "number") return String(value);
    if (typeof value !== "string") fail(`field "${key}" must be a string`);
    if ((value as string).length > max) {
      fail(`field "${key}" is longer than ${max} characters`);
    }
    return value as string;
  };
  const strList = (key: string, value: unknown): string[] | null => {
    if (value === undefined) return null;
    // `tools: read_file, grep` is a common shorthand in other runtimes.
    if (typeof value === "string") {
      return value.split(/[,\s]+/).filter((s) => s.length > 0);
    }
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      fail(`field "${key}" must be a list of strings`);
    }
    return value as string[];
  };
  const positive = (key: string, value: unknown, int: boolean) => {
    if (value === undefined) return null;
    if (
      typeof value !== "number" || !(value > 0) || !Number.isFinite(value) ||
      (int && !Number.isInteger(value))
    ) {
      fail(
        `field "${key}" must be a positive ${int ? "integer" : "number"}, got ${
          JSON.stringify(value)
        }`,
      );
    }
    return value as number;
  };
  const schema = (key: string): JsonSchema => {
    const value = fm[key];
    if (value === undefined || value === null) return {};
    if (typeof value !== "object" || Array.isArray(value)) {
      fail(`field "${key}" must be a JSON Schema object`);
    }
    return value as JsonSchema;
  };

  const name = str("name", fm.name, 64);
  if (!name) fail('field "name" is required');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name!)) {
    fail(
      `field "name" must be letters, digits, ".", "_" or "-", got "${name}"`,
    );
  }
  const description = str("description", fm.description, 4096);
  if (!description?.trim()) fail('field "description" is required');

  const metadata: JsonObject = {};
  const declared = fm.metadata;
  if (declared !== undefined && declared !== null) {
    if (typeof declared !== "object" || Array.isArray(declared)) {
      fail('field "metadata" must be a mapping');
    }
    Object.assign(metadata, declared);
  }
  // Keep what other runtimes put in the frontmatter (license, compatibility,
  // allowed-tools) without acting on it.
  for (const [k, v] of Object.entries(fm)) {
    if (!KNOWN_KEYS.has(k)) metadata[k] = v;
  }

  return {
    name: name!,
    description: description!,
    version: str("version", fm.version, 64) ?? "1.0.0",
    triggers: strList("triggers", fm.triggers) ?? [],
    when_to_use: str("when_to_use", field("when_to_use", "when-to-use")) ??
      "",
    argument_hint:
      str("argument-hint", field("argument-hint", "argument_hint"), 1000) ??
        "",
    tools: strList("tools", fm.tools),
    toolkits: strList("toolkits", fm.toolkits),
    max_turns: positive("max_turns", field("max_turns", "max-turns"), true),
    timeout_seconds: positive(
      "timeout_seconds",
      field("timeout_seconds", "timeout-seconds"),
      false,
    ),
    category: str("category", fm.category, 200),
    tags: strList("tags", fm.tags),
    icon: str("icon", fm.icon),
    input_schema: schema("input_schema"),
    output_schema: schema("output_schema"),
    llm: parseLlm(fm.llm, fail),
    metadata,
    instructions: body,
    links: findLinks(body),
  };
}

function parseLlm(
  value: unknown,
  fail: (detail: string) => never,
): SkillLlmConfig | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    return {
      provider_name: value,
      provider_credentials: {},
      provider_config: {},
    };
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    fail('field "llm" must be a provider name or a mapping');
  }
  const v = value as Record<string, unknown>;
  if (typeof v.provider_name !== "string" || v.provider_name === "") {
    fail('field "llm.provider_name" must be a string');
  }
  const obj = (k: string): JsonObject => {
    const x = v[k];
    if (x === undefined || x === null) return {};
    if (typeof x !== "object" || Array.isArray(x)) {
      fail(`field "llm.${k}" must be a mapping`);
    }
    return x as JsonObject;
  };
  return {
    provider_name: v.provider_name as string,
    provider_credentials: obj("provider_credentials"),
    provider_config: obj("provider_config"),
  };
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
  const found: string[] = [];
  const patterns = [
    /!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm,
  ];
  for (const pattern of patterns) {
    for (const match of markdown.matchAll(pattern)) {
      const target = normalizeLink(match[1] ?? "");
      if (target !== null && !found.includes(target)) found.push(target);
    }
  }
  return found;
}

function normalizeLink(raw: string): string | null {
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

/** A loaded Agent Skills folder. */
export interface SkillFolder extends SkillMdManifest {
  /** Absolute path of the folder. */
  folder: string;
  /** Absolute path of its `SKILL.md`. */
  file_path: string;
  /** Linked files that exist as regular files inside the folder. */
  resources: string[];
}

/**
 * Reads a skill folder's `SKILL.md` and checks which linked files exist
 * inside the folder (symlinks leading out are dropped).
 *
 * @param folder the folder holding `SKILL.md`
 * @param options size cap
 * @returns the manifest, the folder, and its readable resources
 * @throws {SkillboxError} `skill_error` when `SKILL.md` is missing or invalid
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
  const dir = await Deno.realPath(resolve(folder));
  const file = join(dir, "SKILL.md");
  const maxBytes = options.maxBytes ?? MAX_SKILL_MD_BYTES;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(file);
  } catch (error) {
    throw new SkillboxError(
      "skill_error",
      `Cannot load "${file}": ${
        error instanceof Error ? error.message : error
      }`,
      { cause: error },
    );
  }
  // Check the size before reading so a huge file is never pulled into memory.
  if (info.size > maxBytes) {
    throw new SkillboxError(
      "skill_error",
      `Cannot load "${file}": file is larger than ${maxBytes} bytes`,
    );
  }
  const manifest = parseSkillMd(await Deno.readTextFile(file), {
    path: file,
    maxBytes,
  });
  const resources: string[] = [];
  for (const link of manifest.links) {
    if (await insideFolder(dir, link)) resources.push(link);
  }
  return { ...manifest, folder: dir, file_path: file, resources };
}

async function insideFolder(dir: string, rel: string): Promise<string | null> {
  try {
    const real = await Deno.realPath(join(dir, rel));
    const back = relative(dir, real);
    if (back === "" || back.startsWith("..") || isAbsolute(back)) return null;
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
 * @param options size cap
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
  options: { maxBytes?: number } = {},
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
  const maxBytes = options.maxBytes ?? MAX_RESOURCE_BYTES;
  const info = await Deno.stat(real);
  if (info.size > maxBytes) {
    throw new SkillboxError(
      "tool_error",
      `Cannot read "${path}": file is larger than ${maxBytes} bytes`,
    );
  }
  return await Deno.readTextFile(real);
}
