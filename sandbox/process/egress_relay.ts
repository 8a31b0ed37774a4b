/**
 * The relay inside a confined process's network namespace: listens on
 * 127.0.0.1:{@link RELAY_PORT} (the namespace's own loopback, which nothing
 * outside it can reach) and carries each connection to the host's egress
 * proxy over the Unix socket bound in at {@link RELAY_SOCKET}, starting it
 * with the socket's token. It checks nothing itself: the host's proxy does
 * every check, and the namespace has no other way out.
 *
 * The process's `HTTP_PROXY`/`HTTPS_PROXY` name the relay, so `fetch` in its
 * workers goes through it (Deno still checks the worker's own `net`
 * permission against the target host first).
 *
 * @module
 */

import {
  RELAY_PORT,
  RELAY_SOCKET,
  splice,
} from "../../protocol/egress_relay.ts";

/** Options of {@link startEgressRelay}. */
export interface RelayOptions {
  /** The token the host's proxy expects first on each connection. */
  token: string;
  /** The proxy socket. @default RELAY_SOCKET */
  socket?: string;
  /** The port to listen on. @default RELAY_PORT */
  port?: number;
}

/**
 * Starts the relay; the listener exists when this returns.
 *
 * @param options the token, socket and port
 * @returns the listener (close it to stop relaying)
 * @example Relays bytes to a Unix socket, token first
 * ```ts
 * import { startEgressRelay } from "./egress_relay.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const upstream = Deno.listen({ transport: "unix", path: `${dir}/s` });
 * const relay = startEgressRelay({ token: "ab".repeat(8), socket: `${dir}/s`, port: 0 });
 * const client = await Deno.connect({ port: (relay.addr as Deno.NetAddr).port });
 * await client.write(new TextEncoder().encode("x"));
 * const inner = await upstream.accept();
 * const buf = new Uint8Array(64);
 * let got = "";
 * while (!got.endsWith("x")) {
 *   const n = await inner.read(buf);
 *   got += new TextDecoder().decode(buf.subarray(0, n ?? 0));
 * }
 * assert.equal(got, "ab".repeat(8) + "\nx");
 * client.close();
 * inner.close();
 * relay.close();
 * upstream.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function startEgressRelay(options: RelayOptions): Deno.Listener {
  const listener = Deno.listen({
    hostname: "127.0.0.1",
    port: options.port ?? RELAY_PORT,
  });
  const socket = options.socket ?? RELAY_SOCKET;
  const preamble = new TextEncoder().encode(options.token + "\n");
  (async () => {
    for await (const conn of listener) relay(conn, socket, preamble);
  })().catch(() => {});
  return listener;
}

async function relay(
  conn: Deno.Conn,
  socket: string,
  preamble: Uint8Array,
): Promise<void> {
  let upstream: Deno.Conn | undefined;
  try {
    upstream = await Deno.connect({ transport: "unix", path: socket });
    let at = 0;
    while (at < preamble.length) {
      at += await upstream.write(preamble.subarray(at));
    }
  } catch {
    // A proxy that took the connection but not the token: close it too.
    upstream?.close();
    conn.close();
    return;
  }
  await splice(conn, upstream);
}
