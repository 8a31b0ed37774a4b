import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startHost } from "./support/host.ts";
import { openSse } from "./support/sse_client.ts";
import { assertError, assertPong, type Msg, RAW } from "./support/wire.ts";
import { openWs } from "./support/ws_client.ts";

const TEN_MB = `{"type":"ping","id":"big","pad":"${
  "x".repeat(10 * 1024 * 1024)
}"}`;

/** Bad messages and the error each must get, on every transport. */
const CASES: Array<[string, string, string, string]> = [
  ["invalid JSON", '{"type": "ping", "id": "j1"', "parse_error", "j1"],
  ["a JSON array", '[{"type":"ping"}]', "invalid_message", ""],
  ["no type", '{"id":"t1"}', "invalid_message", "t1"],
  ["an unknown type", '{"type":"x/y","id":"u1"}', "invalid_message", "u1"],
  [
    "a wrong field type",
    '{"type":"handshake/req","id":"w1","agent_caps":"tools"}',
    "schema_violation",
    "w1",
  ],
  ["a 10 MB message", TEN_MB, "invalid_message", "big"],
];

async function checkAll(
  send: (raw: string) => Promise<void> | void,
  next: () => Promise<Msg>,
) {
  for (const [, raw, code, reqId] of CASES) {
    await send(raw);
    assertError(await next(), code, reqId);
    // The connection is kept: the next message is still answered.
    await send(RAW.ping(`after-${reqId}`));
    assertPong(await next(), `after-${reqId}`);
  }
}

Deno.test("WebSocket: bad input gets a clear error and the socket stays up", async (t) => {
  await using h = await startHost();
  const ws = await openWs(h.wsUrl);
  await t.step("every bad message", () => checkAll(ws.send, () => ws.next()));
  await t.step("a binary frame", async () => {
    ws.send(new Uint8Array([1, 2, 3]));
    assertError(await ws.next(), "invalid_message", "", /binary/);
    ws.send(RAW.ping("after-binary"));
    assertPong(await ws.next(), "after-binary");
  });
  assert.equal(ws.socket.readyState, WebSocket.OPEN);
  await ws.close();
});

Deno.test("HTTP+SSE: bad input gets a clear error on the stream", async (t) => {
  await using h = await startHost();
  const client = await openSse(h.sseUrl);
  const stream = await client.stream();
  await t.step("every bad message", () =>
    checkAll(async (raw) => {
      const res = await client.send(raw);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }, () => stream.next()));
  await t.step("/send and /stream without X-Session-Id get 400", async () => {
    for (const [method, path] of [["POST", "send"], ["GET", "stream"]]) {
      const res = await fetch(`${h.sseUrl}/${path}`, {
        method,
        body: method === "POST" ? RAW.ping("x") : undefined,
      });
      assert.equal(res.status, 400);
      assert.match((await res.json()).error, /X-Session-Id/);
    }
  });
  await t.step("an unknown X-Session-Id gets 404", async () => {
    const res = await fetch(`${h.sseUrl}/send`, {
      method: "POST",
      headers: { "x-session-id": "nope" },
      body: RAW.ping("x"),
    });
    assert.equal(res.status, 404);
    assert.match((await res.json()).error, /"nope"/);
  });
  await stream.close();
});

Deno.test("HTTP+SSE: a /stream reconnect loses nothing", async () => {
  await using h = await startHost();
  const client = await openSse(h.sseUrl);
  const first = await client.stream();
  const send = async (raw: string) => (await client.send(raw)).body?.cancel();
  await send(RAW.ping("a"));
  assertPong(await first.next(), "a");
  await first.close();
  // Answers produced while no stream is attached wait for the next one.
  for (let i = 0; i < 20; i++) await send(RAW.ping(`b${i}`));
  const second = await client.stream();
  for (let i = 0; i < 20; i++) assertPong(await second.next(), `b${i}`);
  // A second stream replacing a live one also loses nothing.
  const third = await client.stream();
  await send(RAW.ping("c"));
  assertPong(await third.next(), "c");
  await second.close();
  await third.close();
});

Deno.test("stdio: bad input gets a clear error and the session stays up", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-all",
      fileURLToPath(new URL("../host.ts", import.meta.url)),
      "--stdio",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<Msg> => {
    while (!buffer.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) throw new Error("stdout ended");
      buffer += value;
    }
    const at = buffer.indexOf("\n");
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    return JSON.parse(line);
  };
  await checkAll(
    (raw) => writer.write(new TextEncoder().encode(raw + "\n")),
    next,
  );
  await writer.close();
  assert.equal((await child.status).code, 0);
  await reader.cancel();
});
