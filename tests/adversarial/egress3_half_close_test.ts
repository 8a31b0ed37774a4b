/**
 * A tunnel through the egress relay and proxy that one peer half-closes
 * while the other stalls: the host must not hold the upstream connection
 * (nor the proxy's slot) for as long as the stalling peer likes. The
 * upstream's half-close ends the whole tunnel in the host; the process's
 * leaves it open for the answer, until the proxy's time passes without
 * traffic. What stays open is the relay's copy of the process's own
 * connection, inside its namespace.
 */

import assert from "node:assert/strict";
import { EgressBroker } from "../../runtime/egress/broker.ts";
import { openEgressProxy } from "../../runtime/egress/proxy.ts";
import { startEgressRelay } from "../../sandbox/process/egress_relay.ts";

// Resolves when `conn` reads to its end or fails; a bound on the wait.
function ended(conn: Deno.Conn, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const read = (async () => {
    const buf = new Uint8Array(4096);
    try {
      while (await conn.read(buf) !== null) { /* until EOF */ }
    } catch {
      // A reset ends it too.
    }
  })();
  return Promise.race([
    read,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still open`)), 5000);
    }),
  ]).finally(() => clearTimeout(timer));
}

// What `conn` reads until its end (a conn's `readable` would close it).
async function readAll(conn: Deno.Conn): Promise<string> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(4096);
  let text = "";
  for (let n; (n = await conn.read(buf)) !== null;) {
    text += decoder.decode(buf.subarray(0, n), { stream: true });
  }
  return text;
}

Deno.test("a half-closed tunnel whose other peer stalls holds no upstream connection in the host", async (t) => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepted = listener[Symbol.asyncIterator]();
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test"],
    // Shorter than ended()'s bound: a half-open tunnel is ended after it.
    timeoutMs: 1000,
  });
  const relay = startEgressRelay({
    token: proxy.token,
    socket: proxy.path,
    port: 0,
  });
  const open: Deno.Conn[] = [];
  // A process's tunnel through the relay, and the upstream's end of it.
  const tunnel = async () => {
    const conn = await Deno.connect({
      port: (relay.addr as Deno.NetAddr).port,
    });
    await conn.write(
      new TextEncoder().encode(`CONNECT a.test:${port} HTTP/1.1\r\n\r\n`),
    );
    const upstream = (await accepted.next()).value as Deno.Conn;
    open.push(conn, upstream);
    const head = new Uint8Array(64);
    const n = await conn.read(head);
    assert.match(new TextDecoder().decode(head.subarray(0, n!)), / 200 /);
    return { conn, upstream };
  };
  try {
    await t.step("the upstream half-closes, the process stalls", async () => {
      const { upstream } = await tunnel();
      await upstream.write(new TextEncoder().encode("answer"));
      await upstream.closeWrite();
      await ended(upstream, "the upstream connection");
    });
    await t.step("the process half-closes, the upstream stalls", async () => {
      const { conn, upstream } = await tunnel();
      await conn.closeWrite();
      await ended(upstream, "the upstream connection");
      // The host ends its side too: the process's connection ends.
      await ended(conn, "the tunnel");
    });
    await t.step("the process half-closes, and reads the answer", async () => {
      const { conn, upstream } = await tunnel();
      await conn.write(new TextEncoder().encode("question"));
      await conn.closeWrite();
      assert.equal(await readAll(upstream), "question");
      await upstream.write(new TextEncoder().encode("answer"));
      await upstream.closeWrite();
      assert.equal(await readAll(conn), "answer");
    });
  } finally {
    for (const conn of open) {
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    }
    relay.close();
    proxy.close();
    listener.close();
  }
});
