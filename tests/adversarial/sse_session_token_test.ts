/**
 * An HTTP+SSE transport session answers only the token it holds: with
 * tokens configured, a request that carries another token, or none, on a
 * session opened with `Authorization: Bearer A` is refused as an unknown
 * session (404), so a second token holder (or anyone who learnt the
 * `X-Session-Id`, a header a load balancer reads) can neither read its
 * stream nor send on it. Against a real host with two tokens.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { openSse } from "../support/sse_client.ts";
import { RAW } from "../support/wire.ts";

const A = "token-a-0123456789";
const B = "token-b-0123456789";

async function start() {
  const host = createHost({ config: { tokens: [A, B] }, capabilities: [] });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return { host, base: `${url}/a2e` };
}

function on(id: string, token?: string): Record<string, string> {
  return token === undefined
    ? { "x-session-id": id }
    : { "x-session-id": id, authorization: `Bearer ${token}` };
}

async function refused(res: Response, id: string): Promise<void> {
  assert.equal(res.status, 404);
  assert.equal((await res.json()).error.includes(`"${id}"`), true);
}

Deno.test("an HTTP+SSE session opened with token A refuses B and no token, and serves A", async () => {
  const { host, base } = await start();
  try {
    const a = await openSse(base, {
      headers: { authorization: `Bearer ${A}` },
    });
    const stream = await a.stream();
    for (const token of [B, undefined, "not-a-token"]) {
      const send = await fetch(`${base}/send`, {
        method: "POST",
        headers: on(a.sessionId, token),
        body: RAW.ping("stolen"),
      });
      await refused(send, a.sessionId);
      const steal = await fetch(`${base}/stream`, {
        headers: on(a.sessionId, token),
      });
      await refused(steal, a.sessionId);
    }
    // A's stream was never replaced, and nothing B sent reached A's session.
    await (await a.send(RAW.ping("mine"))).body?.cancel();
    const pong = await stream.next(10_000);
    assert.equal(pong.type, "pong");
    assert.equal(pong.req_id, "mine");
    await stream.close();
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("an HTTP+SSE session admitted by a handshake answers only that token once a request presented it", async () => {
  const { host, base } = await start();
  try {
    // As the Python SDK does: POST /session bare, then every request with
    // the client's headers.
    const opened = await fetch(`${base}/session`, { method: "POST" });
    const { session_id: id } = await opened.json();
    const shake = await fetch(`${base}/send`, {
      method: "POST",
      headers: on(id, A),
      body: RAW.handshake("h1", { auth_token: A }),
    });
    assert.equal(shake.status, 200);
    await shake.body?.cancel();
    const abort = new AbortController();
    const stream = await fetch(`${base}/stream`, {
      headers: on(id, A),
      signal: abort.signal,
    });
    assert.equal(stream.status, 200);
    for (const token of [B, undefined]) {
      await refused(
        await fetch(`${base}/stream`, { headers: on(id, token) }),
        id,
      );
      await refused(
        await fetch(`${base}/send`, {
          method: "POST",
          headers: on(id, token),
          body: RAW.ping("stolen"),
        }),
        id,
      );
    }
    const mine = await fetch(`${base}/send`, {
      method: "POST",
      headers: on(id, A),
      body: RAW.ping("mine"),
    });
    assert.equal(mine.status, 200);
    await mine.body?.cancel();
    const text = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes('"req_id":"mine"')) {
      const { value, done } = await text.read();
      assert.equal(done, false, `stream ended; saw ${seen}`);
      seen += value;
    }
    assert.equal(seen.includes('"req_id":"stolen"'), false);
    abort.abort();
    await text.cancel().catch(() => {});
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
