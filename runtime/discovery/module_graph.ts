/**
 * A module's local import graph and its content hash (the module version).
 * Read by the host as text: no untrusted code runs here.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const { O_NOCTTY, O_NONBLOCK, O_RDONLY } = constants;
// As Deno.readTextFile decodes: a byte order mark is kept.
const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** The local files a module is made of, and their combined hash. */
export interface ModuleGraph {
  /** The module and every local file it imports (absolute, sorted). */
  files: string[];
  /** SHA-256 (hex) over each file's path and content. */
  hash: string;
  /** The text of each file in `files` (as hashed). */
  sources: ReadonlyMap<string, string>;
}

/**
 * Most bytes read of one local file, and of a module and its local imports
 * in all: the host reads and holds whatever a module imports, and a file or
 * a graph past this fails the module's read.
 */
export const MAX_MODULE_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Most files (found or not) in a module's graph, the module included: each
 * costs a stat, and a missing file no bytes.
 */
export const MAX_MODULE_GRAPH_FILES = 1024;

// Value imports and re-exports with a literal local specifier. `import type`
// is erased at run time, so it is neither loaded nor part of the grant.
// Between the keyword and `from`, binding names may be string literals
// (ES2022: `import { "a b" as c } from`, `export { x as "y" } from`); a
// literal is skipped whole, within one line. A clause stops at its own
// keyword: each search then scans only up to the next one, where it
// scanned on to a `;` or the end of the file (quadratic: 180 KB of
// `import x ` held the host's thread for 59 s).
const fromClause = (keyword: string) =>
  new RegExp(
    String.raw`\b${keyword}\s+(?!type\b)` +
      String.raw`(?:(?!\b${keyword}\b)[^'";]|"[^"\n]*"|'[^'\n]*')*?` +
      String.raw`\bfrom\s*["']([^"']+)["']`,
    "g",
  );
const SPECIFIERS = [
  fromClause("import"),
  fromClause("export"),
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*[,)]/g,
];

/**
 * The file a local import specifier names: a `file:` URL, or a path
 * relative to the importing file or absolute. Anything else (`npm:`,
 * `jsr:`, a URL, a bare name) is not local.
 *
 * @param specifier the import's specifier
 * @param from the importing file's absolute path
 * @returns the absolute path, or null when the specifier is not local
 * @example Relative, absolute and package specifiers
 * ```ts
 * import { localTarget } from "./module_graph.ts";
 * import assert from "node:assert/strict";
 * assert.equal(localTarget("./b.ts", "/s/a.ts"), "/s/b.ts");
 * assert.equal(localTarget("file:///x/c.js", "/s/a.ts"), "/x/c.js");
 * assert.equal(localTarget("npm:zod", "/s/a.ts"), null);
 * ```
 */
export function localTarget(specifier: string, from: string): string | null {
  if (specifier.startsWith("file:")) return fileURLToPath(specifier);
  if (
    specifier.startsWith("./") || specifier.startsWith("../") ||
    specifier.startsWith("/")
  ) return resolve(dirname(from), specifier);
  return null;
}

