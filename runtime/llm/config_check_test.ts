import assert from "node:assert/strict";
import {
  checkLlmConfig,
  checkLlmConfigFields,
  providerConfigOf,
} from "./config_check.ts";
import { SchemaViolationError } from "../../protocol/errors.ts";

function violation(field: string) {
  return (e: unknown) =>
    e instanceof SchemaViolationError &&
    (e.detail as { field?: string } | undefined)?.field === field;
}

Deno.test("checkLlmConfig() puts the faulty field's path in the error detail", () => {
  assert.throws(
    () => checkLlmConfig({ provider_name: "openai", provider_config: 3 }, "a"),
    violation("a.provider_config"),
  );
  assert.throws(
    () =>
      checkLlmConfig({
        provider_name: "openai",
        provider_credentials: { api_key_env: 5 },
      }, "llm.2"),
    violation("llm.2.provider_credentials.api_key_env"),
  );
  assert.throws(
    () =>
      checkLlmConfig({
        provider_name: "anthropic",
        provider_config: { max_retries: -1 },
      }, "b"),
    violation("b.provider_config.max_retries"),
  );
  assert.throws(() => checkLlmConfig(["openai"], "c"), violation("c"));
});

Deno.test("checkLlmConfig() accepts every documented field and returns the value", () => {
  const value = {
    provider_name: "openai",
    provider_credentials: { api_key: "k", api_key_env: "V" },
    provider_config: {
      base_url: "http://127.0.0.1:1/v1",
      model: "m",
      max_tokens: 1,
      temperature: 2,
      max_retries: 0,
    },
    is_default: true,
  };
  assert.equal(checkLlmConfig(value, "x"), value);
  for (const empty of [null, false, undefined] as const) {
    checkLlmConfigFields(
      { provider_name: "anthropic", provider_config: empty },
      "x",
    );
  }
});

Deno.test("providerConfigOf() reads false and null as no settings", () => {
  assert.deepEqual(
    providerConfigOf({ provider_name: "openai", provider_config: null }),
    {},
  );
  const settings = { model: "m" };
  assert.equal(
    providerConfigOf({ provider_name: "openai", provider_config: settings }),
    settings,
  );
});
