/**
 * Skills over MCP (SEP-2640, the `io.modelcontextprotocol/skills`
 * extension, Final): every Agent Skills folder a session can discover is
 * served as `skill://<name>/...` resources, with `skills/list`, `skills/get`,
 * `resources/list`, `resources/read` and `resources/directory/read`.
 *
 * What is served of a folder is its manifest: every regular file under it,
 * found by walking the folder without following symbolic links (a link is
 * neither listed nor readable, wherever it points), with each file's size and
 * `sha256:` digest. A read is answered only for a URI the manifest lists,
 * compared as a string (so `..`, percent-encoded dots or another skill's name
 * never reach the file system), and only when the file's real path is still
 * inside the folder's real path. Digests are cached by path, size and mtime:
 * a listing re-reads only what changed. Its folders, as
 * `resources/directory/read` lists them, are those its files are in: the
 * manifest is the one index of what is served.
 *
 * A folder whose name breaks the Agent Skills rules (see
 * `agentSkillsNameProblem`) is left out: verifiers reject it. It stays a tool
 * and an A2E skill, and the banner says why.
 *
 * The verified skills of imported MCP servers (`imported_skills.ts`) are
 * served again under `mcp-skill://<server>/...`, their own scheme so they
 * never collide with a local name, with the entry their server listed; a
 * read is proxied to that server and answered only when the bytes have the
 * listed size and digest.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { isPlainObject } from "../../protocol/json.ts";
import type { SkillDefinition } from "../../protocol/skill.ts";
import {
  agentSkillsNameProblem,
  splitFrontmatter,
} from "../skills/skill_md.ts";
import { within } from "../confine/mount_rule.ts";
import { invalidParams } from "./tool_mapping.ts";
import { compareCodeUnits } from "../tools/filter.ts";

/** The extension's identifier, under `capabilities.extensions`. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/**
 * The largest skill file `resources/read` returns (16 MiB, the extension's
 * limit on a whole skill); a larger file is refused with `InvalidParams`.
 */
export const MAX_SKILL_FILE_BYTES = 16 * 1024 * 1024;

/** The most files a skill may have to be served (the extension's limit). */
export const MAX_SKILL_FILES = 512;

/** The methods {@link SkillsServer.handle} answers. */
export const SKILLS_METHODS: ReadonlySet<string> = new Set([
  "skills/list",
  "skills/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/directory/read",
]);

/** Skills (or resources) per page of `skills/list` and `resources/list`. */
export const SKILLS_PAGE_SIZE = 100;

/**
 * How long a client may keep a listing or a skill (a change is also
 * notified), and that it holds all there is.
 */
const CACHING = {
  ttlMs: 60_000,
  cacheScope: "private",
  resultType: "complete",
} as const;

/** One file of a skill, as the manifest lists it. */
export interface SkillFileEntry {
  /** `skill://<name>/<path>`. */
  uri: string;
  /** `sha256:` and 64 lower-case hex digits of the file's bytes. */
  digest: string;
  /** Its length in bytes. */
  size: number;
}

/** A skill entry (SEP-2640 `Skill`). */
export interface McpSkillEntry {
  /** `skill://<name>/SKILL.md`. */
  uri: string;
  /** The `SKILL.md` frontmatter, verbatim. */
  frontmatter: Record<string, unknown>;
  /** Every file of the folder. */
  resources: SkillFileEntry[];
}

/** An Agent Skills folder the session may see. */
export interface ServedFolder {
  /** The skill's name (its A2E name, also the URI authority). */
  name: string;
  /** Absolute path of the folder. */
  folder: string;
  /** The skill file's name in the folder (`SKILL.md`, or `skill.md`). */
  file: string;
}

/**
 * A skill of an imported MCP server, served again under
 * `mcp-skill://<server>/...` (its origin's path after the scheme), with
 * the entry its server listed, each read proxied to that server and checked
 * against that entry before it is answered.
 */
