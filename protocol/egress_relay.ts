/**
 * The egress relay's wire, shared by both ends: inside a confined process
 * (which has a network namespace of its own, with nothing in it but
 * loopback) a relay listens on {@link RELAY_PORT} and carries each
 * connection to the host's egress proxy over a Unix socket bound into the
 * namespace at {@link RELAY_SOCKET}. Each relayed connection starts with
 * one line, the socket's token, then the bytes of an HTTP proxy request.
 *
 * @module
 */

/** The port the relay listens on, on 127.0.0.1 inside the namespace. */
export const RELAY_PORT = 3128;

/** Where the host's proxy socket is bound inside the namespace. */
export const RELAY_SOCKET = "/run/skillbox/egress.sock";

/** The proxy URL a confined process's `HTTP_PROXY`/`HTTPS_PROXY` name. */
export const RELAY_PROXY_URL = `http://127.0.0.1:${RELAY_PORT}`;

/** The argument that hands a confined process its relay token. */
export const RELAY_TOKEN_ARG = "--skillbox-egress-token=";

/**
 * The token carried in the process's arguments, or null when it has no
 * relay (no `net` grant, or not confined).
 *
 * @param args the process's arguments (`Deno.args`)
 * @returns the token
 * @example
 * ```ts
 * import { relayToken, RELAY_TOKEN_ARG } from "./egress_relay.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relayToken([RELAY_TOKEN_ARG + "ab".repeat(8)]), "ab".repeat(8));
 * assert.equal(relayToken([]), null);
 * ```
 */
export function relayToken(args: readonly string[]): string | null {
  const arg = args.find((a) => a.startsWith(RELAY_TOKEN_ARG));
  const token = arg?.slice(RELAY_TOKEN_ARG.length) ?? "";
  return /^[0-9a-f]{16,128}$/.test(token) ? token : null;
}

/**
 * Copies bytes both ways between two connections until both directions
 * end: the end of one side's reads half-closes the other's writes, so a
 * request body's end reaches the server while its answer still flows back.
 * Both are closed when done, or at the first error.
 *
 * @param a one connection
 * @param b the other
 * @returns when both directions ended
 * @example Two pipes joined
 * ```ts
 * import { splice } from "./egress_relay.ts";
 * import assert from "node:assert/strict";
 * const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const echo = (async () => {
 *   const c = await listener.accept();
 *   const buf = new Uint8Array(8);
 *   const n = await c.read(buf);
 *   await c.write(buf.subarray(0, n ?? 0));
 *   c.close();
 * })();
 * const listener2 = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const joined = (async () => {
 *   const inner = await listener2.accept();
 *   const outer = await Deno.connect({ port: (listener.addr as Deno.NetAddr).port });
 *   await splice(inner, outer);
 * })();
 * const client = await Deno.connect({ port: (listener2.addr as Deno.NetAddr).port });
 * await client.write(new TextEncoder().encode("hi"));
 * const buf = new Uint8Array(8);
 * const n = await client.read(buf);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, n ?? 0)), "hi");
 * client.close();
 * await Promise.all([echo, joined]);
 * listener.close();
 * listener2.close();
 * ```
 */
export async function splice(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  try {
    await Promise.all([copy(a, b), copy(b, a)]);
  } catch {
    // Either side failed: both are closed below.
  } finally {
    for (const conn of [a, b]) {
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    }
  }
}

async function copy(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  while (true) {
    const n = await from.read(buf);
    if (n === null) break;
    let at = 0;
    while (at < n) at += await to.write(buf.subarray(at, n));
  }
  await to.closeWrite().catch(() => {});
}
