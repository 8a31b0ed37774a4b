/**
 * Upgrade requests to `/a2e` as clients really send them, malformed ones
 * included: a malformed upgrade is the client's error (400, saying why),
 * not a failure of the host, and leaves no session behind; the `Upgrade`
 * header's value is case-blind (RFC 7230 6.7), as Deno's own check is.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";

// Sends one request and reads its status line and body, or only the head
// of a 101 (the upgraded socket stays open).
async function raw(
  port: number,
  head: string[],
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const lines = [...head, `Host: 127.0.0.1:${port}`, "", ""];
    await conn.write(new TextEncoder().encode(lines.join("\r\n")));
    let text = "";
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16384);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
      // The connection may stay open: the head, and its declared body.
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) continue;
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end));
      if (text.length - end - 4 >= Number(length?.[1] ?? 0)) break;
    }
    return {
      status: Number(text.split(" ")[1]),
      body: text.slice(text.indexOf("\r\n\r\n") + 4),
    };
  } finally {
    conn.close();
  }
}

Deno.test("a malformed WebSocket upgrade gets 400 saying why; the host logs no failure and keeps no session", async () => {
  const lines: string[] = [];
  const host = createHost({ capabilities: [], log: (l) => lines.push(l) });
  try {
    const { port } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const malformed = {
      "no Sec-WebSocket-Key": [
        "GET /a2e HTTP/1.1",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Version: 13",
      ],
      "no Connection: Upgrade": [
        "GET /a2e HTTP/1.1",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Connection: close",
      ],
    };
    for (const [what, head] of Object.entries(malformed)) {
      const answer = await raw(port, head);
      assert.equal(answer.status, 400, `${what}: ${answer.body}`);
      assert.match(
        JSON.parse(answer.body).error,
        /^Cannot upgrade to a WebSocket: /,
        what,
      );
    }
    assert.deepEqual(lines.filter((line) => /Cannot handle/.test(line)), []);
    assert.equal(host.sessionCount, 0);
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("an upgrade whose Upgrade header says WebSocket in capitals opens a session", async () => {
  const host = createHost({ capabilities: [] });
  try {
    const { port } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const answer = await raw(port, [
      "GET /a2e HTTP/1.1",
      "Upgrade: WebSocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Version: 13",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ]);
    assert.equal(answer.status, 101, answer.body);
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
