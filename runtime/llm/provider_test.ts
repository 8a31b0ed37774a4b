import assert from "node:assert/strict";
import { resolveLlmConfig } from "./config.ts";
import { createProvider } from "./provider.ts";

const BASE_URL_ENV = ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"];

Deno.test("createProvider() sends an entry without base_url to the official API, whatever the environment says", async () => {
  // Given no base URL, the SDKs read these variables: one in the host's
  // environment would take the host's key and the conversation elsewhere.
  const before = BASE_URL_ENV.map((name) => Deno.env.get(name));
  const realFetch = globalThis.fetch;
  const seen: string[] = [];
  globalThis.fetch = (input) => {
    seen.push(String(input instanceof Request ? input.url : input));
    return Promise.resolve(
      Response.json({ error: { message: "Bad key" } }, { status: 401 }),
    );
  };
  for (const name of BASE_URL_ENV) Deno.env.set(name, "http://env.test/v1");
  try {
    for (const provider of ["openai", "anthropic"]) {
      const llm = createProvider(resolveLlmConfig([{
        provider_name: provider,
        provider_credentials: { api_key: "sk-test" },
        provider_config: { model: "m" },
      }]));
      await assert.rejects(
        llm.chat({ messages: [{ role: "user", content: "hi" }] }),
        /answered HTTP 401/,
      );
    }
  } finally {
    globalThis.fetch = realFetch;
    BASE_URL_ENV.forEach((name, i) => {
      const value = before[i];
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    });
  }
  assert.deepEqual(seen, [
    "https://api.openai.com/v1/chat/completions",
    "https://api.anthropic.com/v1/messages",
  ]);
});
