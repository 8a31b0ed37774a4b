import assert from "node:assert/strict";
import { hostApiKey, resolveApiKey } from "./credentials.ts";
import type { LlmConfig } from "./config_check.ts";
import type { LlmSelection } from "./selection.ts";
import { SkillboxError } from "../../protocol/errors.ts";

const noEnv = () => undefined;
const HOST: LlmConfig = {
  provider_name: "openai",
  provider_credentials: { api_key: "sk-host" },
  provider_config: { base_url: "http://127.0.0.1:9/v1" },
};

function select(chosen: LlmConfig, source: LlmSelection["source"]) {
  return {
    chosen,
    source,
    provider: "openai" as const,
    hostEntry: source === "llm" ? chosen : HOST,
  };
}

function skillError(pattern: RegExp) {
  return (e: unknown) =>
    e instanceof SkillboxError && e.code === "skill_error" &&
    pattern.test(e.message);
}

Deno.test("resolveApiKey() lends the host key only to the host's base_url", () => {
  const same = select({
    provider_name: "openai",
    provider_config: { base_url: "http://127.0.0.1:9/v1/" },
  }, "llm_config");
  assert.equal(
    resolveApiKey(same, { baseUrl: "http://127.0.0.1:9/v1/", env: noEnv }),
    "sk-host",
  );
  const elsewhere = select({
    provider_name: "openai",
    provider_config: { base_url: "https://u:pw@evil.test/v1?k=1" },
  }, "llm_config");
  assert.throws(
    () => resolveApiKey(elsewhere, { baseUrl: "x", env: noEnv }),
    // The refused URL is named without its userinfo or query.
    skillError(/to base_url "https:\/\/evil\.test\/v1" from llm_config/),
  );
});

Deno.test("resolveApiKey() uses a caller's literal key as given, anywhere", () => {
  const own = select({
    provider_name: "openai",
    provider_credentials: { api_key: "sk-own" },
    provider_config: { base_url: "http://elsewhere.test" },
  }, "llm_override");
  assert.equal(
    resolveApiKey(own, { baseUrl: "http://elsewhere.test", env: noEnv }),
    "sk-own",
  );
});

Deno.test("resolveApiKey() refuses api_key_env from a caller without reading it", () => {
  let read = false;
  const env = () => {
    read = true;
    return "leaked";
  };
  const sneaky = select({
    provider_name: "openai",
    provider_credentials: { api_key_env: "HOME" },
  }, "llm_override");
  assert.throws(
    () => resolveApiKey(sneaky, { baseUrl: undefined, env }),
    skillError(/Cannot use "api_key_env" in llm_override/),
  );
  assert.equal(read, false);
});

Deno.test("resolveApiKey() allows no key only for a custom base_url", () => {
  const bare: LlmConfig = { provider_name: "openai" };
  const selection = { ...select(bare, "llm"), hostEntry: bare };
  assert.equal(
    resolveApiKey(selection, { baseUrl: "http://127.0.0.1:1", env: noEnv }),
    "",
  );
  assert.throws(
    () => resolveApiKey(selection, { baseUrl: undefined, env: noEnv }),
    skillError(/"openai" has no API key: .*OPENAI_API_KEY.* on its entry/),
  );
});

Deno.test("hostApiKey() prefers the entry's key, then its variable, then the usual one", () => {
  const env = (n: string) =>
    ({ MINE: "sk-mine", OPENAI_API_KEY: "sk-conv" })[n];
  assert.equal(hostApiKey("openai", HOST, env), "sk-host");
  assert.equal(
    hostApiKey("openai", {
      provider_name: "openai",
      provider_credentials: { api_key_env: "MINE" },
    }, env),
    "sk-mine",
  );
  assert.equal(hostApiKey("openai", undefined, env), "sk-conv");
  assert.equal(hostApiKey("anthropic", undefined, env), undefined);
  assert.throws(
    () =>
      hostApiKey("openai", {
        provider_name: "openai",
        provider_credentials: { api_key_env: "UNSET" },
      }, env),
    skillError(/environment variable "UNSET"/),
  );
});
