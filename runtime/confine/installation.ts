/**
 * What of the host a command needs to see to run confined, found from the
 * command line alone (the way Claude Desktop's configuration writes one:
 * `{"command": "node", "args": ["/abs/server/dist/index.js", "/srv/data"]}`):
 *
 * - the program as named (found on `PATH`, never resolved: a virtual
 *   environment's interpreter finds its environment from its own path) and
 *   its real file;
 * - a virtual environment's root (`pyvenv.cfg` beside or above the
 *   program) and its base interpreter's installation (`home` in that file);
 * - a script's interpreter (`#!/usr/bin/env node`), found the same way;
 * - each file or folder named in the arguments that exists (an argument
 *   that reads as a path, absolute or `./`, `../`, is checked by the rule
 *   even when absent), and for a file
 *   the package folder that owns it (up to its `package.json`,
 *   `pyproject.toml` or `deno.json`) and the `node_modules` folders above it, where Node
 *   resolves its imports from.
 *
 * Everything is read-only and goes through the mount rule
 * (`mount_rule.ts`): an argument the rule refuses is an error; a folder
 * found rather than named (a package folder, a base interpreter) that the
 * rule refuses is left out.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  checkMount,
  mountable,
  type MountRuleOptions,
  realPath,
} from "./mount_rule.ts";

/** Where a command runs (for {@link commandFiles}). */
export interface CommandContext extends MountRuleOptions {
  /** Its arguments. @default [] */
  args?: readonly string[];
  /** The `PATH` the command is looked up on. @default "" */
  path?: string;
  /** The folder relative paths are in. @default "/" */
  cwd?: string;
}

/** What {@link commandFiles} found. */
export interface CommandFiles {
  /** The program to run, as named (absolute; links not followed). */
  program: string;
  /** Host paths to mount read-only, each once. */
  read: string[];
}

// The files that mark a package's root (Node, Python, Deno).
const PACKAGE_FILES = [
  "package.json",
  "pyproject.toml",
  "deno.json",
  "deno.jsonc",
];

/**
 * Finds the program and the host paths a command needs, read-only.
 *
 * @param command the program (a name on `PATH`, or a path)
 * @param context its arguments, `PATH`, working folder and the mount rule's
 * options
 * @returns the program as named and the paths to mount
 * @throws {SkillboxError} `runtime_error` when the program is not found, or
 * when an argument names a path the mount rule refuses
 * @example A program on PATH and a folder named in its arguments
 * ```ts
 * import { commandFiles } from "./installation.ts";
 * import assert from "node:assert/strict";
 * const data = Deno.makeTempDirSync();
 * const found = commandFiles("sh", { args: ["-c", data], path: "/usr/bin:/bin" });
 * assert.equal(found.program, "/usr/bin/sh");
 * assert.ok(found.read.includes(data));
 * assert.throws(() => commandFiles("sh", { args: ["/"], path: "/usr/bin" }), /never mounted/);
 * ```
 */
