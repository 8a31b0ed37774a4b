import assert from "node:assert/strict";
import { redactLlmConfig } from "./redact.ts";

Deno.test("redactLlmConfig() keeps only the public settings", () => {
  const safe = redactLlmConfig({
    provider_name: "anthropic",
    provider_credentials: { api_key_env: "HOST_SECRET" },
    provider_config: {
      model: "m",
      temperature: 0,
      max_retries: 2,
      extra_headers: { "x-api-key": "sk-hidden" },
    },
  });
  assert.deepEqual(safe, {
    provider_name: "anthropic",
    provider_credentials: {},
    provider_config: { model: "m", temperature: 0, max_retries: 2 },
    is_default: false,
  });
});

Deno.test("redactLlmConfig() blanks a base_url that does not parse", () => {
  const safe = redactLlmConfig({
    provider_name: "openai",
    provider_config: { base_url: "sk-secret-not-a-url" },
  });
  assert.deepEqual(safe.provider_config, { base_url: "" });
});
