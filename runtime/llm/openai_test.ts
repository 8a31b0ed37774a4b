import assert from "node:assert/strict";
import { createOpenAiProvider } from "./openai.ts";

/** A server that streams the given Chat Completions chunks, then [DONE]. */
function streaming(chunks: unknown[]) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(
        chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") +
          "data: [DONE]\n\n",
        { headers: { "content-type": "text/event-stream" } },
      ),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** One chunk carrying one tool call piece at `index`. */
function callAt(index: unknown, name: string) {
  return {
    id: "c",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{
      index: 0,
      delta: {
        tool_calls: [{
          index,
          id: `id-${name}`,
          type: "function",
          function: { name, arguments: "{}" },
        }],
      },
      finish_reason: null,
    }],
  };
}

const FINISH = {
  id: "c",
  object: "chat.completion.chunk",
  created: 0,
  model: "m",
  choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }],
};

Deno.test("openai: tool calls are kept by the server's index, whatever it is", async () => {
  // 2**32 - 1 is no array index: kept in an array, the call was counted
  // against max_tool_calls, then lost.
  await using server = streaming([
    callAt(1, "second"),
    callAt(0, "first"),
    callAt(2 ** 32 - 1, "last"),
    FINISH,
  ]);
  const llm = createOpenAiProvider({
    apiKey: "k",
    model: "m",
    baseUrl: server.url,
  });
  const res = await llm.chat({ messages: [{ role: "user", content: "go" }] });
  assert.deepEqual(res.tool_calls.map((c) => c.name), [
    "first",
    "second",
    "last",
  ]);
});

Deno.test("openai: text and ids that are not strings count as what they add, and pass on as strings", async () => {
  // A server's JSON goes through the SDK unchecked. An object counted as
  // its string form ("[object Object]", 15 bytes) but passed on whole let
  // each event carry a megabyte past llm.max_response_bytes.
  const big = { pad: "x".repeat(64 * 1024) };
  const chunk = (delta: unknown) => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: null }],
  });
  const pieces = [
    ...Array.from({ length: 20 }, () => chunk({ content: big })),
    chunk({
      tool_calls: [{
        index: 0,
        id: big,
        function: { name: big, arguments: "" },
      }],
    }),
    { ...FINISH, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ];
  await using server = streaming(pieces);
  const llm = createOpenAiProvider({
    apiKey: "k",
    model: "m",
    baseUrl: server.url,
    limits: { maxResponseBytes: 64 * 1024, maxToolCalls: 4 },
  });
  const tokens: unknown[] = [];
  const res = await llm.chat({ messages: [{ role: "user", content: "go" }] }, {
    onToken: (text) => tokens.push(text),
  });
  assert.ok(tokens.every((t) => t === "[object Object]"), "tokens are strings");
  assert.equal(res.text, "[object Object]".repeat(20));
  assert.equal(res.tool_calls[0]?.id, "[object Object]");
  assert.equal(res.tool_calls[0]?.name, "[object Object]");
});

Deno.test("openai: a finish_reason named like an Object property is passed on as the string sent", async () => {
  // STOP_REASONS was a plain object: "constructor" looked up Object itself,
  // and a function went out as the turn's stop_reason.
  for (const reason of ["constructor", "toString", "__proto__"]) {
    await using server = streaming([
      { ...FINISH, choices: [{ index: 0, delta: {}, finish_reason: reason }] },
    ]);
    const llm = createOpenAiProvider({
      apiKey: "k",
      model: "m",
      baseUrl: server.url,
    });
    const res = await llm.chat({ messages: [{ role: "user", content: "go" }] });
    assert.equal(res.stop_reason, reason);
  }
});