export function commandFiles(
  command: string,
  context: CommandContext,
): CommandFiles {
  const cwd = context.cwd ?? "/";
  const program = locateProgram(command, { path: context.path ?? "", cwd });
  if (program === null) {
    throw new SkillboxError(
      "runtime_error",
      `Cannot start "${command}": it was not found on PATH`,
    );
  }
  // The program itself is held to the rule as an argument is.
  checkMount(program, { ...context, by: "command" });
  const read = new Set<string>();
  const found = (path: string) => {
    if (mountable(path, context)) read.add(path);
  };
  programFiles(program, { context, found, depth: 0 });
  for (const arg of context.args ?? []) {
    // Only what reads as a path: an option or a word that happens to name
    // a file in the working folder is no grant.
    if (arg.startsWith("~")) checkMount(arg, { ...context, by: "args" });
    if (!isAbsolute(arg) && !/^\.\.?\//.test(arg)) continue;
    // The rule holds for a path that is absent too (or that this process
    // may not even look at, such as /proc/self/environ).
    const at = checkMount(arg, { ...context, cwd, by: "args" });
    if (lstat(at) === null) continue;
    read.add(at);
    if (stat(at)?.isFile) scriptFiles(at, found);
  }
  return { program, read: [...read] };
}

/**
 * The absolute path of a program as named: looked up on `PATH` unless it
 * names a path; links are not followed.
 *
 * @param command a program name, or a path
 * @param where the `PATH` (absolute folders only) and the folder a relative
 * path is in
 * @returns its path, or null when not found
 * @example
 * ```ts
 * import { locateProgram } from "./installation.ts";
 * import assert from "node:assert/strict";
 * assert.equal(locateProgram("sh", { path: "/usr/bin:/bin" }), "/usr/bin/sh");
 * assert.equal(locateProgram("surely-not-a-program", { path: "/usr/bin" }), null);
 * ```
 */
export function locateProgram(
  command: string,
  where: { path: string; cwd?: string },
): string | null {
  const candidates = command.includes("/")
    ? [resolve(where.cwd ?? "/", command)]
    : where.path.split(":").filter((d) => isAbsolute(d)).map((d) =>
      join(d, command)
    );
  return candidates.find((c) => stat(c)?.isFile) ?? null;
}

/** The program, its real file, its virtual environment and interpreter. */
function programFiles(
  program: string,
  at: {
    context: CommandContext;
    found: (path: string) => void;
    depth: number;
  },
): void {
  const real = realPath(program);
  at.found(program);
  if (real !== null) at.found(real);
  venvFiles(program, at.found);
  if (real === null) return;
  scriptFiles(real, at.found);
  // A script started by its interpreter: that program's files too (once:
  // an interpreter is not itself a script).
  const interpreter = at.depth === 0 ? shebang(real) : null;
  if (interpreter === null) return;
  const located = locateProgram(interpreter, {
    path: at.context.path ?? "",
  });
  if (located) programFiles(located, { ...at, depth: at.depth + 1 });
}

/**
 * A virtual environment's root (where `pyvenv.cfg` is, beside the program
 * or one folder up) and its base interpreter's installation (`home`, the
 * folder of the base interpreter; its parent when that is a `bin` folder,
 * where the standard library is).
 */
function venvFiles(program: string, found: (path: string) => void): void {
  for (const root of [dirname(program), dirname(dirname(program))]) {
    const cfg = readText(join(root, "pyvenv.cfg"));
    if (cfg === null) continue;
    found(root);
    const home = cfg.match(/^\s*home\s*=\s*(.+?)\s*$/m)?.[1];
    if (home && isAbsolute(home)) {
      const base = realPath(home) ?? home;
      found(basename(base) === "bin" ? dirname(base) : base);
    }
    return;
  }
}

/**
 * A script's package folder (up to its `package.json`, `pyproject.toml`
 * or `deno.json(c)`) and the `node_modules` folders above it.
 */
function scriptFiles(file: string, found: (path: string) => void): void {
  let dir = dirname(file);
  let owner: string | null = null;
  for (; dir !== "/"; dir = dirname(dir)) {
    if (PACKAGE_FILES.some((f) => stat(join(dir, f))?.isFile)) {
      owner = dir;
      break;
    }
  }
  if (owner === null) return;
  found(owner);
  for (let up = dirname(owner); up !== "/"; up = dirname(up)) {
    const modules = join(up, "node_modules");
    if (stat(modules)?.isDirectory) found(modules);
  }
}

/** The program a `#!` line names (`#!/usr/bin/env node` is `node`). */
function shebang(file: string): string | null {
  let head: string;
  try {
    using f = Deno.openSync(file);
    const buf = new Uint8Array(256);
    const n = f.readSync(buf) ?? 0;
    head = new TextDecoder().decode(buf.subarray(0, n));
  } catch {
    return null;
  }
  if (!head.startsWith("#!")) return null;
  const words = head.slice(2).split("\n")[0]!.trim().split(/\s+/);
  const [first, ...rest] = words;
  if (!first) return null;
  if (basename(first) !== "env") return first;
  // `env -S node --flag`, `env node`: the first word that is no option.
  return rest.find((w) => !w.startsWith("-")) ?? null;
}

function stat(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}
