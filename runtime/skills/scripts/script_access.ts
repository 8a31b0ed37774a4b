/**
 * What of the host a skill's scripts may reach: environment variables and
 * network hosts. Neither the Agent Skills specification nor A2E's dialect
 * has a field for them, so skillbox reads its own from the frontmatter:
 * `env`, a list of variable names, and `net`, a list of hosts (`name`,
 * `name:port`, or `"*"`), each a list or one space-separated string. A
 * script gets only what the operator's policy grants: the declared
 * variables `policy.permissions.env` names (`"*"`: any), with the host's
 * values and nothing else of the host's environment; a network only for
 * the declared hosts `policy.permissions.net` grants (checked by the
 * sandbox's own grant check), and then only through the host's egress
 * broker (its address rules: a loopback or private address only for a
 * host the operator names in `egress.allow_private_hosts`).
 *
 * ```yaml
 * ---
 * name: gh-report
 * description: Summarizes a repository's open issues.
 * env: [GITHUB_TOKEN]
 * net: [api.github.com]
 * ---
 * ```
 *
 * @module
 */

import type { FieldReader } from "../skill_md.ts";
import { checkGrant } from "../../sandbox/grants.ts";

/** The frontmatter key of the variables. */
export const ENV_KEY = "env";
/** The frontmatter key of the hosts. */
export const NET_KEY = "net";

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
// Never passed, whatever the policy says: they would change how the
// interpreter or the loader behaves inside the confinement.
const NEVER = /^(LD_|DENO_|PYTHON|BASH_ENV$|ENV$|PATH$|HOME$|TMPDIR$)/;
const HOST = /^(\*|[a-z0-9]([a-z0-9.-]{0,252})(:\d{1,5})?)$/;

// A list field: each entry kept once, or dropped with a warning.
function readList(
  fields: FieldReader,
  key: string,
  keep: (raw: string) => string | null,
  why: string,
): string[] | null {
  const values = fields.strList(key);
  if (values === null) return null;
  const kept: string[] = [];
  for (const raw of values) {
    const value = keep(raw);
    if (value === null) fields.warn(`field "${key}": "${raw}" ${why}`);
    else if (!kept.includes(value)) kept.push(value);
  }
  return kept;
}

/**
 * Reads the declared variable names; a bad name is dropped with a warning.
 *
 * @param fields the frontmatter reader
 * @returns the names, or null when the skill declares none
 * @example Bad names and loader variables are dropped
 * ```ts
 * import { FieldReader } from "../skill_md.ts";
 * import { readScriptEnv } from "./script_access.ts";
 * import assert from "node:assert/strict";
 * const fields = new FieldReader({ env: ["API_KEY", "bad name", "LD_PRELOAD"] });
 * assert.deepEqual(readScriptEnv(fields), ["API_KEY"]);
 * assert.equal(fields.warnings.length, 2);
 * ```
 */
export function readScriptEnv(fields: FieldReader): string[] | null {
  return readList(
    fields,
    ENV_KEY,
    (name) => NAME.test(name) && !NEVER.test(name) ? name : null,
    "cannot be passed to scripts",
  );
}

/**
 * Reads the declared hosts; a malformed one is dropped with a warning.
 *
 * @param fields the frontmatter reader
 * @returns the hosts (lower-case), or null when the skill declares none
 * @example Hosts are lower-cased, malformed ones dropped
 * ```ts
 * import { FieldReader } from "../skill_md.ts";
 * import { readScriptNet } from "./script_access.ts";
 * import assert from "node:assert/strict";
 * const fields = new FieldReader({ net: ["API.example.com", "bad host", "h:8080"] });
 * assert.deepEqual(readScriptNet(fields), ["api.example.com", "h:8080"]);
 * assert.equal(fields.warnings.length, 1);
 * ```
 */
export function readScriptNet(fields: FieldReader): string[] | null {
  return readList(
    fields,
    NET_KEY,
    (raw) => HOST.test(raw.toLowerCase()) ? raw.toLowerCase() : null,
    "is not a host name",
  );
}

/**
 * The variables a script gets: declared, granted by the policy, and set on
 * the host.
 *
 * @param declared the skill's `env`
 * @param granted the policy's `permissions.env` (`"*"`: any)
 * @param host reads the host's value
 * @returns name → value
 * @example Only declared, granted and set variables
 * ```ts
 * import { scriptEnv } from "./script_access.ts";
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
 * @example Names the policy does not grant
 * ```ts
 * import { refusedEnv } from "./script_access.ts";
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

/**
 * Splits the declared hosts into the ones the policy grants and the ones
 * it refuses, each checked as a sandbox grant of `net` is.
 *
 * @param declared the skill's `net`
 * @param policyNet the policy's `permissions.net`
 * @returns granted and refused hosts, in the declared order
 * @example Hosts split by the policy's net grant
 * ```ts
 * import { splitScriptNet } from "./script_access.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitScriptNet(["a.example", "b.example:443"], ["b.example"]),
 *   { granted: ["b.example:443"], refused: ["a.example"] });
 * assert.deepEqual(splitScriptNet(["*"], ["a.example"]), { granted: [], refused: ["*"] });
 * ```
 */
export function splitScriptNet(
  declared: readonly string[],
  policyNet: readonly string[],
): { granted: string[]; refused: string[] } {
  const granted: string[] = [];
  const refused: string[] = [];
  for (const host of declared) {
    const check = checkGrant({ net: [host] }, {
      modulePath: "/nonexistent/skill/SKILL.md",
      policy: { net: [...policyNet] },
    });
    (check.ok ? granted : refused).push(host);
  }
  return { granted, refused };
}
