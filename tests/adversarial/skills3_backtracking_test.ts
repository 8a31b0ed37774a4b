/**
 * Text a hostile party writes must not hold the host's one thread in a
 * backtracking regular expression. Each input below is one a principal
 * fully controls and the host reads on its own thread: a model's final
 * answer (an LLM endpoint's text, up to llm.max_response_bytes), an LLM
 * endpoint's error message, and a client's `llm_override` base_url. With
 * `\s*\n` before a lazy body, `\.+$` and `\/+$`, each took time quadratic
 * in its length (40,000 characters: 9 s; a megabyte: hours). Each test
 * gives an input of the size a principal can send and checks the answer:
 * on the old code none of them finished.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parseFinalAnswer } from "../../runtime/skills/run.ts";
import { mapProviderError } from "../../runtime/llm/_turn.ts";
import { resolveLlmConfig } from "../../runtime/llm/config.ts";

const MEGABYTE = 1024 * 1024;

Deno.test("parseFinalAnswer() refuses an unclosed fence of newlines in one pass", () => {
  const text = "```" + "\n".repeat(MEGABYTE);
  assert.throws(
    () => parseFinalAnswer(text, { type: "object" }),
    /The final answer is not JSON matching output_schema/,
  );
});

Deno.test("mapProviderError() reads a provider message of dots and one letter", () => {
  const message = ".".repeat(MEGABYTE) + "x";
  const error = mapProviderError("openai", new Error(message), {
    baseUrl: "https://api.openai.com/v1",
  });
  assert.ok(error.message.endsWith(".x"));
  assert.ok(
    error.message.startsWith('LLM provider "openai" failed mid-stream: ...'),
  );
});

Deno.test("resolveLlmConfig() compares a base_url of slashes and one letter", () => {
  const baseUrl = "http://llm.example/" + "/".repeat(MEGABYTE) + "v1";
  const resolved = resolveLlmConfig([{
    provider_name: "openai",
    provider_credentials: { api_key: "sk-host" },
    provider_config: { model: "m" },
  }], {
    override: {
      provider_name: "openai",
      provider_credentials: { api_key: "sk-own" },
      provider_config: { base_url: baseUrl },
    },
  });
  assert.equal(resolved.baseUrl, baseUrl);
  assert.equal(resolved.operatorEndpoint, false);
});
