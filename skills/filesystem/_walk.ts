/**
 * Directory walking and glob matching shared by `list_dir`, `find_files`
 * and `grep`. Symlinks are reported but never descended into, so a walk
 * cannot loop or leave root.
 *
 * @module
 */

/** The type of a directory entry. */
export type EntryType = "file" | "dir" | "symlink" | "other";

/**
 * The type of a directory entry or of an lstat result.
 *
 * @param entry what `Deno.readDir` or `Deno.lstat` said
 * @returns its type; a symlink is never followed
 */
export function entryType(
  entry: Pick<Deno.DirEntry, "isFile" | "isDirectory" | "isSymlink">,
): EntryType {
  if (entry.isSymlink) return "symlink";
  if (entry.isDirectory) return "dir";
  return entry.isFile ? "file" : "other";
}

/** One entry found by {@link walk}. */
export interface WalkEntry {
  /** Absolute path. */
  abs: string;
  /** Path relative to the walk's base, with `/` separators. */
  rel: string;
  type: EntryType;
}

/** Options of {@link walk}. */
interface WalkOptions {
  /** Deepest level to list (1 = direct children only). */
  maxDepth: number;
  /** Whether to list and enter names starting with `.`. */
  includeHidden: boolean;
  /** Stop after this many entries (the caller reports truncation). */
  maxVisited: number;
}

/**
 * Walks a directory depth-first in name order (deterministic results).
 *
 * @param base absolute directory to walk
 * @param opts depth, hidden and size limits
 * @yields the entries below base
 */
export async function* walk(
  base: string,
  opts: WalkOptions,
): AsyncGenerator<WalkEntry> {
  let visited = 0;
  async function* inner(
    dir: string,
    rel: string,
    depth: number,
  ): AsyncGenerator<WalkEntry> {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const e of Deno.readDir(dir)) entries.push(e);
    } catch (err) {
      // An unreadable subdirectory should not end the whole walk.
      if (err instanceof Deno.errors.PermissionDenied && depth > 1) return;
      throw err;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const e of entries) {
      if (!opts.includeHidden && e.name.startsWith(".")) continue;
      if (++visited > opts.maxVisited) return;
      const entry: WalkEntry = {
        abs: `${dir === "/" ? "" : dir}/${e.name}`,
        rel: rel ? `${rel}/${e.name}` : e.name,
        type: entryType(e),
      };
      yield entry;
      if (entry.type === "dir" && depth < opts.maxDepth) {
        yield* inner(entry.abs, entry.rel, depth + 1);
      }
      if (visited > opts.maxVisited) return;
    }
  }
  yield* inner(base, "", 1);
}

/**
 * Compiles a glob to a regular expression over `/`-separated relative
 * paths. Supports `*` (within a segment), `**` (any number of segments),
 * `?`, `[abc]`, `[!a-z]`, `{a,b}` (nestable) and `\` escapes. A pattern
 * without `/` matches the file name at any depth (`*.ts` = `**\/*.ts`).
 *
 * @param glob the pattern
 * @returns an anchored regular expression
 * @throws {SyntaxError} on an unbalanced `[` or `{`
 */
export function globToRegExp(glob: string): RegExp {
  let pattern = glob.replace(/^\.\//, "");
  const anyDepth = !pattern.includes("/");
  if (pattern.endsWith("/")) pattern += "**";
  let re = "";
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        const atStart = i === 0 || pattern[i - 1] === "/";
        const atEnd = i + 2 === pattern.length || pattern[i + 2] === "/";
        if (atStart && atEnd) {
          if (pattern[i + 2] === "/") {
            re += "(?:[^/]*/)*"; // `**/`: zero or more directories
            i += 2;
          } else {
            re += ".*"; // trailing `**`: everything below
            i += 1;
          }
          continue;
        }
        // `a**b` is not a globstar; treat as a single-segment wildcard.
        i += 1;
      }
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) throw new SyntaxError(`Unclosed "[" in glob "${glob}"`);
      let body = pattern.slice(i + 1, close);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      re += "[" + body.replace(/\\/g, "\\\\").replace(/\//g, "") + "]";
      i = close;
    } else if (c === "{") {
      braces++;
      re += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      re += ")";
    } else if (c === "," && braces > 0) {
      re += "|";
    } else if (c === "\\" && i + 1 < pattern.length) {
      re += RegExp.escape(pattern[++i]!);
    } else {
      re += RegExp.escape(c);
    }
  }
  if (braces > 0) throw new SyntaxError(`Unclosed "{" in glob "${glob}"`);
  return new RegExp(`^${anyDepth ? "(?:[^/]*/)*" : ""}${re}$`);
}

/**
 * Whether bytes look binary: a NUL byte in the first 8 KiB, like git.
 *
 * @param bytes the start of a file
 * @returns true for binary content
 */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}
