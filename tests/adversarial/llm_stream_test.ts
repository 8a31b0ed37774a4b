/**
 * Hostile LLM provider streams against a real host, in the providers' own
 * formats, served by local servers:
 *
 * - a provider that fails with a huge error body: the SDKs read an error
 *   body whole (`response.text()`) before they throw, and a body broken by
 *   blank lines looked like many small SSE events to the event bound.
 *   Whatever its shape, an error body past the bound fails the call with a
 *   short error naming the limit, and the provider's connection is closed
 *   instead of read to its end;
 * - a provider that sends text or tool-call arguments as JSON numbers, not
 *   strings: the SDKs pass them through unchecked, and they were appended
 *   to the answer without being counted against `llm.max_response_bytes`.
 */

import assert from "node:assert/strict";
import { callPlain, startLlmHost } from "./_llm_host.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };
// 32 MiB in lines of 8 bytes, each followed by a blank line.
const BODY_BYTES = 32 * 1024 * 1024;

for (const dialect of ["openai", "anthropic"] as const) {
  Deno.test(
    `${dialect}: an error body of 32 MiB broken by blank lines fails the call at the bound, unread`,
    OPTS,
    async () => {
      let sent = 0;
      const closed = Promise.withResolvers<void>();
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () => {
          const chunk = new TextEncoder().encode("error\n\n\n".repeat(8192));
          const body = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent >= BODY_BYTES) return controller.close();
              sent += chunk.length;
              controller.enqueue(chunk);
            },
            cancel: () => closed.resolve(),
          });
          return new Response(body, {
            status: 500,
            headers: { "content-type": "text/plain" },
          });
        },
      );
      const base = `http://127.0.0.1:${server.addr.port}${
        dialect === "openai" ? "/v1" : ""
      }`;
      try {
        await using llm = await startLlmHost(dialect, {
          baseUrl: base,
          llm: { max_response_bytes: 65536 },
        });
        const result = await callPlain(await llm.connect());
        assert.equal(result.success, false);
        assert.ok(
          (result.error ?? "").length < 2000,
          `the error carries the body: ${(result.error ?? "").length} chars`,
        );
        // The host stopped reading: the body was cancelled, not drained.
        assert.ok(sent < BODY_BYTES, `the host read ${sent} bytes`);
        await closed.promise;
        assert.match(
          result.error ?? "",
          /LLM endpoint answered HTTP 500 with an error body of more than \d+ bytes/,
        );
      } finally {
        await server.shutdown();
      }
    },
  );
}

// One stream's events, each piece a JSON number where a string belongs.
function* numberStream(
  dialect: "openai" | "anthropic",
  what: "text" | "tool_arguments",
  count: number,
): Generator<string> {
  const piece = 1234567890123456; // 16 characters once appended
  if (dialect === "openai") {
    const chunk = (delta: Record<string, unknown>, finish?: string) =>
      `data: ${
        JSON.stringify({
          id: "chatcmpl-n",
          object: "chat.completion.chunk",
          created: 0,
          model: "m",
          choices: [{ index: 0, delta, finish_reason: finish ?? null }],
        })
      }\n\n`;
    if (what === "text") {
      yield chunk({ role: "assistant", content: "" });
      for (let n = 0; n < count; n++) yield chunk({ content: piece });
      yield chunk({}, "stop");
    } else {
      yield chunk({
        tool_calls: [{
          index: 0,
          id: "call_n",
          type: "function",
          function: { name: "echo", arguments: "" },
        }],
      });
      for (let n = 0; n < count; n++) {
        yield chunk({
          tool_calls: [{ index: 0, function: { arguments: piece } }],
        });
      }
      yield chunk({}, "tool_calls");
    }
    yield "data: [DONE]\n\n";
    return;
  }
  const event = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  yield event("message_start", {
    message: {
      id: "msg_n",
      type: "message",
      role: "assistant",
      model: "m",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  });
  yield event("content_block_start", {
    index: 0,
    content_block: what === "text"
      ? { type: "text", text: "" }
      : { type: "tool_use", id: "toolu_n", name: "echo", input: {} },
  });
  for (let n = 0; n < count; n++) {
    yield event("content_block_delta", {
      index: 0,
      delta: what === "text"
        ? { type: "text_delta", text: piece }
        : { type: "input_json_delta", partial_json: piece },
    });
  }
  yield event("content_block_stop", { index: 0 });
  yield event("message_delta", {
    delta: {
      stop_reason: what === "text" ? "end_turn" : "tool_use",
      stop_sequence: null,
    },
    usage: { output_tokens: count },
  });
  yield event("message_stop", {});
}

for (const dialect of ["openai", "anthropic"] as const) {
  Deno.test(
    `${dialect}: text and tool arguments sent as numbers count against llm.max_response_bytes`,
    OPTS,
    async (t) => {
      let what: "text" | "tool_arguments" = "text";
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () => {
          const encoder = new TextEncoder();
          // 10,000 pieces of 16 characters: 160,000 against a 65,536 limit.
          const events = numberStream(dialect, what, 10_000);
          const body = new ReadableStream<Uint8Array>({
            pull(controller) {
              const next = events.next();
              if (next.done) controller.close();
              else controller.enqueue(encoder.encode(next.value));
            },
          });
          return new Response(body, {
            headers: { "content-type": "text/event-stream" },
          });
        },
      );
      const base = `http://127.0.0.1:${server.addr.port}${
        dialect === "openai" ? "/v1" : ""
      }`;
      try {
        await using llm = await startLlmHost(dialect, {
          baseUrl: base,
          llm: { max_response_bytes: 65536 },
        });
        const agent = await llm.connect();
        for (const kind of ["text", "tool_arguments"] as const) {
          await t.step(kind, async () => {
            what = kind;
            const result = await callPlain(agent);
            assert.equal(result.success, false);
            assert.match(
              result.error ?? "",
              /sent more than 65536 bytes of text and tool calls in one turn/,
            );
          });
        }
      } finally {
        await server.shutdown();
      }
    },
  );
}
