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

/** The most entries a walk of a whole tree visits, bounding a call's work. */
export const MAX_WALK_ENTRIES = 200_000;

/** Options of {@link walk}. */
interface WalkOptions {
  /** Deepest level to list (1 = direct children only). @default 64 */
  maxDepth?: number;
  /** Whether to list and enter names starting with `.`. */
  includeHidden: boolean;
  /**
   * Stop after this many entries; one more sets `truncated`.
   * @default MAX_WALK_ENTRIES
   */
  maxVisited?: number;
}

/** The entries of a {@link walk}, read once, and whether it was cut. */
export interface Walk extends AsyncIterable<WalkEntry> {
  /** Set when an entry lay past `maxVisited` (a walk of exactly it is whole). */
  truncated: boolean;
}

/**
 * Walks a directory depth-first in name order (deterministic results).
 * It counts what it visits, so it alone says whether it stopped short.
 *
 * @param base absolute directory to walk
 * @param opts depth, hidden and size limits
 * @returns the entries below base, and after them whether it was cut
 * @example Two entries of three
 * ```ts
 * import { walk } from "./_walk.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * for (const name of ["a", "b", "c"]) await Deno.writeTextFile(`${dir}/${name}`, "");
 * const entries = walk(dir, { includeHidden: false, maxVisited: 2 });
 * const names: string[] = [];
 * for await (const e of entries) names.push(e.rel);
 * assert.deepEqual(names, ["a", "b"]);
 * assert.ok(entries.truncated);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function walk(base: string, opts: WalkOptions): Walk {
  const { maxDepth = 64, maxVisited = MAX_WALK_ENTRIES } = opts;
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
      if (++visited > maxVisited) {
        walked.truncated = true;
        return;
      }
      const entry: WalkEntry = {
        abs: `${dir === "/" ? "" : dir}/${e.name}`,
        rel: rel ? `${rel}/${e.name}` : e.name,
        type: entryType(e),
      };
      yield entry;
      if (entry.type === "dir" && depth < maxDepth) {
        yield* inner(entry.abs, entry.rel, depth + 1);
      }
      if (visited > maxVisited) return;
    }
  }
  const walked: Walk = {
    truncated: false,
    [Symbol.asyncIterator]: () => inner(base, "", 1),
  };
  return walked;
}

/** A compiled glob: whether a `/`-separated relative path matches it. */
export interface GlobMatcher {
  test(path: string): boolean;
}

/**
 * One state of a glob's automaton: it takes a character passing `test`
 * to state `out`, or (with no test) moves without one to each of `outs`.
 * State 0 is the match.
 */
interface GlobState {
  test?: (c: string) => boolean;
  out: number;
  outs: number[];
}

/** A piece of a parsed glob: one character, a repeat, or alternatives. */
type GlobPart =
  | { char: (c: string) => boolean }
  | { repeat: (c: string) => boolean }
  | { dirs: true }
  | { alts: GlobPart[][] };

const notSlash = (c: string) => c !== "/";
/** The longest glob compiled. */
const MAX_GLOB = 4096;
/** What a trailing `**` does not match, as a RegExp's `.` does not. */
const LINE_ENDS = new Set(["\n", "\r", "\u2028", "\u2029"]);

/**
 * Compiles a glob to a matcher over `/`-separated relative paths. Supports
 * `*` (within a segment), `**` (any number of segments), `?`, `[abc]`,
 * `[!a-z]`, `{a,b}` (nestable) and `\` escapes. A pattern without `/`
 * matches the file name at any depth (`*.ts` = `**\/*.ts`).
 *
 * It runs as an automaton, all ways at once, so matching takes time linear
 * in the path for a given glob: a backtracking regular expression would
 * take time exponential in the stars (`*a*a*a*a*a*a*b` against 40 `a`s).
 *
 * @param glob the pattern
 * @returns its matcher
 * @throws {SyntaxError} on an unbalanced `[` or `{`
 * @throws {RangeError} on a glob longer than 4096 characters
 * @example Match paths at any depth
 * ```ts
 * import { compileGlob } from "./_walk.ts";
 * import assert from "node:assert/strict";
 * const ts = compileGlob("*.{ts,tsx}");
 * assert.ok(ts.test("src/lib/util.ts"));
 * assert.ok(!ts.test("src/lib/util.js"));
 * ```
 */
