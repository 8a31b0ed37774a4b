/**
 * Egress targets: which the broker and the proxy may reach, and how they
 * reach one. Host names are compared with allow-list entries (`name`,
 * `name:port`, `*`) and the hosts operator secrets are bound to; names are
 * resolved in the host by the system resolver (`getaddrinfo`, so
 * `/etc/hosts` and nsswitch apply, which `Deno.resolveDns` skips), every
 * address returned; an address may be reached without the operator's
 * say-so only when public unicast (loopback, private, link-local including
 * cloud metadata at 169.254.169.254, unique-local, CGNAT, multicast,
 * reserved and unspecified addresses are not, nor IPv6 forms that embed
 * one of them: IPv4-mapped, IPv4-compatible, NAT64, 6to4). The connection
 * then goes to the address that was checked, never to a second answer from
 * DNS, while the URL's host still names the server (Host header, TLS SNI
 * and certificate check).
 *
 * @module
 */

import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { lookup } from "node:dns/promises";

// Address rules.

/**
 * Whether an address is public unicast (a broker may reach it by default).
 *
 * @param ip an IPv4 or IPv6 address, without brackets
 * @returns false for every non-public or unparseable address
 * @example
 * ```ts
 * import { isPublicAddress } from "./targets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isPublicAddress("93.184.215.14"), true);
 * assert.equal(isPublicAddress("169.254.169.254"), false);
 * assert.equal(isPublicAddress("::ffff:127.0.0.1"), false);
 * assert.equal(isPublicAddress("fd00::1"), false);
 * ```
 */
export function isPublicAddress(ip: string): boolean {
  const v4 = parseIpv4(ip);
  if (v4) return isPublicIpv4(v4);
  const v6 = parseIpv6(ip);
  return v6 !== null && isPublicIpv6(v6);
}

function parseIpv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function isPublicIpv4([a = 0, b = 0, c = 0]: number[]): boolean {
  return !(
    a === 0 || // "this network", 0.0.0.0/8
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF, docs
    (a === 192 && b === 88 && c === 99) || // 6to4 relay
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) || // docs
    (a === 203 && b === 0 && c === 113) || // docs
    a >= 224 // multicast, reserved, broadcast
  );
}

/** IPv6 text (with `::`, a zone, an IPv4 tail) as 8 groups, or null. */
function parseIpv6(s: string): number[] | null {
  // The zone (after "%") is cut with indexOf: /%.*$/ backtracked on many
  // "%" before a line break, quadratic on the host's thread.
  const zone = s.indexOf("%");
  let text = zone < 0 ? s : s.slice(0, zone);
  if (!text.includes(":")) return null;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIpv4(dotted[2]!);
    if (!v4) return null;
    tail.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    text = dotted[1]!.endsWith("::") ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) =>
    part === ""
      ? []
      : part.split(":").map((g) =>
        /^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN
      );
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if ([...head, ...rest].some(Number.isNaN)) return null;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
  return [
    ...head,
    ...new Array<number>(8 - explicit).fill(0),
    ...rest,
    ...tail,
  ];
}

