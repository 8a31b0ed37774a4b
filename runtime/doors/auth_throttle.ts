/**
 * Failed authentication, throttled per client address: after a few wrong
 * credentials an address must wait before its next attempt, the wait
 * doubling with each further failure up to a cap, so guessing a token is
 * slowed to a crawl while other addresses are untouched. A right credential
 * clears nothing: a client holding one token would otherwise win a fresh
 * allowance of guesses at every other token (an admin's) each time it used
 * its own. The count is forgotten once the address has been quiet for two
 * of the longest waits.
 *
 * An IPv6 client is counted by its /64 and also by its /56 and /48, each
 * with four times the allowance of the one below: a holder of a /48 has
 * 65,536 /64s, and must not get a fresh allowance from each. The wider
 * counts fall by one every `maxMs`, the rate of one network held at the
 * cap, so one /64 guessing for hours never holds its neighbours.
 *
 * Memory is bounded per prefix length. An address still waiting is never
 * forgotten to make room (it would start afresh); when the table is full
 * of them, every address it cannot remember shares one allowance.
 *
 * @module
 */

/** Options of {@link AuthThrottle}. */
export interface AuthThrottleOptions {
  /** Failures an address may make before it must wait. @default 5 */
  freeFailures?: number;
  /** The first wait, in ms; each further failure doubles it. @default 1000 */
  baseMs?: number;
  /** The longest wait, in ms. @default 300000 */
  maxMs?: number;
  /**
   * Addresses remembered at once, and as many networks of each wider
   * prefix. @default 10000
   */
  maxClients?: number;
  /** The clock, in ms. @default Date.now */
  now?: () => number;
}

interface Entry {
  failures: number;
  // When the address may try again (ms, by `now`).
  until: number;
  last: number;
}

// The /64 keys of clientKey(), from which the wider networks are derived.
const V6_64 =
  /^([0-9a-f]{1,4}):([0-9a-f]{1,4}):([0-9a-f]{1,4}):([0-9a-f]{1,4})::\/64$/;

// The failures of one prefix length: the addresses (or /64s), the /56s or
// the /48s.
class Level {
  readonly entries = new Map<string, Entry>();
  // Shared by every key that finds the table full of waiting entries.
  readonly overflow: Entry = { failures: 0, until: 0, last: 0 };
  // While full: no entry's wait ends before this, so none can be dropped.
  fullUntil = 0;
  constructor(readonly free: number, readonly decays: boolean) {}
}

/**
 * Counts failed credentials by client address.
 *
 * @example The sixth wrong guess in a row makes the address wait
 * ```ts
 * import { AuthThrottle } from "./auth_throttle.ts";
 * import assert from "node:assert/strict";
 * let now = 0;
 * const throttle = new AuthThrottle({ now: () => now });
 * for (let i = 0; i < 5; i++) throttle.failed("10.0.0.1");
 * assert.equal(throttle.retryAfter("10.0.0.1"), 0);
 * throttle.failed("10.0.0.1");
 * assert.equal(throttle.retryAfter("10.0.0.1"), 1);
 * assert.equal(throttle.retryAfter("10.0.0.2"), 0);
 * now = 1000;
 * assert.equal(throttle.retryAfter("10.0.0.1"), 0);
 * ```
 */
export class AuthThrottle {
  #baseMs: number;
  #maxMs: number;
  #maxClients: number;
  #now: () => number;
  // One for each key of networksOf(): the address (or /64), its /56, its
  // /48, each with four times the allowance of the one before (the wider
  // ones decay).
  #levels: Level[];

  /** @param options the allowance, backoff and memory bound */
  constructor(options: AuthThrottleOptions = {}) {
    const free = options.freeFailures ?? 5;
    this.#baseMs = options.baseMs ?? 1000;
    this.#maxMs = options.maxMs ?? 300_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#levels = [1, 4, 16].map((n, i) => new Level(free * n, i > 0));
  }

