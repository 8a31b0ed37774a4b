/**
 * The YAML frontmatter of a skill file (`SKILL.md` or `skill.md`): splits it
 * from the Markdown body and parses it with bounded work, and reads its
 * fields leniently, collecting a warning for each value of the wrong type
 * instead of refusing the whole file.
 *
 * @module
 */

import { parseDocument } from "yaml";
import { SkillboxError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";

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
 *   not closed, is not valid YAML (with its line in the file) or is not a
 *   mapping: the only shapes that make a skill unloadable
 * @example
 * ```ts
 * import { splitFrontmatter } from "./frontmatter.ts";
 * import assert from "node:assert/strict";
 * const { data, body } = splitFrontmatter("---\nname: pdf\n---\n# Use it\n", "SKILL.md");
 * assert.equal(data.name, "pdf");
 * assert.equal(body, "# Use it");
 * assert.throws(() => splitFrontmatter("---\nname: [x\n---\n", "s.md"), /YAML error at line 2/);
 * ```
 */
export function splitFrontmatter(text: string, path: string): Frontmatter {
  const fail = (detail: string): never => {
    throw new SkillboxError("skill_error", `Cannot load "${path}": ${detail}`);
  };
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
  return { data: data as Record<string, unknown>, body };
}

/**
 * Reads frontmatter fields leniently: a value of the wrong type is dropped
 * (the field takes its default) and a warning says so, because the Agent
 * Skills client guide asks hosts to load what they can.
 *
 * @example
 * ```ts
 * import { FieldReader } from "./frontmatter.ts";
 * import assert from "node:assert/strict";
 * const r = new FieldReader({ max_turns: -2, tags: "a, b", when_to_use: "Often" });
 * assert.equal(r.positive("max_turns", true), null);
 * assert.deepEqual(r.strList("tags"), ["a", "b"]);
 * assert.equal(r.str("when_to_use", "when-to-use"), "Often");
 * assert.deepEqual(r.warnings, ['field "max_turns" must be a positive integer, got -2: ignored']);
 * ```
 */
export class FieldReader {
  /** One line per problem found, in the order found. */
  readonly warnings: string[] = [];
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
    this.warnings.push(message);
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
    const { value } = found;
    if (typeof value !== "object" || Array.isArray(value)) {
      this.warn(`field "${key}" must be a mapping: ignored`);
      return null;
    }
    return value as JsonObject;
  }
}

/**
 * Cuts a string to at most `max` UTF-16 units without splitting a surrogate
 * pair.
 *
 * @param text the string
 * @param max the most units kept
 * @returns the cut string
 * @example
 * ```ts
 * import { cut } from "./frontmatter.ts";
 * import assert from "node:assert/strict";
 * assert.equal(cut("abc", 2), "ab");
 * assert.equal(cut("a\u{1F600}", 2), "a");
 * ```
 */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return text.slice(0, end);
}