export interface RemoteSkill {
  /** The skill's name in this host (`<server>__<skill>`). */
  name: string;
  /** The server's host-assigned name. */
  server: string;
  /** The entry as the server listed it (its URIs). */
  entry: McpSkillEntry;
  /**
   * Reads a file of the skill from the server, by its URI there; `signal`
   * cancels the server's read (a client that cancels is owed nothing).
   */
  read(uri: string, signal?: AbortSignal): Promise<Uint8Array>;
}

/** Where a session's skills come from. */
export interface SkillsSource {
  /** The session's Agent Skills folders now (called per request). */
  folders(): Promise<ServedFolder[]>;
  /** The imported servers' skills the session sees. @default none */
  remote?(): Promise<RemoteSkill[]>;
}

/** Options of {@link SkillsServer}. */
export interface SkillsServerOptions {
  /** The host's digest cache. */
  cache: SkillFileCache;
  /** Skills per page. @default SKILLS_PAGE_SIZE */
  pageSize?: number;
}

interface FileFacts {
  stamp: string;
  digest: string;
  /** A `SKILL.md`'s frontmatter, once read (null without one). */
  fields?: Record<string, unknown> | null;
}

interface Manifest {
  entry: McpSkillEntry;
  /**
   * Reads one of its files (`uri` is one it lists), or null for others;
   * `signal` stops the read, local or the server's.
   */
  read(uri: string, signal?: AbortSignal): Promise<Uint8Array> | null;
}

/**
 * Digests of skill files, shared by every session of a host: a file is
 * hashed again (and a `SKILL.md`'s frontmatter parsed again) only when its
 * size or mtime changed, and a folder's walk keeps only the files it found.
 * At most {@link MAX_CACHED_FOLDERS} folders are kept, the least recently
 * walked forgotten first: a long-running host holds no entry for every
 * folder it ever served.
 *
 * @example
 * ```ts
 * import { SkillFileCache } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * const cache = new SkillFileCache();
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "hi");
 * const walk = cache.walk(dir);
 * const digest = await walk.digest(`${dir}/a.txt`, "2:0");
 * walk.done();
 * assert.equal(digest, "sha256:8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class SkillFileCache {
  #folders = new Map<string, Map<string, FileFacts>>();

  /**
   * Starts a walk of a skill folder: `digest` hashes a file unless its
   * stamp is unchanged since the last walk, `frontmatter` reads the fields
   * of a `SKILL.md` it digested; `done` keeps what this walk found and
   * forgets the rest.
   *
   * @param folder absolute path of the folder
   * @returns the walk's digest and frontmatter functions and its end
   */
  walk(folder: string): {
    digest(path: string, stamp: string): Promise<string>;
    frontmatter(path: string): Promise<Record<string, unknown> | null>;
    done(): void;
  } {
    const before = this.#folders.get(folder);
    const now = new Map<string, FileFacts>();
    return {
      digest: async (path, stamp) => {
        const hit = before?.get(path);
        const facts = hit?.stamp === stamp
          ? hit
          : { stamp, digest: await sha256Digest(await Deno.readFile(path)) };
        now.set(path, facts);
        return facts.digest;
      },
      frontmatter: async (path) => {
        const facts = now.get(path);
        if (facts?.fields !== undefined) return facts.fields;
        const fields = readFrontmatter(await Deno.readTextFile(path));
        if (facts) facts.fields = fields;
        return fields;
      },
      done: () => {
        // Last in the map's order: the least recently walked come first.
        this.#folders.delete(folder);
        if (this.#folders.size >= MAX_CACHED_FOLDERS) {
          this.#folders.delete(this.#folders.keys().next().value!);
        }
        this.#folders.set(folder, now);
      },
    };
  }
}

/**
 * The most skill folders a {@link SkillFileCache} keeps.
 *
 * @example
 * ```ts
 * import { MAX_CACHED_FOLDERS } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_CACHED_FOLDERS, 1024);
 * ```
 */
export const MAX_CACHED_FOLDERS = 1024;

