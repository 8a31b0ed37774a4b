/**
 * Which `Host` and `Origin` a request to the host may carry: the defence
 * against web pages and DNS rebinding. A page elsewhere sends its own
 * `Origin`; a rebinding page sends its own name in `Host` (and a matching
 * `Origin`), so both are checked against names the operator chose, never
 * against each other alone.
 *
 * @module
 */

/** Options of {@link HostNames}. */
export interface HostNamesOptions {
  /** The configured listen hostname. */
  hostname: string;
  /** More names, `name` (any port) or `name:port`. @default [] */
  allowedHosts?: readonly string[];
  /** More browser origins, `scheme://host[:port]`. @default [] */
  allowedOrigins?: readonly string[];
}

// Loopback on any port: a proxy or balancer on the same machine keeps
// working. "[::ffff:7f00:1]" is 127.0.0.1 written as IPv6.
const LOOPBACK = ["localhost", "127.0.0.1", "[::1]", "[::ffff:7f00:1]"];
const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);
// What a Host header may hold; anything else (userinfo, paths, spaces,
// percent signs) is refused before the URL parser sees it.
const HOST_CHARS =
  /^[A-Za-z0-9._\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;
// Accepted Host values kept for the fast path; loopback ports are many.
const MAX_SEEN = 256;

/**
 * The names a host answers to and the origins it lets in.
 *
 * @example A rebinding request is refused, a loopback one is not
 * ```ts
 * import { HostNames } from "./host_names.ts";
 * import assert from "node:assert/strict";
 * const names = new HostNames({ hostname: "127.0.0.1" });
 * const ok = new Request("http://localhost:8787/mcp");
 * assert.equal(names.refusal(ok), undefined);
 * const evil = new Request("http://a.evil:8787/mcp", {
 *   headers: { host: "a.evil:8787", origin: "http://a.evil:8787" },
 * });
 * assert.match(names.refusal(evil)!, /^Host "a\.evil:8787" is not one/);
 * ```
 */
export class HostNames {
  // Canonical names allowed on any port.
  #anyPort = new Set<string>(LOOPBACK);
  // Canonical `name:port` allowed on that port only.
  #exact = new Set<string>();
  // Canonical origins the operator allowed.
  #origins = new Set<string>();
  // Host header values already accepted, as sent.
  #seen = new Set<string>();

  /** @param options the listen hostname and the operator's names */
  constructor(options: HostNamesOptions) {
    this.#addListenName(options.hostname);
    for (const entry of options.allowedHosts ?? []) {
      const host = canonicalHost(entry);
      if (host === null) {
        throw new TypeError(`Invalid allowed host "${entry}"`);
      }
      if (entry.endsWith("]") || !/:\d+$/.test(entry)) {
        this.#anyPort.add(host.name);
      } else this.#exact.add(host.host);
    }
    for (const entry of options.allowedOrigins ?? []) {
      const origin = canonicalOrigin(entry);
      if (origin === null) {
        throw new TypeError(`Invalid allowed origin "${entry}"`);
      }
      this.#origins.add(origin.origin);
    }
  }

  /**
   * Adds the name the host listens on; for a wildcard address, the
   * machine's own interface addresses (clients reach it by those).
   *
   * @param hostname the listen hostname
   */
  listeningOn(hostname: string): void {
    this.#addListenName(hostname);
    if (!WILDCARDS.has(hostname)) return;
    // Without --allow-sys: loopback and allowed_hosts only (never a prompt).
    const sys = { name: "sys", kind: "networkInterfaces" } as const;
    if (Deno.permissions.querySync(sys).state !== "granted") return;
    for (const { address } of Deno.networkInterfaces()) {
      if (!address.includes("%")) this.#addListenName(address);
    }
  }

  /**
   * Why a request is refused, or undefined when it may go on: its `Host`
   * must be a name this host answers to, its `Origin` (when a browser sent
   * one) this host's own or an allowed one; a browser request from another
   * page without `Origin` is refused unless it is a top-level navigation.
   *
   * @param request the request
   * @returns the reason, or undefined
   */
  refusal(request: Request): string | undefined {
    const headers = request.headers;
    const host = headers.get("host") ?? urlHost(request.url);
    if (!this.#seen.has(host)) {
      const why = this.#hostRefusal(host);
      if (why !== undefined) return why;
    }
    const origin = headers.get("origin");
    if (origin !== null) return this.#originRefusal(origin, host);
    // A browser's no-cors request from another page carries no Origin, but
    // says where it came from (a page on another port is "same-site").
    const site = headers.get("sec-fetch-site");
    if (
      (site === "cross-site" || site === "same-site") &&
      headers.get("sec-fetch-mode") !== "navigate"
    ) {
      return `A ${site} browser request without an Origin is refused`;
    }
    return undefined;
  }

  #hostRefusal(sent: string): string | undefined {
    const host = canonicalHost(sent);
    if (
      host === null ||
      !(this.#anyPort.has(host.name) || this.#exact.has(host.host))
    ) {
      return `Host "${sent}" is not one this host answers to: add it to listen.allowed_hosts`;
    }
    if (this.#seen.size < MAX_SEEN) this.#seen.add(sent);
    return undefined;
  }

  #originRefusal(sent: string, host: string): string | undefined {
    if (sent === "null") {
      return 'Origin "null" is refused (a sandboxed or local page): serve the page from an origin in listen.allowed_origins';
    }
    const origin = canonicalOrigin(sent);
    if (origin !== null) {
      if (this.#origins.has(origin.origin)) return undefined;
      const own = canonicalHost(host, origin.scheme);
      if (origin.host === own?.host) return undefined;
    }
    return `Origin "${sent}" is not this host's: add it to listen.allowed_origins`;
  }

  #addListenName(hostname: string): void {
    const bracketed = hostname.includes(":") && !hostname.startsWith("[")
      ? `[${hostname}]`
      : hostname;
    const host = canonicalHost(bracketed);
    if (host !== null) this.#anyPort.add(host.name);
  }
}

// `host` of "http://host/path" without parsing the URL (the Host header
// is missing only on HTTP/1.0 and in-process requests).
function urlHost(url: string): string {
  const start = url.indexOf("//") + 2;
  const end = url.indexOf("/", start);
  return url.slice(start, end === -1 ? undefined : end);
}

// A Host value in one spelling: lower case, no trailing dot, IPv6
// compressed, the scheme's default port dropped; null when it is no host.
function canonicalHost(
  value: string,
  scheme = "http",
): { name: string; host: string } | null {
  if (!HOST_CHARS.test(value)) return null;
  let url: URL;
  try {
    url = new URL(`${scheme}://${value}`);
  } catch {
    return null;
  }
  const name = url.hostname.endsWith(".")
    ? url.hostname.slice(0, -1)
    : url.hostname;
  if (name === "") return null;
  return { name, host: url.port === "" ? name : `${name}:${url.port}` };
}

// An Origin in one spelling, its scheme, and its host as canonicalHost
// spells it for that scheme (https keeps port 80, drops 443).
function canonicalOrigin(
  value: string,
): { origin: string; scheme: string; host: string } | null {
  const match = /^(https?):\/\/(.+)$/i.exec(value);
  if (!match) return null;
  const scheme = match[1]!.toLowerCase();
  const host = canonicalHost(match[2]!, scheme);
  if (host === null) return null;
  return { origin: `${scheme}://${host.host}`, scheme, host: host.host };
}