function isPublicIpv6(g: number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g6 = 0, g7 = 0] = g;
  const embedded = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0) {
    // ::, ::1, IPv4-compatible ::a.b.c.d and IPv4-mapped ::ffff:a.b.c.d
    if (f === 0 && g6 === 0 && g7 <= 1) return false;
    if (f === 0 || f === 0xffff) return isPublicIpv4(embedded);
    return false;
  }
  if (a === 0x64 && b === 0xff9b) {
    // NAT64: only the well-known /96 puts the IPv4 address in the last 32
    // bits; other prefixes (64:ff9b:1::/48) place it elsewhere.
    const wellKnown = c === 0 && d === 0 && e === 0 && f === 0;
    return wellKnown && isPublicIpv4(embedded);
  }
  if (a === 0x2002) {
    return isPublicIpv4([b >> 8, b & 0xff, c >> 8, c & 0xff]); // 6to4
  }
  if (a === 0x2001 && b === 0) return false; // Teredo hides its target
  return !(
    (a & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (a & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (a & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (a & 0xff00) === 0xff00 || // multicast
    (a === 0x2001 && b === 0x0db8) || // documentation
    a === 0x0100 // discard prefix 100::/64
  ) && (a & 0xe000) === 0x2000; // global unicast is 2000::/3
}

// Host names.

/**
 * A URL's host in the form entries are compared with: lower case, no
 * trailing dot, IPv6 without brackets.
 *
 * @param url the target
 * @returns the host name
 * @example
 * ```ts
 * import { hostOf } from "./targets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostOf(new URL("http://API.Example.com./x")), "api.example.com");
 * assert.equal(hostOf(new URL("http://[::1]:8080/")), "::1");
 * ```
 */
export function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

// A URL's port, with the scheme's default filled in.
function portOf(url: URL): string {
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
 * import { hostMatches } from "./targets.ts";
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
 * import { allowedByAll } from "./targets.ts";
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

// Name resolution.

/**
 * Every address a name resolves to, as the system resolver answers.
 *
 * @param host a host name (not an address literal)
 * @param signal gives up waiting when aborted
 * @returns the addresses, IPv4 and IPv6, in the resolver's order
 * @throws {Error} when the name does not resolve or `signal` aborts
 * @example `localhost` comes from /etc/hosts
 * ```ts
 * import { resolveHost } from "./targets.ts";
 * import assert from "node:assert/strict";
 * const addresses = await resolveHost("localhost", AbortSignal.timeout(5000));
 * assert.ok(addresses.some((a) => a === "127.0.0.1" || a === "::1"));
 * ```
 */
export async function resolveHost(
  host: string,
  signal: AbortSignal,
): Promise<string[]> {
  signal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const found = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      aborted,
    ]);
    return found.map((a) => a.address);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

// Connecting to a checked address.

/**
 * A `lookup` for `node:http` and `node:net` that answers every name with
 * one checked address, so the connection never reaches a second answer
 * from DNS.
 *
 * @param address the checked IP address
 * @returns the lookup function
 * @example
 * ```ts
 * import { pinnedLookup } from "./targets.ts";
 * import assert from "node:assert/strict";
 * pinnedLookup("10.0.0.1")("a.example", {}, (_err, address) => {
 *   assert.equal(address, "10.0.0.1");
 * });
 * ```
 */
export function pinnedLookup(address: string): LookupFunction {
  const family = address.includes(":") ? 6 : 4;
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * Headers that belong to one hop (RFC 9110 §7.6.1, plus `host` and the
 * legacy `proxy-connection`): whoever makes a hop sets them, and the
 * broker and the proxy never pass them on from the code that asked.
 *
 * @example
 * ```ts
 * import { HOP_HEADERS } from "./targets.ts";
 * import assert from "node:assert/strict";
 * assert.ok(HOP_HEADERS.has("proxy-authorization"));
 * assert.ok(!HOP_HEADERS.has("authorization"));
 * ```
 */
export const HOP_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
]);

/** What {@link requestAt} sends. */
export interface AddressedRequest {
  method: string;
  headers: Record<string, string>;
  /** The body; its length becomes `content-length`. */
  body: Uint8Array | null;
  signal?: AbortSignal;
}

/**
 * Sends one request to `address` for `url`; resolves at the response's
 * headers (the body is the caller's to read or destroy).
 *
 * @param url the request's URL (its host names the server)
 * @param address the checked IP address to connect to
 * @param request method, headers, body and signal
 * @returns the response, once its headers arrive
 * @throws the connection's error as Node reports it
 * @example Ask a loopback server by name, connecting to its address
 * ```ts
 * import { requestAt } from "./targets.ts";
 * import assert from "node:assert/strict";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} },
 *   (req) => new Response(new URL(req.url).hostname));
 * const url = new URL(`http://no-such-name.invalid:${server.addr.port}/`);
 * const res = await requestAt(url, "127.0.0.1", { method: "GET", headers: {}, body: null });
 * let text = "";
 * for await (const chunk of res) text += chunk;
 * assert.equal(text, "no-such-name.invalid");
 * await server.shutdown();
 * ```
 */
export function requestAt(
  url: URL,
  address: string,
  request: AddressedRequest,
): Promise<http.IncomingMessage> {
  const lookup = pinnedLookup(address);
  const headers = request.body
    ? { ...request.headers, "content-length": String(request.body.length) }
    : request.headers;
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request({
      protocol: url.protocol,
      hostname: hostOf(url),
      port: Number(url.port) || undefined,
      path: url.pathname + url.search,
      method: request.method,
      headers,
      lookup,
      agent: false,
      signal: request.signal,
    }, resolve);
    req.on("error", reject);
    req.end(request.body ?? undefined);
  });
}
