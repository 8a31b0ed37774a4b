/**
 * A client that stops sending a request body halfway (it half-closes, or
 * goes away) is the client's doing, not a failure of the host: each door
 * that reads a body answers 400 and the host logs no failure of its own,
 * so a client cannot write to the host's log by cutting its bodies.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";

const TOKEN = "body-cut-token-0123456789";

// Sends a request whose body stops after a few of its declared bytes,
// half-closes, and reads the answer's status line and body.
async function cutShort(
  port: number,
  head: string[],
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const text = [
      ...head,
      `Host: 127.0.0.1:${port}`,
      "Content-Length: 1000",
      "",
      '{"type":',
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(text));
    await conn.closeWrite();
    let answer = "";
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16384);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      answer += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
    return {
      status: Number(answer.split(" ")[1]),
      body: answer.slice(answer.indexOf("\r\n\r\n") + 4),
    };
  } finally {
    conn.close();
  }
}

Deno.test("a body cut short on /a2e/send, /mcp and /login gets 400, and the host logs no failure", async () => {
  const lines: string[] = [];
  const host = createHost({
    capabilities: [],
    config: { tokens: [TOKEN] },
    log: (line) => lines.push(line),
  });
  try {
    const { port, url } = await host.listen({
      hostname: "127.0.0.1",
      port: 0,
    });
    const bearer = `Authorization: Bearer ${TOKEN}`;
    const opened = await fetch(`${url}/a2e/session`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const { session_id } = await opened.json();
    const doors = {
      "/a2e/send": [
        "POST /a2e/send HTTP/1.1",
        bearer,
        `X-Session-Id: ${session_id}`,
      ],
      "/mcp": [
        "POST /mcp HTTP/1.1",
        bearer,
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
      ],
      "/login": [
        "POST /login HTTP/1.1",
        "Content-Type: application/x-www-form-urlencoded",
      ],
    };
    for (const [door, head] of Object.entries(doors)) {
      const answer = await cutShort(port, head);
      assert.equal(answer.status, 400, `${door}: ${answer.body}`);
      assert.match(
        JSON.parse(answer.body).error,
        /^Cannot read the request body: /,
        door,
      );
    }
    // Each answer was written after its route ended: any line it logged
    // is here by now.
    assert.deepEqual(lines.filter((line) => /Cannot handle/.test(line)), []);
    const health = await fetch(`${url}/health`);
    assert.equal((await health.json()).status, "ok");
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
