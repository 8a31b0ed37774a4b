/**
 * An HTTP+SSE client that opens stream after stream on one session and
 * reads none of them. A new stream replaces the attached one, which ends
 * at its next pull; but one whose connection is full (its client stopped
 * reading) is never pulled again and holds its connection until the
 * client closes it. A session may have at most `MAX_OPEN_STREAMS` such
 * connections: past them a new stream is refused (429), and closing one
 * makes room again. Before, a session took any number.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startHostProcess } from "./_host_process.ts";
import { MAX_OPEN_STREAMS } from "../../runtime/transports/http_sse.ts";
import { floodsEnded, rawSseSession } from "./_sse_streams.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/streams/", import.meta.url));

Deno.test("one HTTP+SSE session holds at most MAX_OPEN_STREAMS unread stream connections", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  const { send, stream: openStream } = await rawSseSession(host);
  const conns: Deno.TcpConn[] = [];
  try {
    await send({ type: "handshake/req", id: "h" });
    const statuses: number[] = [];
    for (let i = 0; i < MAX_OPEN_STREAMS + 2; i++) {
      const stream = await openStream();
      conns.push(stream.conn);
      statuses.push(stream.status);
      if (stream.status !== 200) continue;
      // About 12 MiB of output to a client that reads none: more than
      // the connection's buffers take, so the stream stalls.
      await send({
        type: "tool/call/req",
        id: `f${i}`,
        tool_name: "flood",
        arguments: { events: 200, bytes: 64 * 1024 },
        streaming: true,
      });
      await floodsEnded(host, i + 1);
    }
    assert.deepEqual(statuses, [
      ...Array(MAX_OPEN_STREAMS).fill(200),
      429,
      429,
    ]);
    // A client that closes a stalled connection gets room back.
    conns.shift()!.close();
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      const stream = await openStream();
      conns.push(stream.conn);
      status = stream.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 200);
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    }
  }
});