/**
 * The Agent Skills folders among a session's discovered skills: published
 * skills loaded from a `SKILL.md`.
 *
 * @param skills the session's skills
 * @returns one per folder, sorted by name
 * @example
 * ```ts
 * import { servedFolders } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * const folders = servedFolders([
 *   { name: "notes", file_path: "/s/notes/SKILL.md", metadata: { format: "agent_skill" } },
 *   { name: "code", file_path: "/s/code/code.ts", metadata: null },
 * ] as never);
 * assert.deepEqual(folders, [{ name: "notes", folder: "/s/notes", file: "SKILL.md" }]);
 * ```
 */
export function servedFolders(
  skills: Iterable<SkillDefinition>,
): ServedFolder[] {
  const out: ServedFolder[] = [];
  for (const skill of skills) {
    if (skill.metadata?.format !== "agent_skill" || !skill.file_path) continue;
    out.push({
      name: skill.name,
      folder: dirname(skill.file_path),
      file: basename(skill.file_path),
    });
  }
  return out.sort((a, b) => compareCodeUnits(a.name, b.name));
}

/**
 * Serves the extension's methods over a session's skill folders.
 *
 * @example
 * ```ts
 * import { SkillFileCache, SkillsServer } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/notes`);
 * await Deno.writeTextFile(`${dir}/notes/SKILL.md`, "---\nname: notes\ndescription: Notes\n---\nBe brief.\n");
 * const skills = new SkillsServer(
 *   { folders: () => Promise.resolve([{ name: "notes", folder: `${dir}/notes`, file: "SKILL.md" }]) },
 *   { cache: new SkillFileCache() },
 * );
 * const listed = await skills.handle("skills/list", {}) as { skills: { uri: string }[] };
 * assert.equal(listed.skills[0]?.uri, "skill://notes/SKILL.md");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class SkillsServer {
  #source: SkillsSource;
  #cache: SkillFileCache;
  #pageSize: number;

  /**
   * @param source the session's skills
   * @param options the digest cache, page size
   */
  constructor(source: SkillsSource, options: SkillsServerOptions) {
    this.#source = source;
    this.#cache = options.cache;
    this.#pageSize = options.pageSize ?? SKILLS_PAGE_SIZE;
  }

  /**
   * Answers one of the extension's methods.
   *
   * @param method the JSON-RPC method
   * @param params its params
   * @param signal the request's: a cancelled read stops reading (its answer
   *   would be dropped, and its bytes no longer count in flight)
   * @returns the result, or undefined when the method is not one of them
   * @throws {Error} `InvalidParams` (-32602) for an unknown URI or a bad cursor
   */
  handle(
    method: string,
    params: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> | undefined {
    if (!SKILLS_METHODS.has(method)) return undefined;
    const p = isPlainObject(params) ? params : {};
    // A uri or cursor that is no string is the client's mistake, said so:
    // never made a string (an own `toString` key would throw).
    const odd = p.uri !== undefined && typeof p.uri !== "string"
      ? "uri"
      : p.cursor !== undefined && typeof p.cursor !== "string"
      ? "cursor"
      : undefined;
    if (odd !== undefined) {
      return Promise.reject(invalidParams(
        `Invalid ${method} request: params.${odd} must be a string`,
      ));
    }
    switch (method) {
      case "skills/list":
        return this.#list(p.cursor);
      case "skills/get":
        return this.#get(p.uri);
      case "resources/list":
        return this.#listResources(p.cursor);
      case "resources/templates/list":
        return Promise.resolve({ resourceTemplates: [] });
      case "resources/read":
        return this.#read(p.uri, signal);
      case "resources/directory/read":
        return this.#readDirectory(p.uri, p.cursor);
    }
    return undefined;
  }

  async #all(): Promise<(ServedFolder | RemoteSkill)[]> {
    const folders = await this.#source.folders();
    return [...folders, ...(await this.#source.remote?.()) ?? []];
  }

  // A page of skills, then their manifests: a page reads only its own
  // folders (one that cannot be served now is left out of its page).
  async #page(cursor: unknown): Promise<{
    page: Manifest[];
    nextCursor?: string;
  }> {
    const paged = paginate(await this.#all(), cursor, this.#pageSize);
    const manifests = await Promise.all(
      paged.page.map((l) => this.#manifest(l)),
    );
    return {
      ...paged,
      page: manifests.filter((m): m is Manifest => m !== null),
    };
  }

  async #manifest(
    served: ServedFolder | RemoteSkill,
  ): Promise<Manifest | null> {
    if ("entry" in served) return remoteManifest(served);
    if (agentSkillsNameProblem(served.name, served.folder) !== null) {
      return null;
    }
    try {
      return await buildManifest(served, this.#cache);
    } catch {
      return null; // gone, unreadable or over the limits: not served now
    }
  }

  async #byUri(uri: unknown): Promise<Manifest | null> {
    if (typeof uri !== "string") return null;
    if (uri.startsWith(REMOTE_SCHEME)) {
      // The longest root: a server's skill at a/b/ is nested in its a/.
      let found: { remote: RemoteSkill; root: string } | undefined;
      for (const remote of (await this.#source.remote?.()) ?? []) {
        const root = remoteRoot(remote);
        if (uri !== root && !uri.startsWith(`${root}/`)) continue;
        if (root.length > (found?.root.length ?? -1)) found = { remote, root };
      }
      return found ? remoteManifest(found.remote) : null;
    }
    if (!uri.startsWith("skill://")) return null;
    const name = uri.slice("skill://".length).split("/")[0];
    const folder = (await this.#source.folders()).find((f) => f.name === name);
    return folder ? await this.#manifest(folder) : null;
  }

  async #list(cursor: unknown) {
    const { page, ...next } = await this.#page(cursor);
    return { skills: page.map((m) => m.entry), ...next, ...CACHING };
  }

  async #get(uri: unknown) {
    const manifest = await this.#byUri(uri);
    if (!manifest || manifest.entry.uri !== uri) {
      throw invalidParams(`No skill is served at "${String(uri)}"`);
    }
    return { skill: manifest.entry, ...CACHING };
  }

  async #listResources(cursor: unknown) {
    const { page, ...next } = await this.#page(cursor);
    return {
      resources: page.map((m) => ({
        uri: m.entry.uri,
        name: String(m.entry.frontmatter.name),
        description: String(m.entry.frontmatter.description),
        mimeType: "text/markdown",
        size: m.entry.resources.find((r) => r.uri === m.entry.uri)?.size,
      })),
      ...next,
    };
  }

  async #read(uri: unknown, signal: AbortSignal | undefined) {
    const manifest = await this.#byUri(uri);
    signal?.throwIfAborted();
    const reading = manifest?.read(uri as string, signal);
    if (!reading) throw invalidParams(`Resource "${String(uri)}" not found`);
    const bytes = await reading;
    // Not made into an answer nobody will send.
    signal?.throwIfAborted();
    const mimeType = mimeTypeOf(String(uri));
    const text = asText(bytes, mimeType);
    return {
      contents: [
        text === null
          ? { uri, mimeType, blob: bytes.toBase64() }
          : { uri, mimeType, text },
      ],
    };
  }

  async #readDirectory(uri: unknown, cursor: unknown) {
    const manifest = await this.#byUri(uri);
    const children = manifest && childrenOf(uri as string, manifest.entry);
    if (!children) {
      throw invalidParams(`"${String(uri)}" is not a directory resource`);
    }
    const { page, ...next } = paginate(children, cursor, this.#pageSize);
    return {
      resources: page.map((c) => ({
        uri: c.uri,
        name: c.name,
        mimeType: c.dir ? "inode/directory" : mimeTypeOf(c.name),
      })),
      ...next,
      resultType: "complete",
    };
  }
}

