/**
 * Guessing the console's token by signing in many times at once: the door
 * judges a sign-in by its answer, which comes only once the form's body is
 * read, so every attempt must be checked against the failures of those
 * before it, not only against the failures already judged when its head
 * arrived.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";

const TOKEN = "sign-in-race-token-0123456789";
const ATTEMPTS = 20;

// One sign-in on its own connection. It asks for `100 Continue` and sends
// the form only once the host starts reading it: by then the door has let
// the attempt through, so the host cannot have judged the other attempts'
// forms before it saw this one's head.
async function signIn(port: number, token: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const body = `token=${encodeURIComponent(token)}`;
    const head = [
      "POST /login HTTP/1.1",
      `Host: 127.0.0.1:${port}`,
      "Content-Type: application/x-www-form-urlencoded",
      `Content-Length: ${body.length}`,
      "Expect: 100-continue",
      "Connection: close",
    ];
    const encoder = new TextEncoder();
    await conn.write(encoder.encode(head.join("\r\n") + "\r\n\r\n"));
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16384);
    let text = "";
    let sent = false;
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
      if (!sent && /^HTTP\/1\.1 100 /.test(text) && text.includes("\r\n\r\n")) {
        sent = true;
        text = text.slice(text.indexOf("\r\n\r\n") + 4);
        await conn.write(encoder.encode(body));
      }
    }
    return Number(text.split(" ")[1]);
  } finally {
    conn.close();
  }
}

Deno.test("sign-ins sent at once are judged as if one after another: six wrong ones, then 429", async () => {
  const host = createHost({ capabilities: [], config: { tokens: [TOKEN] } });
  try {
    const { port } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const statuses = await Promise.all(
      Array.from({ length: ATTEMPTS }, (_, i) => signIn(port, `guess-${i}`)),
    );
    // Five free failures; the sixth starts the wait (as one after another).
    const judged = statuses.filter((status) => status === 401).length;
    assert.equal(judged, 6, `statuses: ${statuses.join(" ")}`);
    assert.equal(
      statuses.filter((status) => status === 429).length,
      ATTEMPTS - 6,
      `statuses: ${statuses.join(" ")}`,
    );
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("sign-ins sent at once from many /64s of one IPv6 network meet the network's count", async () => {
  const host = createHost({ capabilities: [], config: { tokens: [TOKEN] } });
  try {
    // Thirty /64s of one /56, each guessing once, all at once. host.fetch
    // runs the door for each before any form is read.
    const answers = Array.from({ length: 30 }, (_, i) => {
      const request = new Request("http://127.0.0.1:8787/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `token=guess-${i}`,
      });
      const hostname = `2001:db8:1:${(0x100 + i).toString(16)}::7`;
      const remoteAddr = { transport: "tcp" as const, hostname, port: 1 };
      return host.fetch(request, { remoteAddr } as Deno.ServeHandlerInfo);
    });
    const statuses = [];
    for (const answer of answers) {
      const response = await answer;
      await response.body?.cancel();
      statuses.push(response.status);
    }
    // The /56 has 20 free failures; the 21st starts its wait.
    const judged = statuses.filter((status) => status === 401).length;
    assert.equal(judged, 21, `statuses: ${statuses.join(" ")}`);
    assert.equal(statuses.filter((status) => status === 429).length, 9);
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
