/**
 * Host names as the egress broker compares them: allow-list entries
 * (`name`, `name:port`, `*`) and the hosts operator secrets are bound to.
 *
 * @module
 */

/**
 * A URL's host in the form entries are compared with: lower case, no
 * trailing dot, IPv6 without brackets.
 *
 * @param url the target
 * @returns the host name
 * @example
 * ```ts
 * import { hostOf } from "./hosts.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostOf(new URL("http://API.Example.com./x")), "api.example.com");
 * assert.equal(hostOf(new URL("http://[::1]:8080/")), "::1");
 * ```
 */
export function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

/**
 * A URL's port, with the scheme's default filled in.
 *
 * @param url the target
 * @returns the port number as text
 * @example
 * ```ts
 * import { portOf } from "./hosts.ts";
 * import assert from "node:assert/strict";
 * assert.equal(portOf(new URL("https://x.io/")), "443");
 * ```
 */
export function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/**
 * Whether an entry (`name`, `name:port`, `[v6]:port` or `*`) names the
 * URL's host and port. `*` matches every host.
 *
 * @param url the target
 * @param entry one allow-list entry
 * @returns true when it matches
 * @example
 * ```ts
 * import { hostMatches } from "./hosts.ts";
 * import assert from "node:assert/strict";
 * const url = new URL("https://api.example.com/v1");
 * assert.equal(hostMatches(url, "api.example.com"), true);
 * assert.equal(hostMatches(url, "api.example.com:8443"), false);
 * assert.equal(hostMatches(url, "example.com"), false);
 * ```
 */
export function hostMatches(url: URL, entry: string): boolean {
  const e = entry.toLowerCase().trim();
  if (e === "*") return true;
  const m = /^(\[[^\]]+\]|[^:]+|[0-9a-f:]+)(?::(\d+))?$/.exec(e);
  if (!m) return false;
  let host = m[1]!.replace(/\.$/, "");
  let port = m[2];
  if (!m[1]!.startsWith("[") && m[1]!.includes(":")) {
    // A bare IPv6 address: no port.
    host = e;
    port = undefined;
  }
  if (host.startsWith("[")) host = host.slice(1, -1);
  // An IPv6 entry in the URL's own spelling (`::ffff:127.0.0.1` is
  // `::ffff:7f00:1` in a URL), so the operator's form matches.
  if (host.includes(":")) host = canonicalV6(host);
  return host === hostOf(url) && (port === undefined || port === portOf(url));
}

/**
 * Whether every list allows the URL (lists narrow one another: the policy,
 * the module's grant, the session's toolkit configuration).
 *
 * @param url the target
 * @param lists allow-lists that must all match
 * @returns true when each list has a matching entry
 * @example
 * ```ts
 * import { allowedByAll } from "./hosts.ts";
 * import assert from "node:assert/strict";
 * const url = new URL("https://a.io/");
 * assert.equal(allowedByAll(url, [["*"], ["a.io"]]), true);
 * assert.equal(allowedByAll(url, [["*"], ["b.io"]]), false);
 * assert.equal(allowedByAll(url, []), false);
 * ```
 */
export function allowedByAll(url: URL, lists: string[][]): boolean {
  return lists.length > 0 &&
    lists.every((list) => list.some((entry) => hostMatches(url, entry)));
}

function canonicalV6(host: string): string {
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    return host; // not an address: matches nothing a URL names
  }
}