async function buildManifest(
  served: ServedFolder,
  cache: SkillFileCache,
): Promise<Manifest> {
  const root = `skill://${served.name}`;
  const files = new Map<string, string>();
  const resources: SkillFileEntry[] = [];
  const walking = cache.walk(served.folder);
  let total = 0;
  let frontmatter: Record<string, unknown> | null = null;
  const walk = async (rel: string, dirUri: string) => {
    const names: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(join(served.folder, rel))) names.push(e);
    names.sort((a, b) => compareCodeUnits(a.name, b.name));
    for (const e of names) {
      // Links are not followed: neither listed nor readable.
      if (e.isSymlink) continue;
      const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
      const isSkillFile = rel === "" && e.name === served.file;
      const uri = isSkillFile
        ? `${root}/SKILL.md`
        : `${dirUri}/${encodeURIComponent(e.name)}`;
      if (e.isDirectory) {
        await walk(childRel, uri);
        continue;
      }
      if (!e.isFile) continue;
      if (resources.length >= MAX_SKILL_FILES) {
        throw new Error(`more than ${MAX_SKILL_FILES} files`);
      }
      const path = join(served.folder, childRel);
      const info = await Deno.lstat(path);
      total += info.size;
      if (total > MAX_SKILL_FILE_BYTES) {
        throw new Error(`more than ${MAX_SKILL_FILE_BYTES} bytes`);
      }
      const digest = await walking.digest(
        path,
        `${info.size}:${info.mtime?.getTime() ?? 0}`,
      );
      resources.push({ uri, digest, size: info.size });
      files.set(uri, childRel);
      if (isSkillFile) frontmatter = await walking.frontmatter(path);
    }
  };
  await walk("", root);
  walking.done();
  const fm = frontmatter as Record<string, unknown> | null;
  if (
    !fm || fm.name !== served.name || typeof fm.description !== "string" ||
    fm.description.trim() === ""
  ) {
    throw new Error("no frontmatter with this name and a description");
  }
  return {
    entry: { uri: `${root}/SKILL.md`, frontmatter: fm, resources },
    read: (uri, signal) => {
      const rel = files.get(uri);
      return rel === undefined ? null : readInside(served.folder, rel, signal);
    },
  };
}

