/**
 * Skills of an imported MCP server that declares the Skills extension
 * (SEP-2640): its `skills/list` entries, each loaded by reading its
 * `SKILL.md` with `resources/read` and checking the bytes against the
 * entry (size, `sha256:` digest, frontmatter field by field). A skill whose
 * entry or file does not hold is refused with the reason and never becomes
 * runnable (it is listed Blocked with the reason). A listing over the
 * extension's bounds (512 files, 16 MiB in all) is refused too, and a
 * server's `skills/list` is read to 16 MiB of JSON, no further. Loading
 * happens when the server starts and when it sends
 * `notifications/resources/list_changed`: the host loads a skill into its
 * registry then (only `SKILL.md`: the supporting files are fetched when the
 * agent loop reads them, see "Supporting files").
 *
 * ## Supporting files
 *
 * The supporting files of an imported server's skills (SEP-2640), as the
 * host's agent loop reads them with `read_skill_file`: every file of the
 * skill's verified manifest but its `SKILL.md` (references, scripts,
 * assets), each fetched with `resources/read` when the model asks for it and
 * checked against the manifest's size and `sha256:` digest before the model
 * sees a byte.
 *
 * Fetched on demand, not at load: a listing may promise up to 16 MiB per
 * skill, and most runs read one file or none; loading every file of every
 * skill of every server at each `list_changed` would cost that for nothing.
 * And the bytes checked are then the very bytes the model gets, with no
 * window between a check at load and a read at run time.
 *
 * A path is looked up as a string among the manifest's own paths (so `..`,
 * another skill's URI or this skill's `SKILL.md` is never fetched), and the
 * read is of the manifest's URI, never one built from the model's input. A
 * file over the host's bound on a skill file (`MAX_RESOURCE_BYTES`, as for
 * a local folder) is refused before it is fetched. Bytes that differ from
 * the manifest fail the run (`SkillFileRefusedError`) with the reason.
 * Scripts are read, never run: the host has no vetted copy of them to run.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject } from "../../protocol/json.ts";
import {
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_FILES,
  type McpSkillEntry,
  type RemoteSkill,
  sha256Digest,
  type SkillFileEntry,
  SKILLS_EXTENSION,
} from "./skills_extension.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  agentSkillsNameProblem,
  type Frontmatter,
  MAX_RESOURCE_BYTES,
  MAX_SKILL_MD_BYTES,
  normalizeLink,
  SkillFileRefusedError,
  splitFrontmatter,
} from "../skills/skill_md.ts";
import type { FetchedSkillFiles } from "../skills/catalog.ts";

/** A verified skill of an imported server. */
export interface ImportedSkill {
  /** Its `name` (the frontmatter's). */
  name: string;
  /** Its `description`. */
  description: string;
  /** The `SKILL.md` body, after the frontmatter. */
  instructions: string;
  /** Its `SKILL.md` URI on that server. */
  uri: string;
  /** Its entry as the server listed it, checked. */
  entry: McpSkillEntry;
}

/** A skill of an imported server that was refused, with why. */
export interface RefusedSkill {
  /** Its `SKILL.md` URI, as listed. */
  uri: string;
  /**
   * Its name as listed (the entry's frontmatter `name`), under which it is
   * shown Blocked; none when the entry has none.
   */
  name?: string;
  /** Why it was refused, sentence case. */
  reason: string;
}

/**
 * Most bytes of SKILL.md kept from one server: its skills' instructions
 * are held in the registry and listed to every client.
 */
const MAX_SERVER_SKILL_MD_BYTES = 16 * 1024 * 1024;

/**
 * Most of a server's skills/list read: entries, pages, and characters of
 * the entries' JSON (the pages are held until every entry is checked, and
 * each may be 16 MiB).
 */
const MAX_SKILL_LISTING = { items: 1000, pages: 100, chars: 16 << 20 };

/**
 * The most of one paged listing {@link readPages} reads: items kept, pages
 * asked for, and characters of the kept items' JSON.
 */
export type PageBounds = Record<"items" | "pages" | "chars", number>;

/** A paged listing as {@link readPages} read it. */
export interface Pages<T> {
  /** The items kept, in order. */
  items: T[];
  /** A sha256 of their JSON: alike for the same listing read again. */
  digest: string;
  /** The bound that stopped the reading, or "" when the last page came. */
  cut: "" | keyof PageBounds;
}