/**
 * Walks a module's local imports and hashes their contents. Missing or
 * unreadable imports are hashed as absent (the load will report them).
 *
 * @param path absolute path of the module
 * @returns the files and the hash
 * @throws {Deno.errors.NotFound} when the module itself does not exist
 * @throws {RangeError} when a file, or the module and its imports in all,
 *   exceed {@link MAX_MODULE_FILE_BYTES}, or they are more than
 *   {@link MAX_MODULE_GRAPH_FILES} files
 * @example Hash a module
 * ```ts
 * import { moduleGraph } from "./module_graph.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.ts`, 'import "./b.ts";');
 * await Deno.writeTextFile(`${dir}/b.ts`, "export {};");
 * const graph = await moduleGraph(`${dir}/a.ts`);
 * assert.deepEqual(graph.files, [`${dir}/a.ts`, `${dir}/b.ts`]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function moduleGraph(path: string): Promise<ModuleGraph> {
  const root = resolve(path);
  const seen = new Map<string, string | null>();
  const todo = [root];
  let total = 0;
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    if (seen.size === MAX_MODULE_GRAPH_FILES) {
      throw new RangeError(
        `Module "${root}" and its imports are more than ${MAX_MODULE_GRAPH_FILES} files`,
      );
    }
    let bytes: Uint8Array | null;
    try {
      bytes = await readRegularFile(file);
    } catch (err) {
      if (file === root || err instanceof RangeError) throw err;
      bytes = null;
    }
    if (bytes === null && file === root) {
      throw new Deno.errors.NotFound(`"${file}" is not a regular file`);
    }
    total += bytes?.length ?? 0;
    if (total > MAX_MODULE_FILE_BYTES) {
      throw new RangeError(
        `Module "${root}" and its imports are larger than ${MAX_MODULE_FILE_BYTES} bytes in all`,
      );
    }
    const text = bytes && UTF8.decode(bytes);
    seen.set(file, text);
    if (text === null) continue;
    for (const pattern of SPECIFIERS) {
      for (const match of text.matchAll(pattern)) {
        const target = localTarget(match[1]!, file);
        if (target && !seen.has(target)) todo.push(target);
      }
    }
  }
  const files = [...seen.keys()].sort();
  // Synchronous digest: no thread-pool round trip per module.
  const hash = createHash("sha256");
  files.forEach((f, i) => {
    if (i > 0) hash.update("\u0001");
    hash.update(`${f}\u0000${seen.get(f) ?? "\u0000missing"}`);
  });
  return {
    files: files.filter((f) => seen.get(f) !== null),
    hash: hash.digest("hex"),
    sources: new Map(
      [...seen].filter((e): e is [string, string] => e[1] !== null),
    ),
  };
}

// A module names any path it likes: `import "/dev/zero"` was read into the
// host's memory at hundreds of MiB a second, a FIFO held the read (and its
// thread) for ever. Only a regular file is read, up to the bound; anything
// else is null (absent).
async function readRegularFile(file: string): Promise<Uint8Array | null> {
  // Checked before opening, so that no device is opened at all.
  if (!(await Deno.stat(file)).isFile) return null;
  // Non-blocking: the path may have been swapped to a FIFO since the stat,
  // and a blocking open of a FIFO waits for a writer for ever. Synchronous,
  // as all that follows: none of it waits (a regular file's reads do not),
  // and each asynchronous step cost a thread hop, which tripled the cost of
  // loading a folder of small modules from the cache.
  let fd: number;
  try {
    fd = openSync(file, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  } catch (err) {
    // Removed since the stat: as missing as a module whose stat failed.
    if ((err as { code?: string }).code === "ENOENT") {
      throw new Deno.errors.NotFound((err as Error).message);
    }
    throw err;
  }
  try {
    // Checked again on what was opened.
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    // Sized by the stat, a byte over so that the end is seen; a file that
    // grew since gets a bigger buffer, up to the bound.
    let buffer = Buffer.alloc(Math.min(stat.size, MAX_MODULE_FILE_BYTES) + 1);
    let size = 0;
    for (;;) {
      if (size === buffer.length) {
        const bigger = Buffer.alloc(
          Math.min(buffer.length * 2, MAX_MODULE_FILE_BYTES + 1),
        );
        buffer.copy(bigger);
        buffer = bigger;
      }
      const read = readSync(fd, buffer, size, buffer.length - size, size);
      if (read === 0) break;
      size += read;
      if (size > MAX_MODULE_FILE_BYTES) {
        throw new RangeError(
          `File "${file}" is larger than ${MAX_MODULE_FILE_BYTES} bytes`,
        );
      }
    }
    return buffer.subarray(0, size);
  } finally {
    closeSync(fd);
  }
}