/** The scheme imported servers' skills are served again under. */
export const REMOTE_SCHEME = "mcp-skill://";

// `skill://acme/refunds/SKILL.md` of server "kit" is
// `mcp-skill://kit/acme/refunds/SKILL.md` here.
function remoteUri(server: string, uri: string): string {
  return `${REMOTE_SCHEME}${server}/${
    uri.replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
  }`;
}

function remoteRoot(remote: RemoteSkill): string {
  return remoteUri(remote.server, remote.entry.uri).slice(
    0,
    -"/SKILL.md".length,
  );
}

// The server's entry under this host's URIs; a read is the server's bytes,
// answered only when they are what its entry promised.
function remoteManifest(remote: RemoteSkill): Manifest {
  const origin = new Map<string, SkillFileEntry>();
  const resources = remote.entry.resources.map((r) => {
    const uri = remoteUri(remote.server, r.uri);
    origin.set(uri, r);
    return { ...r, uri };
  });
  return {
    entry: {
      uri: remoteUri(remote.server, remote.entry.uri),
      frontmatter: remote.entry.frontmatter,
      resources,
    },
    read: (uri, signal) => {
      const file = origin.get(uri);
      if (!file) return null;
      return (async () => {
        const bytes = await remote.read(file.uri, signal);
        if (
          bytes.length !== file.size ||
          await sha256Digest(bytes) !== file.digest
        ) {
          throw Object.assign(
            new Error(
              `Resource "${uri}" is not what the MCP server "${remote.server}" listed: its size or digest differs`,
            ),
            { code: -32603 },
          );
        }
        return bytes;
      })();
    },
  };
}

// The files and folders right under a directory of a manifest, in the
// manifest's order; null when none of its files is under it (a file, or a
// folder holding nothing served): a skill's folders are those its files
// are in, for a local folder and an imported server's skill alike.
function childrenOf(
  dir: string,
  entry: McpSkillEntry,
): { uri: string; name: string; dir: boolean }[] | null {
  const prefix = `${dir}/`;
  // Each name under it, and whether it is a folder.
  const names = new Map<string, boolean>();
  for (const { uri } of entry.resources) {
    if (!uri.startsWith(prefix)) continue;
    const [name, ...below] = uri.slice(prefix.length).split("/");
    if (!names.has(name!)) names.set(name!, below.length > 0);
  }
  if (names.size === 0) return null;
  return [...names].map(([name, isDir]) => ({
    uri: prefix + name,
    // Each segment decodes: verifySkill checks an imported one's.
    name: decodeURIComponent(name),
    dir: isDir,
  }));
}

