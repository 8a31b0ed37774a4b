/**
 * The hosts a skill's scripts may reach. Like `env`, neither the Agent
 * Skills specification nor A2E's dialect has a field for it, so skillbox
 * reads its own: `net` in the frontmatter, a list of hosts (`name`,
 * `name:port`, or `"*"`). A script gets a network only for the declared
 * hosts the operator's policy grants (`policy.permissions.net`, checked by
 * the sandbox's own grant check), and then only through the host's egress
 * broker (its address rules: a loopback or private address only for a
 * host the operator names in `egress.allow_private_hosts`).
 *
 * ```yaml
 * ---
 * name: weather
 * description: Fetches a forecast.
 * net: [api.weather.example]
 * ---
 * ```
 *
 * @module
 */

import type { FieldReader } from "../frontmatter.ts";
import { checkGrant } from "../../sandbox/permissions.ts";

/** The frontmatter key. */
export const NET_KEY = "net";

const HOST = /^(\*|[a-z0-9]([a-z0-9.-]{0,252})(:\d{1,5})?)$/;

/**
 * Reads the declared hosts; a malformed one is dropped with a warning.
 *
 * @param fields the frontmatter reader
 * @returns the hosts (lower-case), or null when the skill declares none
 * @example
 * ```ts
 * import { FieldReader } from "../frontmatter.ts";
 * import { readScriptNet } from "./script_net.ts";
 * import assert from "node:assert/strict";
 * const fields = new FieldReader({ net: ["API.example.com", "bad host", "h:8080"] });
 * assert.deepEqual(readScriptNet(fields), ["api.example.com", "h:8080"]);
 * assert.equal(fields.warnings.length, 1);
 * ```
 */
export function readScriptNet(fields: FieldReader): string[] | null {
  const hosts = fields.strList(NET_KEY);
  if (hosts === null) return null;
  const kept: string[] = [];
  for (const raw of hosts) {
    const host = raw.toLowerCase();
    if (!HOST.test(host)) {
      fields.warn(`field "net": "${raw}" is not a host name`);
    } else if (!kept.includes(host)) kept.push(host);
  }
  return kept;
}

/**
 * Splits the declared hosts into the ones the policy grants and the ones
 * it refuses, each checked as a sandbox grant of `net` is.
 *
 * @param declared the skill's `net`
 * @param policyNet the policy's `permissions.net`
 * @returns granted and refused hosts, in the declared order
 * @example
 * ```ts
 * import { splitScriptNet } from "./script_net.ts";
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
