/**
 * An HTTP+SSE client that opens `GET /a2e/stream`, never reads it, lets
 * its calls' output pile up, then opens another stream (which replaces
 * the first) and so on. A replaced stream lives as long as its connection,
 * and the HTTP layer holds on to the last chunk it was handed: that chunk
 * used to be the whole queue (all of its calls' output), so each stalled
 * stream pinned megabytes in the host, without bound. Against a host in
 * its own process, whose resident memory is measured before and after.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type HostProcess, startHostProcess } from "./_host_process.ts";
import { MAX_OPEN_STREAMS } from "../../runtime/transports/http_sse.ts";
import { floodsEnded, rawSseSession } from "./_sse_streams.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/streams/", import.meta.url));
const MiB = 1024 * 1024;
const ROUNDS = Number(Deno.env.get("SSE_ROUNDS") ?? 40);

/** A session that keeps at most MAX_OPEN_STREAMS streams open. */
async function sseSession(host: HostProcess) {
  const session = await rawSseSession(host);
  const conns: Deno.TcpConn[] = [];
  return {
    send: session.send,
    /** Opens a stream; `read` drains it, otherwise it is never read. */
    async stream(read: boolean) {
      // A session holds at most MAX_OPEN_STREAMS stream connections: at
      // the bound, this client closes its oldest (never read) one, and
      // tries again until the host has seen it go.
      if (conns.length >= MAX_OPEN_STREAMS) conns.shift()!.close();
      let conn: Deno.TcpConn | undefined;
      for (let i = 0; i < 500 && conn === undefined; i++) {
        const tried = await session.stream();
        if (tried.status === 200) conn = tried.conn;
        else {
          tried.conn.close();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      if (conn === undefined) throw new Error("No stream within 10 s");
      conns.push(conn);
      if (!read) return;
      (async () => {
        const buf = new Uint8Array(1 << 20);
        while (await conn.read(buf) !== null) { /* drained */ }
      })().catch(() => {});
    },
    close() {
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

Deno.test("an HTTP+SSE client that replaces streams it never reads pins no more than a chunk each", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: 192,
  });
  const a2e = await sseSession(host);
  try {
    await a2e.stream(true);
    await a2e.send({ type: "handshake/req", id: "h" });
    let calls = 0;
    // About 6 MiB of output a call: 100 events of 64 KiB, and its answer.
    const flood = async () => {
      await a2e.send({
        type: "tool/call/req",
        id: `f${calls++}`,
        tool_name: "flood",
        arguments: { events: 100, bytes: 64 * 1024 },
        streaming: true,
      });
      await floodsEnded(host, calls);
    };
    // The same calls to a client that reads: what the host settles at.
    for (let i = 0; i < ROUNDS / 2; i++) await flood();
    const before = await host.rssBytes();
    for (let i = 0; i < ROUNDS; i++) {
      await a2e.stream(false);
      await flood();
    }
    const after = await host.rssBytes();
    // deno-lint-ignore no-console
    console.log(
      `HTTP+SSE replaced stalled streams: host RSS ${
        (before / MiB).toFixed(0)
      } MiB before, ${(after / MiB).toFixed(0)} MiB after ${ROUNDS}`,
    );
    // Before: +488 and +509 MiB; since: +11 to +58 MiB (40 rounds).
    assert.ok(
      after - before < 192 * MiB,
      `host RSS grew by ${((after - before) / MiB).toFixed(0)} MiB`,
    );
  } finally {
    a2e.close();
  }
});
