/**
 * Which IP addresses the egress broker may connect to without the
 * operator's say-so: public unicast only. Loopback, private, link-local
 * (including cloud metadata at 169.254.169.254), unique-local, CGNAT,
 * multicast, reserved and unspecified addresses are not public, nor are
 * IPv6 forms that embed one of them (IPv4-mapped, IPv4-compatible, NAT64,
 * 6to4).
 *
 * @module
 */

/**
 * Whether an address is public unicast (a broker may reach it by default).
 *
 * @param ip an IPv4 or IPv6 address, without brackets
 * @returns false for every non-public or unparseable address
 * @example
 * ```ts
 * import { isPublicAddress } from "./address.ts";
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

/**
 * Whether text is an IP address literal (IPv4 dotted, or IPv6 with or
 * without brackets), as opposed to a name to resolve.
 *
 * @param host a URL hostname
 * @returns true for address literals
 * @example
 * ```ts
 * import { isIpLiteral } from "./address.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isIpLiteral("[::1]"), true);
 * assert.equal(isIpLiteral("example.com"), false);
 * ```
 */
export function isIpLiteral(host: string): boolean {
  const h = host.startsWith("[") && host.endsWith("]")
    ? host.slice(1, -1)
    : host;
  return parseIpv4(h) !== null || parseIpv6(h) !== null;
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
  let text = s.replace(/%.*$/, "");
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
  if (a === 0x64 && b === 0xff9b) return isPublicIpv4(embedded); // NAT64
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
