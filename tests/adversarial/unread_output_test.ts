/**
 * What the clients of all connections leave unread is bounded together,
 * not only per connection. Each WebSocket session or MCP session may have
 * 64 MiB of answers waiting for its client before it is ended; a client
 * that opens sessions, makes calls with large answers and reads none (any
 * local process, on a loopback host) made the host hold that much per
 * session, in the server's buffers: 10 WebSocket sessions of 60 MB unread
 * took a host from 133 MB to 728 MB resident, so a few hundred would have
 * had the kernel's out-of-memory killer end it. Past the bound (an eighth
 * of the V8 heap; 32 MiB for the 256 MiB heap here), a session over its
 * equal share is ended as one that stopped reading, and others go on.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  answerTo,
  crashLines,
  type Msg,
  wsWire,
} from "../support/fuzz_drive.ts";
import { startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));
// `flood`: a small call whose answer is as large as asked.
const STREAMS = fileURLToPath(
  new URL("../fixtures/streams/", import.meta.url),
);
const MiB = 1024 * 1024;
const HEAP_MB = 256;
// Each WebSocket session: 40 MB of answers left unread, of which the
// kernel's socket buffers on loopback take up to about 10 MB; the rest
// (far over an equal share of the 32 MiB bound, far under the 64 MiB of
// one session) waits in the host. Together past the bound.
const SESSIONS = 8;
const CALLS = 40;
const TEXT = "y".repeat(1_000_000);
const encoder = new TextEncoder();

function call(id: string, text = TEXT): string {
  return JSON.stringify({
    type: "tool/call/req",
    id,
    tool_name: "echo",
    arguments: { text },
  });
}

// A WebSocket client that sends its calls and never reads: a raw
// connection, as the host sees one.
async function unreadWs(port: number): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await writeAll(
    conn,
    encoder.encode(
      `GET /a2e HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ),
  );
  await conn.read(new Uint8Array(1024)); // 101 Switching Protocols
  try {
    for (let i = 0; i < CALLS; i++) {
      await writeAll(conn, maskedText(encoder.encode(call(`c${i}`))));
    }
  } catch {
    // Ended by the host meanwhile.
  }
  return conn;
}

// One client text frame (masked, with a zero key).
function maskedText(payload: Uint8Array): Uint8Array {
  const n = payload.length;
  const head = [0x81, 0x80 | 127, 0, 0, 0, 0, n >>> 24, (n >>> 16) & 255];
  head.push((n >>> 8) & 255, n & 255, 0, 0, 0, 0);
  const frame = new Uint8Array(head.length + n);
  frame.set(head);
  frame.set(payload, head.length);
  return frame;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) {
    at += await conn.write(bytes.subarray(at));
  }
}

Deno.test("WebSocket sessions that together leave too much unread are ended over their share; others go on", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: HEAP_MB,
  });
  const port = Number(new URL(host.url).port);
  const conns: Deno.Conn[] = [];
  try {
    for (let s = 0; s < SESSIONS; s++) conns.push(await unreadWs(port));
    await host.waitForLine(
      /Closing a WebSocket client that stopped reading .*more than its share/,
      60_000,
    );
    const other = await wsWire(`${host.url.replace("http", "ws")}/a2e`);
    try {
      other.send(call("small", "small"));
      const answer = await answerTo(other, "small");
      assert.equal((answer.data as Msg)?.success, true, JSON.stringify(answer));
    } finally {
      await other.close();
    }
  } finally {
    for (const conn of conns) conn.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});

Deno.test("MCP sessions that together leave too much unread are ended over their share; others go on", async () => {
  await using host = await startHostProcess({
    skills: [STREAMS],
    sandbox: { max_result_bytes: 8 * MiB },
  }, { heapMb: HEAP_MB });
  const port = Number(new URL(host.url).port);
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const open = async () => {
    const init = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "unread", version: "1" },
        },
      }),
    });
    await init.body?.cancel();
    const session = init.headers.get("mcp-session-id")!;
    const ready = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/initialized",
      }),
    });
    await ready.body?.cancel();
    return session;
  };
  // A batch of calls asking for progress, answered on one SSE stream that
  // is never read (16 MiB: the kernel's socket buffers take a few of them
  // once): a raw connection, as the host sees one.
  const unread = async (session: string) => {
    const body = encoder.encode(JSON.stringify(
      Array.from({ length: 4 }, (_, i) => ({
        jsonrpc: "2.0",
        id: 10 + i,
        method: "tools/call",
        params: {
          name: "flood",
          arguments: { events: 1, bytes: 10, result_bytes: 4 * MiB },
          _meta: { progressToken: 10 + i },
        },
      })),
    ));
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await writeAll(
      conn,
      encoder.encode(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: ${body.length}\r\n\r\n`,
      ),
    );
    await writeAll(conn, body);
    return conn;
  };
  const conns: Deno.Conn[] = [];
  try {
    for (let s = 0; s < SESSIONS; s++) conns.push(await unread(await open()));
    await host.waitForLine(
      /Ending an MCP session whose client stopped reading .*more than its share/,
      60_000,
    );
    const session = await open();
    const small = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "flood",
          arguments: { events: 1, bytes: 10, result_bytes: 5 },
        },
      }),
    });
    const text = await small.text();
    assert.equal(small.status, 200, text);
    assert.match(text, /rrrrr/);
  } finally {
    for (const conn of conns) conn.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});