export function compileGlob(glob: string): GlobMatcher {
  // Matching takes time in proportion to the glob too.
  if (glob.length > MAX_GLOB) {
    throw new RangeError(`A glob may have at most ${MAX_GLOB} characters`);
  }
  let pattern = glob.replace(/^\.\//, "");
  const anyDepth = !pattern.includes("/");
  if (pattern.endsWith("/")) pattern += "**";
  // The innermost open `{` group: its finished alternatives, and the
  // sequence being read.
  const groups: { alts: GlobPart[][]; seq: GlobPart[] }[] = [
    { alts: [], seq: anyDepth ? [{ dirs: true }] : [] },
  ];
  const seq = () => groups.at(-1)!.seq;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        const atStart = i === 0 || pattern[i - 1] === "/";
        const atEnd = i + 2 === pattern.length || pattern[i + 2] === "/";
        if (atStart && atEnd) {
          if (pattern[i + 2] === "/") {
            seq().push({ dirs: true }); // `**/`: zero or more directories
            i += 2;
          } else {
            // Trailing `**`: everything below (as a RegExp's `.*`).
            seq().push({ repeat: (c) => !LINE_ENDS.has(c) });
            i += 1;
          }
          continue;
        }
        // `a**b` is not a globstar; treat as a single-segment wildcard.
        i += 1;
      }
      // `**` inside a name and `***` are one star: one state, not many.
      const last = seq().at(-1);
      if (!(last && "repeat" in last && last.repeat === notSlash)) {
        seq().push({ repeat: notSlash });
      }
    } else if (c === "?") {
      seq().push({ char: notSlash });
    } else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) throw new SyntaxError(`Unclosed "[" in glob "${glob}"`);
      let body = pattern.slice(i + 1, close);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      // One character against a class never backtracks.
      const cls = new RegExp(
        "^[" + body.replace(/\\/g, "\\\\").replace(/\//g, "") + "]$",
      );
      seq().push({ char: (c) => cls.test(c) });
      i = close;
    } else if (c === "{") {
      groups.push({ alts: [], seq: [] });
    } else if (c === "}" && groups.length > 1) {
      const group = groups.pop()!;
      seq().push({ alts: [...group.alts, group.seq] });
    } else if (c === "," && groups.length > 1) {
      const group = groups.at(-1)!;
      group.alts.push(group.seq);
      group.seq = [];
    } else {
      const literal = c === "\\" && i + 1 < pattern.length ? pattern[++i]! : c;
      seq().push({ char: (c) => c === literal });
    }
  }
  if (groups.length > 1) {
    throw new SyntaxError(`Unclosed "{" in glob "${glob}"`);
  }
  const states: GlobState[] = [{ out: -1, outs: [] }];
  const start = buildStates(groups[0]!.seq, 0, states);
  return { test: (path) => runStates(states, start, path) };
}

/** Adds the states of `parts`, followed by state `next`; returns the first. */
function buildStates(
  parts: GlobPart[],
  next: number,
  states: GlobState[],
): number {
  const add = (state: GlobState) => states.push(state) - 1;
  for (let k = parts.length - 1; k >= 0; k--) {
    const part = parts[k]!;
    if ("char" in part) {
      next = add({ test: part.char, out: next, outs: [] });
    } else if ("repeat" in part) {
      const loop = add({ out: -1, outs: [] });
      states[loop]!.outs = [
        add({ test: part.repeat, out: loop, outs: [] }),
        next,
      ];
      next = loop;
    } else if ("dirs" in part) {
      // (a name, then `/`) any number of times
      const loop = add({ out: -1, outs: [] });
      const slash = add({ test: (c) => c === "/", out: loop, outs: [] });
      states[loop]!.outs = [
        buildStates([{ repeat: notSlash }], slash, states),
        next,
      ];
      next = loop;
    } else {
      const outs = part.alts.map((alt) => buildStates(alt, next, states));
      next = add({ out: -1, outs });
    }
  }
  return next;
}

/** Whether the automaton, run on every way at once, ends on the match. */
function runStates(states: GlobState[], start: number, path: string): boolean {
  let current = new Set<number>();
  // Iterative: a glob of many stars chains as many moves without a character.
  const enter = (set: Set<number>, from: number) => {
    const todo = [from];
    for (let at = todo.pop(); at !== undefined; at = todo.pop()) {
      if (set.has(at)) continue;
      set.add(at);
      const state = states[at]!;
      if (!state.test) todo.push(...state.outs);
    }
  };
  enter(current, start);
  for (const c of path.split("")) {
    const next = new Set<number>();
    for (const at of current) {
      const state = states[at]!;
      if (state.test?.(c)) enter(next, state.out);
    }
    if (next.size === 0) return false;
    current = next;
  }
  return current.has(0);
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
