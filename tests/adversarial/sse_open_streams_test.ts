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
import { type HostProcess, startHostProcess } from "./_host_process.ts";
import { MAX_OPEN_STREAMS } from "../../runtime/transports/http_sse.ts";
import { within } from "./_helpers.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/streams/", import.meta.url));
const encoder = new TextEncoder();

/** Opens `GET /a2e/stream` on a raw connection; reads only its status. */
async function rawStream(
  host: HostProcess,
  id: string,
): Promise<{ status: number; conn: Deno.TcpConn }> {
  const url = new URL(host.url);
  const conn = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  await conn.write(encoder.encode(
    `GET /a2e/stream HTTP/1.1\r\nHost: ${url.host}\r\nX-Session-Id: ${id}\r\n\r\n`,
  ));
  const buf = new Uint8Array(512);
  const n = await within(conn.read(buf), 10_000, "the stream's status line");
  const line = new TextDecoder().decode(buf.subarray(0, n ?? 0));
  return { status: Number(line.split(" ")[1]), conn };
}

/** Waits until `count` runs of the flood tool have ended (the history). */
async function floodsEnded(host: HostProcess, count: number): Promise<void> {
  // The history is the host's record that a call ended: polled, bounded.
  for (let i = 0; i < 1200; i++) {
    const page = await (await fetch(`${host.url}/api/runs?limit=200`)).json();
    const ended = (page.runs as Record<string, unknown>[]).filter((r) =>
      r.name === "flood" && r.ended_at !== null
    );
    if (ended.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Fewer than ${count} flood runs ended within 60 s`);
}

Deno.test("one HTTP+SSE session holds at most MAX_OPEN_STREAMS unread stream connections", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  const opened = await fetch(`${host.url}/a2e/session`, { method: "POST" });
  const { session_id: id } = await opened.json();
  const send = async (message: object) => {
    const res = await fetch(`${host.url}/a2e/send`, {
      method: "POST",
      headers: { "x-session-id": id },
      body: JSON.stringify(message),
    });
    await res.body?.cancel();
  };
  const conns: Deno.TcpConn[] = [];
  try {
    await send({ type: "handshake/req", id: "h" });
    const statuses: number[] = [];
    for (let i = 0; i < MAX_OPEN_STREAMS + 2; i++) {
      const stream = await rawStream(host, id);
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
      const stream = await rawStream(host, id);
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
