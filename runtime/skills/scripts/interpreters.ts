/**
 * `policy.interpreters` in `skillbox.jsonc`: which program runs a skill
 * script, by its extension. The operator's map is laid over the default
 * one; `null` turns an extension off, and an extension in neither map is
 * refused. `"deno"` means the sandboxed Deno (a confined `deno run` with no
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
