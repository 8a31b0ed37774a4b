/**
 * What request bodies being read hold at once is bounded for the whole
 * host, not only per request. Each `POST /a2e/send` or `/mcp` body is
 * held whole, up to `max_message_bytes` (4 MiB), until it has all come;
 * a client that opens many connections and sends each body but its last
 * bytes (any local process, on a loopback host) grew the host by about
 * 5 MB a connection, up to the open-file limit (20,000 here: 100 GB), so
 * the kernel's out-of-memory killer would end the host. Past the bound, a
 * body over its equal share is refused with 503 (retry), and a small one
 * still goes through.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));
// 100 bodies of 4 MB held at once: 400 MB, past the host's 256 MiB.
const CONNECTIONS = 100;
const BODY = new TextEncoder().encode("a".repeat(4_000_000));
const encoder = new TextEncoder();

// Sends a request's head and all but the last bytes of its body.
async function holdBody(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const lines = Object.entries({
    Host: `127.0.0.1:${port}`,
    "Content-Length": String(BODY.length + 100),
    ...headers,
  }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  await conn.write(encoder.encode(`POST ${path} HTTP/1.1\r\n${lines}\r\n`));
  try {
    for (let at = 0; at < BODY.length;) {
      at += await conn.write(BODY.subarray(at));
    }
  } catch {
    // Refused before all of it was sent: the host closed the connection.
  }
  return conn;
}

// The status line of what the host answered on `conn`, or "" when it
// answered nothing within `ms` (it still waits for the body's end).
async function answered(conn: Deno.Conn, ms: number): Promise<string> {
  const buf = new Uint8Array(256);
  const timer = setTimeout(() => conn.close(), ms);
  try {
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0]!;
  } catch {
    return "";
  } finally {
    clearTimeout(timer);
  }
}

async function statuses(conns: Deno.Conn[]): Promise<string[]> {
  const seen = await Promise.all(conns.map((conn) => answered(conn, 2_000)));
  for (const conn of conns) {
    try {
      conn.close();
    } catch {
      // Closed when it answered nothing in time.
    }
  }
  return seen;
}

Deno.test("bodies held past the host's bound are refused with 503; a small request goes through", async (t) => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  const port = Number(new URL(host.url).port);
  const opened = await fetch(`${host.url}/a2e/session`, { method: "POST" });
  const { session_id: session } = await opened.json();

  await t.step("HTTP+SSE /a2e/send", async () => {
    const conns: Deno.Conn[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      conns.push(
        await holdBody(port, "/a2e/send", {
          "X-Session-Id": session,
          "Content-Type": "text/plain",
        }),
      );
    }
    const small = await fetch(`${host.url}/a2e/send`, {
      method: "POST",
      headers: { "x-session-id": session, "content-type": "text/plain" },
      body: JSON.stringify({ type: "ping", id: "small" }),
    });
    assert.equal(small.status, 200, await small.text());
    const seen = await statuses(conns);
    const refused = seen.filter((s) => / 503 /.test(s)).length;
    assert.ok(refused > 0, `No body was refused: ${JSON.stringify(seen)}`);
  });

  await t.step("MCP /mcp", async () => {
    const conns: Deno.Conn[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      conns.push(
        await holdBody(port, "/mcp", {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        }),
      );
    }
    const seen = await statuses(conns);
    const refused = seen.filter((s) => / 503 /.test(s)).length;
    assert.ok(refused > 0, `No body was refused: ${JSON.stringify(seen)}`);
  });
});