/**
 * Reads a server's paged listing (`tools/list`, `skills/list`) until a page
 * has no cursor or a bound is reached. A server that pages on past them
 * (empty pages with fresh cursors, a fat item a page) is read no further:
 * each page has its own timeout, but the listing as a whole would hold a
 * start, and the host's memory, without end.
 *
 * @param page asks for the page at a cursor (none for the first): its items
 *   and the next cursor, if any
 * @param max the bounds
 * @returns what was read, and which bound stopped it
 * @example Empty pages with fresh cursors stop at the page bound
 * ```ts
 * import { readPages } from "./imported_skills.ts";
 * import assert from "node:assert/strict";
 * let asked = 0;
 * const endless = () => Promise.resolve({ items: [], next: String(++asked) });
 * const read = await readPages(endless, { items: 10, pages: 5, chars: 100 });
 * assert.deepEqual([read.items, read.cut, asked], [[], "pages", 5]);
 * const one = () => Promise.resolve({ items: ["a", "b"] });
 * assert.equal((await readPages(one, { items: 1, pages: 5, chars: 100 })).cut, "items");
 * ```
 */
export async function readPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: unknown }>,
  max: PageBounds,
): Promise<Pages<T>> {
  const items: T[] = [];
  const digest = createHash("sha256");
  let chars = 0;
  let cursor: string | undefined;
  const read = (cut: Pages<T>["cut"]) => ({
    items,
    digest: digest.digest("hex"),
    cut,
  });
  for (let pages = 0; pages < max.pages; pages++) {
    const { items: listed, next } = await page(cursor);
    for (const item of listed) {
      if (items.length >= max.items) return read("items");
      const text = JSON.stringify(item) ?? "";
      chars += text.length;
      if (chars > max.chars) return read("chars");
      digest.update(text);
      items.push(item);
    }
    if (typeof next !== "string" || next === "") return read("");
    cursor = next;
  }
  return read("pages");
}

/**
 * Lists and verifies the skills of a connected server; none when it does
 * not declare the extension.
 *
 * @param client the connected client
 * @param timeoutMs the bound of each request
 * @returns the verified skills and the refused ones
 * @example A server without the extension has no skills
 * ```ts ignore
 * const { skills, refused } = await loadServerSkills(client, 10_000);
 * ```
 */
export async function loadServerSkills(
  client: Client,
  timeoutMs: number,
): Promise<{ skills: ImportedSkill[]; refused: RefusedSkill[] }> {
  const skills: ImportedSkill[] = [];
  const refused: RefusedSkill[] = [];
  if (!client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION]) {
    return { skills, refused };
  }
  const { items: entries, cut } = await readPages(async (cursor) => {
    const page = await client.request(
      { method: "skills/list", params: cursor ? { cursor } : {} } as never,
      ResultSchema,
      { timeout: timeoutMs },
    );
    const skills = Array.isArray(page.skills) ? page.skills as unknown[] : [];
    return { items: skills, next: page.nextCursor };
  }, MAX_SKILL_LISTING);
  const seen = new Set<string>();
  let total = 0;
  for (const entry of entries) {
    const uri = isPlainObject(entry) && typeof entry.uri === "string"
      ? entry.uri
      : "?";
    try {
      const left = MAX_SERVER_SKILL_MD_BYTES - total;
      const skill = await verifySkill(client, entry, timeoutMs, left);
      // A verified SKILL.md is its listed size.
      total += skill.entry.resources.find((r) => r.uri === skill.uri)!.size;
      if (seen.has(skill.name)) {
        throw new Error(`the name "${skill.name}" is listed twice`);
      }
      seen.add(skill.name);
      skills.push(skill);
    } catch (error) {
      refused.push({
        uri,
        ...listedName(entry),
        reason: (error as Error).message,
      });
    }
  }
  if (cut) {
    const over = cut === "chars"
      ? `is over ${MAX_SKILL_LISTING.chars} characters of JSON`
      : `goes past ${
        MAX_SKILL_LISTING.items.toLocaleString("en-US")
      } skills or ${MAX_SKILL_LISTING.pages} pages`;
    refused.push({
      uri: "skills/list",
      reason: `its skill listing ${over}: the rest was not read`,
    });
  }
  return { skills, refused };
}

/**
 * Checks one listed entry and the `SKILL.md` it describes.
 *
 * @param client the connected client
 * @param entry the listed entry, unchecked
 * @param timeoutMs the bound of the read
 * @param maxBytes the most its SKILL.md may take of what is left of the
 *   server's {@link MAX_SERVER_SKILL_MD_BYTES} @default no more than that
 * @returns the verified skill
 * @throws {Error} saying what does not hold
 * @example
 * ```ts ignore
 * const skill = await verifySkill(client, listed.skills[0], 10_000);
 * ```
 */
