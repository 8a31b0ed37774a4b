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
