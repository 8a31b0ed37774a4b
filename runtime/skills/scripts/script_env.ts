/**
 * The environment variables a skill's scripts may see. Neither the Agent
 * Skills specification nor A2E's dialect has a field for them, so skillbox
 * reads its own: `env` in the frontmatter, a list of variable names (or
 * one space-separated string). A script gets only the declared names the
 * operator's policy grants (`policy.permissions.env`, where `"*"` grants
 * any), with the host's values; nothing else of the host's environment.
 *
 * ```yaml
 * ---
 * name: gh-report
 * description: Summarizes a repository's open issues.
 * env: [GITHUB_TOKEN]
 * ---
 * ```
 *
 * @module
 */

import type { FieldReader } from "../frontmatter.ts";

/** The frontmatter key. */
export const ENV_KEY = "env";

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
// Never passed, whatever the policy says: they would change how the
// interpreter or the loader behaves inside the confinement.
const NEVER = /^(LD_|DENO_|PYTHON|BASH_ENV$|ENV$|PATH$|HOME$|TMPDIR$)/;

/**
 * Reads the declared names; a bad name is dropped with a warning.
 *
 * @param fields the frontmatter reader
 * @returns the names, or null when the skill declares none
 * @example
 * ```ts
 * import { FieldReader } from "../frontmatter.ts";
 * import { readScriptEnv } from "./script_env.ts";
 * import assert from "node:assert/strict";
 * const fields = new FieldReader({ env: ["API_KEY", "bad name", "LD_PRELOAD"] });
 * assert.deepEqual(readScriptEnv(fields), ["API_KEY"]);
 * assert.equal(fields.warnings.length, 2);
 * ```
 */
export function readScriptEnv(fields: FieldReader): string[] | null {
  const names = fields.strList(ENV_KEY);
  if (names === null) return null;
  const kept: string[] = [];
  for (const name of names) {
    if (!NAME.test(name) || NEVER.test(name)) {
      fields.warn(`field "env": "${name}" cannot be passed to scripts`);
    } else if (!kept.includes(name)) kept.push(name);
  }
  return kept;
}

/**
 * The variables a script gets: declared, granted by the policy, and set on
 * the host.
 *
 * @param declared the skill's `env`
 * @param granted the policy's `permissions.env` (`"*"`: any)
 * @param host reads the host's value
 * @returns name → value
 * @example
 * ```ts
 * import { scriptEnv } from "./script_env.ts";
 * import assert from "node:assert/strict";
 * const host = new Map([["A", "1"], ["B", "2"], ["C", "3"]]);
 * assert.deepEqual(scriptEnv(["A", "B", "D"], ["A", "D"], (n) => host.get(n)), { A: "1" });
 * assert.deepEqual(scriptEnv(["B"], ["*"], (n) => host.get(n)), { B: "2" });
 * ```
 */
export function scriptEnv(
  declared: readonly string[],
  granted: readonly string[],
  host: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Record<string, string> {
  const any = granted.includes("*");
  const env: Record<string, string> = {};
  for (const name of declared) {
    if (NEVER.test(name) || !(any || granted.includes(name))) continue;
    const value = host(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * The declared names the policy does not grant (discovery notes them).
 *
 * @param declared the skill's `env`
 * @param granted the policy's `permissions.env` (`"*"`: any)
 * @returns the refused names, in the declared order
 * @example
 * ```ts
 * import { refusedEnv } from "./script_env.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(refusedEnv(["A", "B"], ["A"]), ["B"]);
 * assert.deepEqual(refusedEnv(["A", "B"], ["*"]), []);
 * ```
 */
export function refusedEnv(
  declared: readonly string[],
  granted: readonly string[],
): string[] {
  if (granted.includes("*")) return [];
  return declared.filter((name) => !granted.includes(name));
}