export async function verifySkill(
  client: Client,
  entry: unknown,
  timeoutMs: number,
  maxBytes = MAX_SERVER_SKILL_MD_BYTES,
): Promise<ImportedSkill> {
  if (!isPlainObject(entry) || typeof entry.uri !== "string") {
    throw new Error("the entry has no uri");
  }
  const { uri, frontmatter, resources } = entry;
  if (!isPlainObject(frontmatter) || typeof frontmatter.name !== "string") {
    throw new Error("the entry has no frontmatter name");
  }
  const name = frontmatter.name;
  const description = frontmatter.description;
  if (typeof description !== "string" || description.trim() === "") {
    throw new Error("the entry has no description");
  }
  const match = /^[a-z][a-z0-9+.-]*:\/\/(.+)\/SKILL\.md$/.exec(uri);
  if (!match) throw new Error(`"${uri}" is not the URI of a SKILL.md`);
  const problem = agentSkillsNameProblem(name, match[1]!);
  if (problem !== null) throw new Error(problem);
  if (!plainPath(match[1]!)) {
    throw new Error(`"${uri}" has an empty, dot or encoded-slash segment`);
  }
  if (!Array.isArray(resources)) {
    throw new Error(
      'its resources are "dynamic" or missing: there is no digest to verify',
    );
  }
  const root = uri.slice(0, -"SKILL.md".length);
  const files: SkillFileEntry[] = [];
  for (const r of resources) {
    if (
      !isPlainObject(r) || typeof r.uri !== "string" ||
      typeof r.digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(r.digest) ||
      !Number.isSafeInteger(r.size) || (r.size as number) < 0
    ) {
      throw new Error(
        "its manifest has an entry without a uri, digest or size",
      );
    }
    if (!r.uri.startsWith(root) || !plainPath(r.uri.slice(root.length))) {
      throw new Error(`its manifest lists "${r.uri}", outside the skill`);
    }
    files.push({ uri: r.uri, digest: r.digest, size: r.size as number });
  }
  if (files.length > MAX_SKILL_FILES) {
    throw new Error(
      `its manifest lists ${files.length} files, over the ${MAX_SKILL_FILES} a skill may have`,
    );
  }
  const total = files.reduce((sum, r) => sum + r.size, 0);
  if (total > MAX_SKILL_FILE_BYTES) {
    throw new Error(
      `its files total ${total} bytes, over the ${MAX_SKILL_FILE_BYTES} a skill may hold`,
    );
  }
  const self = files.find((r) => r.uri === uri);
  if (!self) throw new Error("its manifest does not list its SKILL.md");
  if (self.size > MAX_SKILL_MD_BYTES) {
    throw new Error(
      `its SKILL.md is ${self.size} bytes, over ${MAX_SKILL_MD_BYTES}`,
    );
  }
  // Checked before it is read: a verified SKILL.md is its listed size.
  if (self.size > maxBytes) {
    throw new Error(
      `its SKILL.md would take the server over the ${MAX_SERVER_SKILL_MD_BYTES} bytes of SKILL.md a server may serve`,
    );
  }
  const bytes = await readBytes(client, uri, timeoutMs);
  if (bytes.length !== self.size) {
    throw new Error(
      `its SKILL.md is ${bytes.length} bytes, the listing promises ${self.size}`,
    );
  }
  const digest = await sha256Digest(bytes);
  if (digest !== self.digest) {
    throw new Error(
      `its SKILL.md hashes to ${digest}, the listing promises ${self.digest}`,
    );
  }
  // Read as the skill loader reads a SKILL.md: frontmatter and body.
  let served: Frontmatter | undefined;
  try {
    served = splitFrontmatter(new TextDecoder().decode(bytes), uri);
  } catch {
    // None the loader would read: refused below.
  }
  if (!served || !isDeepStrictEqual(served.data, frontmatter)) {
    throw new Error("its SKILL.md frontmatter differs from the listing's");
  }
  return {
    name,
    description,
    instructions: served.body,
    uri,
    entry: { uri, frontmatter, resources: files },
  };
}

/**
 * The bytes of a resource of a server, as `resources/read` returns them
 * (text encoded as UTF-8, a blob decoded).
 *
 * @param client the connected client
 * @param uri the resource's URI on that server
 * @param timeoutMs the bound of the read
 * @param signal cancels the read on the server too
 * @returns its bytes
 * @throws {Error} when the answer has no content for that URI
 * @example
 * ```ts ignore
 * const bytes = await readBytes(client, "skill://greeting/SKILL.md", 10_000);
 * ```
 */
export async function readBytes(
  client: Client,
  uri: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const read = await client.readResource({ uri }, {
    timeout: timeoutMs,
    signal,
  });
  const content = read.contents.find((c: { uri: string }) => c.uri === uri);
  if (!content) throw new Error("resources/read returned no content for it");
  return "text" in content && typeof content.text === "string"
    ? new TextEncoder().encode(content.text)
    : Uint8Array.fromBase64("blob" in content ? String(content.blob) : "");
}

