/**
 * The Agent Skills specification's own fields (`name`, `description`,
 * `license`, `compatibility`, `metadata`), checked the lenient way the
 * specification's client guide recommends: a rule broken is a warning, and
 * only a missing description makes a skill unloadable (besides YAML that
 * cannot be parsed, see `frontmatter.ts`).
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";
import type { FieldReader } from "./frontmatter.ts";

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
 * Picks a skill's name and says which rules it breaks. A missing or
 * unusable name (a path, spaces, control characters) falls back to the
 * folder's name; a usable name that breaks the specification's rule, or
 * does not match its folder, is kept with a warning.
 *
 * @param declared the frontmatter's `name` value, as parsed
 * @param options the folder name, dialect
 * @returns the name to serve the skill under, and the warnings
 * @throws {SkillboxError} `skill_error` when neither the declared name nor
 *   the folder's name can name a skill
 * @example
 * ```ts
 * import { checkSkillName } from "./spec_fields.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(checkSkillName("pdf-forms", { folder: "pdf-forms" }), { name: "pdf-forms", warnings: [] });
 * const odd = checkSkillName("PDF--Forms", { folder: "pdf" });
 * assert.equal(odd.name, "PDF--Forms");
 * assert.equal(odd.warnings.length, 2);
 * assert.equal(checkSkillName(undefined, { folder: "notes" }).name, "notes");
 * ```
 */
export function checkSkillName(
  declared: unknown,
  options: CheckNameOptions = {},
): { name: string; warnings: string[] } {
  const warnings: string[] = [];
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
    warnings.push(`${why}: using the folder name "${folder}"`);
    name = folder;
    fromFolder = true;
  }
  const rule = options.a2e ? A2E_NAME : SPEC_NAME;
  if (name.length > 64 || !rule.test(name)) {
    warnings.push(
      `name "${name}" breaks the Agent Skills rule (1-64 lower-case letters, digits and "-"${
        options.a2e ? ' or "_"' : ""
      }, no leading, trailing or double "-")`,
    );
  }
  if (!fromFolder && folder !== undefined && folder !== name) {
    warnings.push(`name "${name}" does not match its folder "${folder}"`);
  }
  return { name, warnings };
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
 * import { FieldReader } from "./frontmatter.ts";
 * import { readDescription } from "./spec_fields.ts";
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
 * import { FieldReader } from "./frontmatter.ts";
 * import { readSpecMetadata } from "./spec_fields.ts";
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
