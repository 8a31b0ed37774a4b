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
import { BlockList, isIP, type LookupFunction } from "node:net";
import { lookup } from "node:dns/promises";
import { addAbortListener } from "node:events";

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
  // The zone (after "%") is cut with indexOf: /%.*$/ backtracked on many
  // "%" before a line break, quadratic on the host's thread.
  const zone = ip.indexOf("%");
  const address = zone < 0 ? ip : ip.slice(0, zone);
  // isIP takes the canonical forms only (no "012.0.0.1", which inet_aton
  // reads as octal): the text checked is the address connected to.
  switch (isIP(address)) {
    case 4:
      return !REFUSED.check(address, "ipv4");
    case 6:
      return PUBLIC_V6.check(address, "ipv6") &&
        !REFUSED.check(address, "ipv6");
    default:
      return false;
  }
}

// IPv4 ranges that are not public unicast, as [network, prefix length].
const PRIVATE_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF
  ["192.0.2.0", 24], // docs
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // docs
  ["203.0.113.0", 24], // docs
  ["224.0.0.0", 3], // multicast, reserved, broadcast
];

// IPv6 that may be public: global unicast (2000::/3; unique-local,
// link-local, site-local, multicast and the discard prefix lie outside
// it), and the forms that embed an IPv4 address in their last 32 bits:
// IPv4-compatible (:: and ::1 among them, refused as 0.0.0.0/8),
// IPv4-mapped, and NAT64's well-known /96 (other NAT64 prefixes,
// 64:ff9b:1::/48, place it elsewhere).
const PUBLIC_V6 = new BlockList();
for (const address of ["::", "::ffff:0:0", "64:ff9b::"]) {
  PUBLIC_V6.addSubnet(address, 96, "ipv6");
}
PUBLIC_V6.addSubnet("2000::", 3, "ipv6");

// Refused: the IPv4 ranges, and their places in each IPv6 form that
// embeds an IPv4 address (6to4 puts it in bits 16-47). An IPv4 rule
// covers the IPv4-mapped form itself: BlockList reads ::ffff:a.b.c.d as
// a.b.c.d.
const REFUSED = new BlockList();
for (const [address, bits] of PRIVATE_V4) {
  REFUSED.addSubnet(address, bits, "ipv4");
  for (const prefix of ["::", "64:ff9b::"]) {
    REFUSED.addSubnet(prefix + address, 96 + bits, "ipv6");
  }
  const [a = 0, b = 0, c = 0, d = 0] = address.split(".").map(Number);
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  REFUSED.addSubnet(`2002:${high}:${low}::`, 16 + bits, "ipv6");
}
REFUSED.addSubnet("2001::", 32, "ipv6"); // Teredo hides its target
REFUSED.addSubnet("2001:db8::", 32, "ipv6"); // documentation

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
  let e = entry.toLowerCase().trim();
  if (e === "*") return true;
  if (isIP(e) === 6) e = `[${e}]`; // a bare IPv6 address: no port
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(e);
  if (!m) return false;
  let host = m[1]!.replace(/\.$/, "");
  if (host.startsWith("[")) host = host.slice(1, -1);
  // An IPv6 entry in the URL's own spelling (`::ffff:127.0.0.1` is
  // `::ffff:7f00:1` in a URL), so the operator's form matches.
  if (host.includes(":")) host = canonicalV6(host);
  return host === hostOf(url) && (m[2] === undefined || m[2] === portOf(url));
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
  // getaddrinfo cannot be cancelled: the wait for it is.
  const aborted = Promise.withResolvers<never>();
  using _listener = addAbortListener(
    signal,
    () => aborted.reject(signal.reason),
  );
  const found = await Promise.race([
    lookup(host, { all: true, verbatim: true }),
    aborted.promise,
  ]);
  return found.map((a) => a.address);
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
