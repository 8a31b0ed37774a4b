import assert from "node:assert/strict";
import { createMcpHttp, guardRequest } from "./http.ts";
import { Dispatcher } from "../dispatcher.ts";
import { defaultConfig } from "../config.ts";
import { Session } from "../session.ts";
import type { OpenSessionOptions } from "../transports/transport_context.ts";

function request(headers: Record<string, string>): Request {
  return new Request("http://localhost:8080/mcp", { method: "POST", headers });
}

Deno.test("guardRequest() refuses a missing or wrong bearer token with 401 and a challenge", async (t) => {
  for (
    const [name, headers, message] of [
      ["missing", {}, "Missing bearer token"],
      ["wrong", { authorization: "Bearer nope" }, "Invalid bearer token"],
    ] as const
  ) {
    await t.step(name, async () => {
      const refused = guardRequest(request(headers), ["secret"]);
      assert.ok(refused instanceof Response);
      assert.equal(refused.status, 401);
      assert.equal(
        refused.headers.get("www-authenticate"),
        'Bearer realm="skillbox"',
      );
      assert.deepEqual(await refused.json(), { error: message });
    });
  }
});

Deno.test('guardRequest() passes the token, or "" when no tokens are configured', () => {
  assert.equal(
    guardRequest(request({ authorization: "Bearer secret" }), ["secret"]),
    "secret",
  );
  assert.equal(guardRequest(request({}), []), "");
});

Deno.test("a POST refused while bodies hold the host's share says when to retry, as the other transports do", async () => {
  const mcp = createMcpHttp({
    dispatcher: new Dispatcher({ maxMessageBytes: 200 << 20 }),
    limits: defaultConfig().limits,
    admitSession: (o: OpenSessionOptions) =>
      new Session({ send: o.send, transport: o.transport }),
    log() {},
  }, { tokens: ["t"] });
  // A body that says it holds 200 MiB and sends nothing holds its share.
  const posting = (body: ReadableStream<Uint8Array>) =>
    new Request("http://x/mcp", {
      method: "POST",
      headers: {
        authorization: "Bearer t",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": String(200 << 20),
      },
      body,
    });
  let hold: ReadableStreamDefaultController<Uint8Array> | undefined;
  const held = mcp.handle(
    posting(new ReadableStream({ start: (c) => void (hold = c) })),
  );
  try {
    const refused = await mcp.handle(posting(new ReadableStream()));
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    await refused.body?.cancel();
  } finally {
    hold?.close();
    await (await held).body?.cancel();
    await mcp.close();
  }
});
