/**
 * Name resolution for the egress broker, in the host: the system resolver
 * (`getaddrinfo`, so `/etc/hosts` and nsswitch apply, which
 * `Deno.resolveDns` skips), every address returned.
 *
 * @module
 */

import { lookup } from "node:dns/promises";

/**
 * Every address a name resolves to, as the system resolver answers.
 *
 * @param host a host name (not an address literal)
 * @param signal gives up waiting when aborted
 * @returns the addresses, IPv4 and IPv6, in the resolver's order
 * @throws {Error} when the name does not resolve or `signal` aborts
 * @example `localhost` comes from /etc/hosts
 * ```ts
 * import { resolveHost } from "./resolve.ts";
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