/**
 * The YAML frontmatter of a `SKILL.md`, as the file has it (the block
 * between the first two `---` lines), or null without one. Read as the
 * skill loader reads it (`splitFrontmatter`: a byte-order mark, CRLF, the
 * bound on YAML aliases): the text may be an imported server's.
 *
 * @param text the file
 * @returns the fields, verbatim
 * @example
 * ```ts
 * import { readFrontmatter } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   readFrontmatter("---\nname: a\ndescription: A\nmetadata:\n  v: 1\n---\nBody"),
 *   { name: "a", description: "A", metadata: { v: 1 } },
 * );
 * assert.equal(readFrontmatter("no frontmatter"), null);
 * ```
 */
export function readFrontmatter(text: string): Record<string, unknown> | null {
  try {
    return splitFrontmatter(text, "SKILL.md").data;
  } catch {
    return null;
  }
}

// Reads `rel` under `folder` only while its real path is inside the
// folder's real path and it is a regular file within the size bound.
async function readInside(
  folder: string,
  rel: string,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const realRoot = await Deno.realPath(folder);
  const path = join(folder, rel);
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch {
    throw invalidParams(`Resource "${rel}" not found`);
  }
  // Strictly below the folder: a name may start with ".." ("..draft.md").
  if (real === realRoot || !within(real, realRoot)) {
    throw invalidParams(`Resource "${rel}" is outside its skill's folder`);
  }
  const info = await Deno.lstat(real);
  if (!info.isFile) throw invalidParams(`Resource "${rel}" is not a file`);
  if (info.size > MAX_SKILL_FILE_BYTES) {
    throw invalidParams(
      `Resource "${rel}" is too large: ${info.size} bytes, the bound is ${MAX_SKILL_FILE_BYTES}`,
    );
  }
  return await Deno.readFile(real, { signal });
}

// One page of `all` from `cursor`; its `nextCursor` is absent on the last
// page, so the answers spread it as it is.
function paginate<T>(
  all: readonly T[],
  cursor: unknown,
  size: number,
): { page: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    start = typeof cursor === "string" && /^[0-9]+$/.test(cursor)
      ? Number(cursor)
      : -1;
    if (start < 0 || start > all.length) {
      throw invalidParams(`Invalid cursor "${String(cursor)}"`);
    }
  }
  const end = start + size;
  return {
    page: all.slice(start, end),
    ...(end < all.length ? { nextCursor: String(end) } : {}),
  };
}

const MIME: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  py: "text/x-python",
  sh: "text/x-shellscript",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/typescript",
  html: "text/html",
  css: "text/css",
  csv: "text/csv",
  xml: "application/xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  zip: "application/zip",
};

function mimeTypeOf(name: string): string {
  const dot = name.lastIndexOf(".");
  const ext = dot < 0 ? "" : name.slice(dot + 1).toLowerCase();
  // Own keys only: a file ending in `.constructor` must not find Object.
  return Object.hasOwn(MIME, ext) ? MIME[ext]! : "application/octet-stream";
}

// Text when the bytes are UTF-8 (a BOM kept, so the bytes a client
// re-encodes are the bytes hashed) and the type is not a binary one.
function asText(bytes: Uint8Array, mimeType: string): string | null {
  if (/^(image|audio|video)\/(?!svg)|^application\/(pdf|zip)$/.test(mimeType)) {
    return null;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
      bytes,
    );
  } catch {
    return null;
  }
}

/**
 * The `sha256:` digest of bytes, as SEP-2640 manifests write it.
 *
 * @param bytes the bytes
 * @returns `sha256:` and 64 lower-case hex digits
 * @example
 * ```ts
 * import { sha256Digest } from "./skills_extension.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   await sha256Digest(new TextEncoder().encode("hi")),
 *   "sha256:8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
 * );
 * ```
 */
export async function sha256Digest(bytes: Uint8Array): Promise<string> {
  const hash = await crypto.subtle.digest(
    "SHA-256",
    bytes as Uint8Array<ArrayBuffer>,
  );
  return `sha256:${new Uint8Array(hash).toHex()}`;
}