  /** How many addresses and networks are remembered. */
  get size(): number {
    return this.#levels.reduce((n, level) => n + level.entries.size, 0);
  }

  /**
   * How long an address must still wait before its next attempt.
   *
   * @param client the client's key ({@link clientKey})
   * @returns whole seconds, 0 when it may try now
   */
  retryAfter(client: string): number {
    // Nothing remembered, nothing shared: the common case costs nothing.
    if (this.size === 0) return 0;
    const until = Math.max(
      ...networksOf(client).map((key, i) =>
        this.#entryOf(this.#levels[i]!, key)?.until ?? 0
      ),
    );
    const left = until - this.#now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /**
   * Records a wrong credential from an address.
   *
   * @param client the client's key
   */
  failed(client: string): void {
    const now = this.#now();
    networksOf(client).forEach((key, i) => {
      this.#count(this.#levels[i]!, key, now);
    });
  }

  // The key's entry; the shared one when the table is full without it.
  #entryOf(level: Level, key: string): Entry | undefined {
    return level.entries.get(key) ??
      (level.entries.size >= this.#maxClients ? level.overflow : undefined);
  }

  #count(level: Level, key: string, now: number): void {
    let entry = level.entries.get(key);
    const known = entry !== undefined;
    if (entry === undefined) {
      this.#makeRoom(level, now);
      if (level.entries.size < this.#maxClients) {
        entry = { failures: 0, until: 0, last: now };
        level.fullUntil = 0; // the newcomer may be dropped before then
      } else entry = level.overflow;
    }
    const idle = now - entry.last;
    // Forgotten once a full wait has passed since the last failure.
    if (idle > 2 * this.#maxMs) entry.failures = 0;
    else if (level.decays) {
      entry.failures = Math.max(0, entry.failures - idle / this.#maxMs);
    }
    entry.failures++;
    entry.last = now;
    const over = Math.ceil(entry.failures) - level.free;
    if (over > 0) {
      entry.until = now + Math.min(this.#baseMs * 2 ** (over - 1), this.#maxMs);
    }
    if (entry === level.overflow) return;
    // Insertion order is the order of last failure: the first is the oldest.
    if (known) level.entries.delete(key);
    level.entries.set(key, entry);
  }

  // Drops entries past use; when still full, the oldest one not waiting.
  #makeRoom(level: Level, now: number): void {
    const entries = level.entries;
    // Full of waiting entries: none is past use either.
    if (entries.size >= this.#maxClients && now < level.fullUntil) return;
    for (const [key, entry] of entries) {
      if (now - entry.last <= 2 * this.#maxMs) break;
      entries.delete(key);
    }
    if (entries.size < this.#maxClients) return;
    let soonest = Infinity;
    // Each waiting entry passed is moved behind, so the next search starts
    // past it: a table full of waiting entries costs one pass per wait.
    let left = entries.size;
    for (const [key, entry] of entries) {
      if (left-- === 0) break;
      entries.delete(key);
      if (entry.until <= now) return;
      entries.set(key, entry);
      soonest = Math.min(soonest, entry.until);
    }
    level.fullUntil = soonest;
  }
}

/**
 * The widest network a client's failures are counted in: the /48 of an
 * IPv6 /64 key, the key itself otherwise. The door judges sign-ins from
 * one such network one at a time, so none escapes the others' failures.
 *
 * @param client the client's key ({@link clientKey})
 * @returns the network's key
 * @example
 * ```ts
 * import { widestNetwork } from "./auth_throttle.ts";
 * import assert from "node:assert/strict";
 * assert.equal(widestNetwork("2001:db8:1:2::/64"), "2001:db8:1::/48");
 * assert.equal(widestNetwork("10.0.0.1"), "10.0.0.1");
 * ```
 */
export function widestNetwork(client: string): string {
  return networksOf(client).at(-1)!;
}

// The key and the networks its failures are counted in, narrowest first:
// a /64 key of clientKey() with its /56 and /48; any other key alone.
function networksOf(client: string): string[] {
  const groups = V6_64.exec(client);
  if (groups === null) return [client];
  const [, a, b, c, d] = groups;
  const net56 = (parseInt(d!, 16) & 0xff00).toString(16);
  return [client, `${a}:${b}:${c}:${net56}::/56`, `${a}:${b}:${c}::/48`];
}

/**
 * The key a client's failures are counted under: its IPv4 address, or the
 * /64 network of its IPv6 address (one machine holds a whole /64); "" when
 * the address is unknown (all such clients share one allowance). An IPv6
 * address that carries an IPv4 client's (IPv4-mapped, NAT64's well-known
 * prefix, Teredo) is keyed by that IPv4 address: all IPv4 clients behind a
 * translator share the translator's /64, and one of them must not hold all.
 *
 * @param info the connection info `Deno.serve` gives a handler (Hono's
 *   `c.env` when the host's handler passed it on)
 * @returns the key
 * @example
 * ```ts
 * import { clientKey } from "./auth_throttle.ts";
 * import assert from "node:assert/strict";
 * const from = (hostname: string) =>
 *   clientKey({ remoteAddr: { transport: "tcp", hostname, port: 1 } });
 * assert.equal(from("::ffff:10.0.0.1"), "10.0.0.1");
 * assert.equal(from("64:ff9b::a00:2"), "10.0.0.2");
 * assert.equal(from("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
 * assert.equal(clientKey(undefined), "");
 * ```
 */
export function clientKey(info: unknown): string {
  // Hono types its env loosely; Deno.serve's info has this shape.
  const address = (info as { remoteAddr?: Deno.Addr } | undefined)?.remoteAddr;
  if (address === undefined || !("hostname" in address)) return "";
  const name = address.hostname;
  if (!name.includes(":")) return name;
  const g = groupsOf(name);
  if (g === null) return name; // not an address: counted as it is
  const [a, b, c, d, e, f, h, i] = g;
  if ((a | b | c | d | e | f | h) === 0 && i === 1) return "::1";
  // IPv4-mapped (::ffff:0:0/96) and NAT64's well-known prefix (RFC 6052).
  const mapped = (a | b | c | d | e) === 0 && f === 0xffff;
  if (mapped || (a === 0x64 && b === 0xff9b && (c | d | e | f) === 0)) {
    return ipv4(h, i);
  }
  // Teredo (RFC 4380): the client's public address, inverted, at the end.
  if (a === 0x2001 && b === 0) return ipv4(h ^ 0xffff, i ^ 0xffff);
  // NAT64's local-use prefix (RFC 8215): where the IPv4 address sits
  // depends on the operator's prefix length, and the translator sets every
  // other bit, so the whole address names one IPv4 client.
  if (a === 0x64 && b === 0xff9b && c === 1) {
    return `${g.map((n) => n.toString(16)).join(":")}/128`;
  }
  return `${[a, b, c, d].map((n) => n.toString(16)).join(":")}::/64`;
}

function ipv4(high: number, low: number): string {
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

type Groups = [number, number, number, number, number, number, number, number];

// The eight groups of an IPv6 address (a zone dropped, a dotted IPv4 tail
// read), or null when it is not one: the URL parser reads it, and spells
// it in lower case with at most one "::" and no dotted tail.
function groupsOf(address: string): Groups | null {
  const text = address.split("%")[0]!;
  // Address characters only: a "]" or "@" would make the URL another host.
  if (!/^[0-9a-f:.]+$/i.test(text)) return null;
  let host: string;
  try {
    host = new URL(`http://[${text}]`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = "", tail = ""] = host.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const gap = Array(8 - left.length - right.length).fill("0");
  return [...left, ...gap, ...right].map((g) => parseInt(g, 16)) as Groups;
}
