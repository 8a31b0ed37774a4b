/**
 * `policy.interpreters` in `skillbox.jsonc`: which program runs a skill
 * script, by its extension, and where that program is found. The
 * operator's map is laid over the default one; `null` turns an extension
 * off, and an extension in neither map is refused. `"deno"` means the sandboxed Deno (a confined `deno run` with no
 * permission but reading the skill and the workspace, writing the
 * workspace); any other value is a program name looked up in the
 * confinement's `/usr/local/bin`, `/usr/bin` and `/bin`.
 *
 * ```jsonc
 * "policy": {
 *   "interpreters": { ".sh": null, ".rb": "ruby" }
 * }
 * ```
 *
 * @module
 */

import { extname, join } from "node:path";
import { isPlainObject } from "../../../protocol/json.ts";

/** The interpreter name that means the sandboxed Deno. */
export const DENO_INTERPRETER = "deno";

/** The interpreters when the policy names none. */
export const DEFAULT_INTERPRETERS: Readonly<Record<string, string>> = {
  ".py": "python3",
  ".sh": "sh",
  ".js": DENO_INTERPRETER,
  ".ts": DENO_INTERPRETER,
};

const EXTENSION = /^\.[A-Za-z0-9]{1,16}$/;
const PROGRAM = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/**
 * Reads `policy.interpreters` over the defaults.
 *
 * @param policy the `policy` section as written (other keys ignored)
 * @returns extension → program, without the ones turned off
 * @throws {TypeError} naming `policy.interpreters...` when malformed
 * @example
 * ```ts
 * import { parseInterpreters } from "./interpreters.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseInterpreters({})[".py"], "python3");
 * const map = parseInterpreters({ interpreters: { ".sh": null, ".rb": "ruby" } });
 * assert.equal(map[".sh"], undefined);
 * assert.equal(map[".rb"], "ruby");
 * assert.throws(() => parseInterpreters({ interpreters: { ".py": "/tmp/x" } }), /policy\.interpreters\.\.py/);
 * ```
 */
export function parseInterpreters(
  policy: Record<string, unknown> | undefined,
): Record<string, string> {
  const raw = policy?.interpreters;
  const map: Record<string, string> = { ...DEFAULT_INTERPRETERS };
  if (raw === undefined) return map;
  if (!isPlainObject(raw)) {
    throw new TypeError(
      "policy.interpreters: must map extensions to program names or null",
    );
  }
  for (const [ext, program] of Object.entries(raw)) {
    if (!EXTENSION.test(ext)) {
      throw new TypeError(
        `policy.interpreters: "${ext}" is not an extension like ".py"`,
      );
    }
    if (program === null) {
      delete map[ext];
    } else if (typeof program === "string" && PROGRAM.test(program)) {
      map[ext] = program;
    } else {
      throw new TypeError(
        `policy.interpreters.${ext}: must be a program name (no path) or null`,
      );
    }
  }
  return map;
}

/** Where the confinement looks for interpreters (the bound system). */
const SYSTEM_BIN = ["/usr/local/bin", "/usr/bin", "/bin"];

/**
 * The interpreter of a script by the policy, or why it cannot run.
 *
 * @param script the script's relative path
 * @param interpreters the policy's extension → program map
 * @returns the program's absolute path, `deno` for the sandboxed Deno,
 *   or a message the model can read
 * @example
 * ```ts
 * import { findInterpreter } from "./interpreters.ts";
 * import assert from "node:assert/strict";
 * assert.ok("path" in await findInterpreter("a.sh", { ".sh": "sh" }));
 * assert.ok("deno" in await findInterpreter("a.ts", { ".ts": "deno" }));
 * const refused = await findInterpreter("a.rb", { ".sh": "sh" });
 * assert.ok("error" in refused && /no interpreter for "\.rb"/.test(refused.error));
 * ```
 */
export async function findInterpreter(
  script: string,
  interpreters: Readonly<Record<string, string>>,
): Promise<{ path: string } | { deno: true } | { error: string }> {
  const ext = extname(script);
  const program = Object.hasOwn(interpreters, ext)
    ? interpreters[ext]
    : undefined;
  if (!program) {
    const allowed = Object.keys(interpreters).sort().join(", ") || "none";
    return {
      error: `Cannot run "${script}": the policy allows no interpreter for ` +
        `"${ext || "(no extension)"}" files (allowed: ${allowed})`,
    };
  }
  if (program === DENO_INTERPRETER) return { deno: true };
  if (program.includes("/")) {
    return {
      error: `Cannot run "${script}": interpreter "${program}" must be a ` +
        "program name, found in /usr/local/bin, /usr/bin or /bin",
    };
  }
  for (const dir of SYSTEM_BIN) {
    const path = join(dir, program);
    if (await isExecutableFile(path)) return { path };
  }
  return {
    error: `Cannot run "${script}": its interpreter "${program}" is not ` +
      "installed on this machine",
  };
}

/**
 * Whether a path is a file someone may execute (links followed).
 *
 * @param path the path
 * @returns false when it is missing, not a file, or has no execute bit
 * @example
 * ```ts
 * import { isExecutableFile } from "./interpreters.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await isExecutableFile("/bin/sh"), true);
 * assert.equal(await isExecutableFile("/nonexistent"), false);
 * ```
 */
export async function isExecutableFile(path: string): Promise<boolean> {
  const info = await Deno.stat(path).catch(() => null);
  return info !== null && info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
}