// Whether every segment of a URI's path, percent-decoded, is a plain
// name: not empty, `.` or `..`, holding no slash, backslash or NUL. The
// URIs are served again to this host's MCP clients, some of which keep a
// skill's files under its URI's path.
function plainPath(path: string): boolean {
  return path.split("/").every((segment) => {
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      return false;
    }
    return name !== "" && name !== "." && name !== ".." &&
      !/[\/\\\0]/.test(name);
  });
}

// The name a refused entry is shown under: its frontmatter's, when listed.
function listedName(entry: unknown): { name?: string } {
  const frontmatter = isPlainObject(entry) ? entry.frontmatter : null;
  const name = isPlainObject(frontmatter) ? frontmatter.name : null;
  return typeof name === "string" && name.trim() !== "" ? { name } : {};
}

/**
 * The files of imported servers' skills, by skill name (`<server>__<skill>`).
 *
 * @param remotes the verified skills of the running servers
 * @returns each skill's files, read through its server and checked
 * @example A forged file fails the read
 * ```ts
 * import { importedSkillFiles } from "./imported_skills.ts";
 * import assert from "node:assert/strict";
 * const remote = {
 *   name: "kit__docs", server: "kit",
 *   entry: { uri: "skill://docs/SKILL.md", frontmatter: {}, resources: [
 *     { uri: "skill://docs/SKILL.md", digest: "sha256:" + "0".repeat(64), size: 1 },
 *     { uri: "skill://docs/guide.md", digest: "sha256:" + "0".repeat(64), size: 2 },
 *   ] },
 *   read: () => Promise.resolve(new TextEncoder().encode("hi")),
 * };
 * const files = importedSkillFiles([remote]).get("kit__docs")!;
 * assert.deepEqual(files.resources, ["guide.md"]);
 * await assert.rejects(files.read("guide.md"), /served bytes hashing to sha256:8f43/);
 * await assert.rejects(files.read("../other/SKILL.md"), /not a file of skill "kit__docs"/);
 * ```
 */
export function importedSkillFiles(
  remotes: readonly RemoteSkill[],
): Map<string, FetchedSkillFiles> {
  return new Map(remotes.map((r) => [r.name, skillFiles(r)]));
}

function skillFiles(remote: RemoteSkill): FetchedSkillFiles {
  const { name, server, entry } = remote;
  const root = entry.uri.slice(0, -"SKILL.md".length);
  const byPath = new Map<string, SkillFileEntry>();
  for (const file of entry.resources) {
    if (file.uri === entry.uri || !file.uri.startsWith(root)) continue;
    const path = normalizeLink(file.uri.slice(root.length));
    if (path !== null && !byPath.has(path)) byPath.set(path, file);
  }
  const resources = [...byPath.keys()];
  const listed = resources.map((r) => `"${r}"`).join(", ") || "none";
  return {
    resources,
    note:
      `These files are served by the MCP server "${server}", each checked against the digest it listed. This host does not run this skill's scripts: they can only be read.`,
    read: async (asked) => {
      const path = normalizeLink(asked);
      const file = path === null ? undefined : byPath.get(path);
      if (!file || path === null) {
        throw new SkillboxError(
          "tool_denied",
          `Cannot read "${asked}": not a file of skill "${name}" (its files: ${listed})`,
        );
      }
      if (file.size > MAX_RESOURCE_BYTES) {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": file is larger than ${MAX_RESOURCE_BYTES} bytes`,
        );
      }
      let bytes: Uint8Array;
      try {
        bytes = await remote.read(file.uri);
      } catch (error) {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": ${(error as Error).message}`,
        );
      }
      const refused =
        `File "${path}" of skill "${name}" is refused: the MCP server "${server}" served`;
      if (bytes.length !== file.size) {
        throw new SkillFileRefusedError(
          `${refused} ${bytes.length} bytes, its listing promises ${file.size}`,
        );
      }
      const digest = await sha256Digest(bytes);
      if (digest !== file.digest) {
        throw new SkillFileRefusedError(
          `${refused} bytes hashing to ${digest}, its listing promises ${file.digest}`,
        );
      }
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new SkillboxError(
          "tool_error",
          `Cannot read "${asked}": it is not UTF-8 text (${bytes.length} bytes)`,
        );
      }
      // Tagged with its origin, as the skill's instructions are.
      const script = path.startsWith("scripts/")
        ? "; a script: this host does not run it"
        : "";
      return `[File ${file.uri} of the skill served by the MCP server "${server}"; untrusted content${script}.]\n\n${text}`;
    },
  };
}
