/**
 * Which hosts `http_request` may reach: the configured allow-list, and never
 * loopback, private, link-local or other non-public addresses unless the
 * toolkit is configured with `allow_private`. Guards against an agent being
 * steered into the host's own network (SSRF).
 *
 * @module
 */

/**
 * Whether a URL hostname (as `new URL().hostname` gives it: lower case,
 * IPv4 normalized to dotted decimal, IPv6 in brackets) names a non-public
 * address or a local-only name.
 *
 * @param hostname the URL's hostname
 * @returns true for loopback, private, link-local, CGNAT, multicast,
 * reserved, unspecified and `localhost` names
 */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  if (h.startsWith("[") && h.endsWith("]")) {
    const groups = parseIpv6(h.slice(1, -1));
    return groups === null ? true : isPrivateIpv6(groups);
  }
  const v4 = parseIpv4(h);
  if (v4) return isPrivateIpv4(v4);
  return h === "localhost" || h.endsWith(".localhost") ||
    h.endsWith(".local") || h.endsWith(".internal") || h === "";
}

/**
 * Whether a resolved IP address (no brackets) is non-public.
 *
 * @param ip an IPv4 or IPv6 address
 * @returns true for non-public addresses (and for unparseable ones)
 */
export function isPrivateIp(ip: string): boolean {
  const v4 = parseIpv4(ip);
  if (v4) return isPrivateIpv4(v4);
  const v6 = parseIpv6(ip);
  return v6 === null ? true : isPrivateIpv6(v6);
}

function parseIpv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function isPrivateIpv4([a, b]: number[]): boolean {
  if (a === undefined || b === undefined) return true;
  return a === 0 || // "this network", 0.0.0.0
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // 192.0.0.0/24 IETF, 192.0.2.0/24 docs
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224; // multicast, reserved, broadcast
}

/** Parses IPv6 text (with `::` and an optional dotted IPv4 tail) to 8 groups. */
function parseIpv6(s: string): number[] | null {
  let text = s.replace(/%.*$/, ""); // zone id
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
  const zeros = new Array<number>(8 - explicit).fill(0);
  return [...head, ...zeros, ...rest, ...tail];
}

function isPrivateIpv6(g: number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h6 = 0, h7 = 0] = g;
  const embedded = [h6 >> 8, h6 & 0xff, h7 >> 8, h7 & 0xff];
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0) {
    // ::, ::1, IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d
    if (f === 0xffff || f === 0) {
      if (f === 0 && h6 === 0 && h7 <= 1) return true;
      return isPrivateIpv4(embedded);
    }
  }
  if (a === 0x64 && b === 0xff9b) return isPrivateIpv4(embedded); // NAT64
  if (a === 0x2002) return isPrivateIpv4([b >> 8, b & 0xff, c >> 8, c & 0xff]); // 6to4
  return (a & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (a & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (a & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (a & 0xff00) === 0xff00 || // multicast
    (a === 0x2001 && b === 0x0db8); // documentation
}

/**
 * Whether a URL's host and port are allowed by the list. Entries are
 * `host` (any port) or `host:port`, like Deno's `--allow-net`; `*` allows
 * every host (still subject to the private-address rule).
 *
 * @param url the target
 * @param allowed the configured `allowed_hosts`
 * @returns true when an entry matches
 */
export function isAllowedHost(url: URL, allowed: string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const port = url.port ||
    (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "");
  return allowed.some((entry) => {
    const e = entry.toLowerCase().trim();
    if (e === "*") return true;
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(e);
    if (!m) return false;
    const eHost = m[1]!.replace(/\.$/, "");
    return eHost === host && (m[2] === undefined || m[2] === port);
  });
}
