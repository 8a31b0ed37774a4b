/**
 * An LLM endpoint's error message reaches the skill's caller (the
 * `skill.failed` event and the result's `error`). When the key is the
 * host's, that caller is not entitled to it: a provider (or a proxy in
 * front of it) that echoes the credential it was sent in its error gave
 * the host's key to any client. The key is scrubbed from the message.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createOpenAiProvider } from "../../runtime/llm/openai.ts";
import { createAnthropicProvider } from "../../runtime/llm/anthropic.ts";
import type { LlmFetch } from "../../runtime/llm/llm_fetch.ts";

const KEY = "sk-host-secret-0123456789";

// Answers 401 with every header it was sent in the error's message.
const echoing = (body: (message: string) => unknown): LlmFetch => (_i, init) =>
  Promise.resolve(
    new Response(
      JSON.stringify(body(
        `Incorrect API key provided: ${
          [...new Headers(init?.headers).entries()].map(([k, v]) => `${k}=${v}`)
            .join(" ")
        }`,
      )),
      { status: 401, headers: { "content-type": "application/json" } },
    ),
  );

Deno.test("an openai endpoint echoing the host's key in its error does not pass it on", async () => {
  const llm = createOpenAiProvider({
    apiKey: KEY,
    model: "m",
    baseUrl: "http://llm.test/v1",
    fetch: echoing((message) => ({ error: { message, type: "invalid" } })),
  });
  const error = await llm.chat({ messages: [{ role: "user", content: "hi" }] })
    .then(() => assert.fail("resolved"), (e: Error) => e);
  assert.match(error.message, /HTTP 401/);
  assert.match(error.message, /\[redacted\]/);
  assert.ok(!error.message.includes(KEY), error.message);
});

Deno.test("an anthropic endpoint echoing the host's key in its error does not pass it on", async () => {
  const llm = createAnthropicProvider({
    apiKey: KEY,
    model: "m",
    baseUrl: "http://llm.test",
    fetch: echoing((message) => ({
      type: "error",
      error: { type: "authentication_error", message },
    })),
  });
  const error = await llm.chat({ messages: [{ role: "user", content: "hi" }] })
    .then(() => assert.fail("resolved"), (e: Error) => e);
  assert.match(error.message, /HTTP 401/);
  assert.match(error.message, /\[redacted\]/);
  assert.ok(!error.message.includes(KEY), error.message);
});
