/**
 * Failed authentication, throttled per client address: after a few wrong
 * credentials an address must wait before its next attempt, the wait
 * doubling with each further failure up to a cap, so guessing a token is
 * slowed to a crawl while other addresses are untouched.
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
  /** Addresses remembered at once (oldest forgotten beyond). @default 10000 */
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
 * throttle.succeeded("10.0.0.1");
 * assert.equal(throttle.size, 0);
 * ```
 */
export class AuthThrottle {
  #free: number;
  #baseMs: number;
  #maxMs: number;
  #maxClients: number;
  #now: () => number;
  // Insertion order is the order of last failure: the first is the oldest.
  #entries = new Map<string, Entry>();

  /** @param options the allowance, backoff and memory bound */
  constructor(options: AuthThrottleOptions = {}) {
    this.#free = options.freeFailures ?? 5;
    this.#baseMs = options.baseMs ?? 1000;
    this.#maxMs = options.maxMs ?? 300_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many addresses are remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * How long an address must still wait before its next attempt.
   *
   * @param client the client's key ({@link clientKey})
   * @returns whole seconds, 0 when it may try now
   */
  retryAfter(client: string): number {
    if (this.#entries.size === 0) return 0;
    const entry = this.#entries.get(client);
    if (entry === undefined) return 0;
    const left = entry.until - this.#now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /**
   * Records a wrong credential from an address.
   *
   * @param client the client's key
   */
  failed(client: string): void {
    const now = this.#now();
    const entry = this.#entries.get(client) ??
      { failures: 0, until: 0, last: now };
    // Forgotten once a full wait has passed since the last failure.
    if (now - entry.last > 2 * this.#maxMs) entry.failures = 0;
    entry.failures++;
    entry.last = now;
    const over = entry.failures - this.#free;
    if (over > 0) {
      entry.until = now + Math.min(this.#baseMs * 2 ** (over - 1), this.#maxMs);
    }
    this.#entries.delete(client);
    this.#entries.set(client, entry);
    this.#bound(now);
  }

  /**
   * Records a right credential: the address starts afresh.
   *
   * @param client the client's key
   */
  succeeded(client: string): void {
    if (this.#entries.size > 0) this.#entries.delete(client);
  }

  // Drops entries past use, then the oldest while over the bound.
  #bound(now: number): void {
    for (const [client, entry] of this.#entries) {
      if (
        this.#entries.size <= this.#maxClients &&
        now - entry.last <= 2 * this.#maxMs
      ) break;
      this.#entries.delete(client);
    }
  }
}

/**
 * The key a client's failures are counted under: its IPv4 address, or the
 * /64 network of its IPv6 address (one machine holds a whole /64); "" when
 * the address is unknown (all such clients share one allowance).
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
  if (name.startsWith("::ffff:") && name.includes(".")) return name.slice(7);
  if (name === "::1") return name;
  return `${expandV6(name).slice(0, 4).join(":")}::/64`;
}

// The eight groups of an IPv6 address, without leading zeros.
function expandV6(address: string): string[] {
  const [head = "", tail] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const middle = Array(Math.max(0, 8 - left.length - right.length)).fill("0");
  return [...left, ...middle, ...right].map((g) =>
    g.replace(/^0+(?=.)/, "").toLowerCase()
  );
}
