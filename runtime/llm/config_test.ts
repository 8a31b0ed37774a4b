import assert from "node:assert/strict";
import {
  checkLlmConfig,
  hostApiKey,
  hostDefault,
  type LlmConfig,
  type LlmSelection,
  providerConfigOf,
  redactLlmConfig,
  redactUrl,
  resolveApiKey,
  resolveLlmConfig,
  sameBaseUrl,
  selectLlmConfig,
} from "./config.ts";
import { createProvider } from "./provider.ts";
import { SchemaViolationError, SkillboxError } from "../../protocol/errors.ts";

const noEnv = () => undefined;

const HOST: LlmConfig[] = [
  {
    provider_name: "openai",
    provider_credentials: { api_key_env: "HOST_OPENAI_KEY" },
    provider_config: {
      base_url: "http://127.0.0.1:11434/v1",
      model: "llama3.2",
      max_tokens: 500,
    },
    is_default: true,
  },
  {
    provider_name: "anthropic",
    provider_credentials: { api_key: "sk-ant-host" },
    provider_config: { model: "claude-haiku" },
  },
];
const env = (name: string) =>
  name === "HOST_OPENAI_KEY" ? "sk-openai-host" : undefined;

function skillError(pattern: RegExp) {
  return (e: unknown) =>
    e instanceof SkillboxError && e.code === "skill_error" &&
    pattern.test(e.message);
}

Deno.test("resolveLlmConfig() picks override, then skill, then host default", async (t) => {
  await t.step("host default, key read from api_key_env", () => {
    const r = resolveLlmConfig(HOST, { env });
    assert.equal(r.source, "llm");
    assert.equal(r.provider, "openai");
    assert.equal(r.apiKey, "sk-openai-host");
    assert.equal(r.baseUrl, "http://127.0.0.1:11434/v1");
    assert.equal(r.model, "llama3.2");
    assert.equal(r.maxTokens, 500);
    assert.equal(r.maxRetries, 0);
  });
  await t.step("the skill's llm_config beats the host default", () => {
    const r = resolveLlmConfig(HOST, {
      env,
      skill: { provider_name: "anthropic" },
    });
    assert.equal(r.source, "llm_config");
    assert.equal(r.provider, "anthropic");
    assert.equal(r.apiKey, "sk-ant-host");
    assert.equal(r.model, "claude-haiku");
  });
  await t.step("the call's llm_override beats both", () => {
    const r = resolveLlmConfig(HOST, {
      env,
      skill: { provider_name: "anthropic" },
      override: {
        provider_name: "openai",
        provider_config: { model: "qwen2.5", temperature: 0 },
      },
    });
    assert.equal(r.source, "llm_override");
    assert.equal(r.model, "qwen2.5");
    assert.equal(r.temperature, 0);
    // Borrowed key and the host's endpoint and settings for that provider.
    assert.equal(r.apiKey, "sk-openai-host");
    assert.equal(r.baseUrl, "http://127.0.0.1:11434/v1");
    assert.equal(r.maxTokens, 500);
  });
  await t.step("the only entry is the default without is_default", () => {
    const r = resolveLlmConfig([{ ...HOST[1]!, is_default: false }]);
    assert.equal(r.provider, "anthropic");
  });
  await t.step("provider_config false (the Python SDK default) is {}", () => {
    const r = resolveLlmConfig(HOST, {
      env,
      override: { provider_name: "anthropic", provider_config: false },
    });
    assert.equal(r.model, "claude-haiku");
  });
});

Deno.test("resolveLlmConfig() names what to set when nothing is configured", () => {
  assert.throws(
    () => resolveLlmConfig([], { env: noEnv }),
    skillError(
      /^No LLM provider configured: add an entry to "llm" in skillbox\.jsonc/,
    ),
  );
  assert.throws(
    () =>
      resolveLlmConfig([{ provider_name: "openai" }, {
        provider_name: "anthropic",
      }]),
    skillError(/none sets "is_default": true/),
  );
});

Deno.test("resolveLlmConfig() says which key is missing", async (t) => {
  await t.step("api_key_env names an unset variable", () => {
    assert.throws(
      () => resolveLlmConfig(HOST, { env: noEnv }),
      skillError(/environment variable "HOST_OPENAI_KEY".*is not set/),
    );
  });
  await t.step("no credentials and no conventional variable", () => {
    assert.throws(
      () =>
        resolveLlmConfig([{
          provider_name: "anthropic",
          provider_config: { model: "m" },
        }], { env: noEnv }),
      skillError(/"anthropic" has no API key: .*ANTHROPIC_API_KEY/),
    );
  });
  await t.step("the conventional variable is the fallback", () => {
    const r = resolveLlmConfig([{
      provider_name: "anthropic",
      provider_config: { model: "m" },
    }], { env: (n) => (n === "ANTHROPIC_API_KEY" ? "sk-conv" : undefined) });
    assert.equal(r.apiKey, "sk-conv");
  });
  await t.step("a keyless local server is fine", () => {
    const r = resolveLlmConfig([{
      provider_name: "openai",
      provider_config: { base_url: "http://127.0.0.1:8080/v1", model: "m" },
    }], { env: noEnv });
    assert.equal(r.apiKey, "");
    assert.equal(createProvider(r).model, "m");
  });
  await t.step("no model", () => {
    assert.throws(
      () =>
        resolveLlmConfig([{
          provider_name: "openai",
          provider_credentials: { api_key: "k" },
        }]),
      skillError(/"openai" has no model: set "provider_config"/),
    );
  });
});

Deno.test("resolveLlmConfig() keeps host credentials from going elsewhere", async (t) => {
  await t.step("a borrowed key never goes to another base_url", () => {
    assert.throws(
      () =>
        resolveLlmConfig(HOST, {
          env,
          override: {
            provider_name: "openai",
            provider_config: { base_url: "http://evil.test/v1" },
          },
        }),
      skillError(
        /^Cannot send the host's "openai" credentials to base_url "http:\/\/evil\.test\/v1" from llm_override/,
      ),
    );
    // The conventional variable is a host credential too: with no entry
    // for the provider, it is not lent at all, to any endpoint.
    const unlent = resolveLlmConfig([], {
      env: () => "sk-env",
      skill: {
        provider_name: "anthropic",
        provider_config: { base_url: "http://evil.test", model: "m" },
      },
    });
    assert.equal(unlent.apiKey, "");
    assert.throws(
      () =>
        resolveLlmConfig([], {
          env: () => "sk-env",
          override: {
            provider_name: "openai",
            provider_config: { model: "m" },
          },
        }),
      skillError(/"openai" has no API key/),
    );
  });
  await t.step("the same base_url (trailing slash aside) is fine", () => {
    const r = resolveLlmConfig(HOST, {
      env,
      override: {
        provider_name: "openai",
        provider_config: { base_url: "http://127.0.0.1:11434/v1/" },
      },
    });
    assert.equal(r.apiKey, "sk-openai-host");
  });
  await t.step("a caller's own api_key may go anywhere", () => {
    const r = resolveLlmConfig(HOST, {
      env,
      override: {
        provider_name: "openai",
        provider_credentials: { api_key: "sk-caller" },
        provider_config: { base_url: "https://openrouter.test/api/v1" },
      },
    });
    assert.equal(r.apiKey, "sk-caller");
    assert.equal(r.baseUrl, "https://openrouter.test/api/v1");
  });
  await t.step("only skillbox.jsonc may name environment variables", () => {
    for (const where of ["override", "skill"] as const) {
      assert.throws(
        () =>
          resolveLlmConfig(HOST, {
            env: () => "leaked",
            [where]: {
              provider_name: "openai",
              provider_credentials: { api_key_env: "AWS_SECRET_ACCESS_KEY" },
            },
          }),
        skillError(/Cannot use "api_key_env" in llm_(override|config)/),
      );
    }
  });
});

Deno.test("checkLlmConfig() names the faulty field", () => {
  const cases: [unknown, RegExp][] = [
    [
      { provider_name: "gemini" },
      /^x\.provider_name: expected one of "openai", "anthropic"/,
    ],
    [
      { provider_name: "openai", provider_credentials: { api_key: 1 } },
      /^x\.provider_credentials\.api_key: expected a string/,
    ],
    [
      { provider_name: "openai", provider_config: { base_url: "nope" } },
      /^x\.provider_config\.base_url/,
    ],
    [
      { provider_name: "openai", provider_config: { max_tokens: 1.5 } },
      /^x\.provider_config\.max_tokens/,
    ],
    [
      { provider_name: "openai", provider_config: { temperature: 3 } },
      /^x\.provider_config\.temperature/,
    ],
    ["openai", /^x: expected an object/],
  ];
  for (const [value, pattern] of cases) {
    assert.throws(
      () => checkLlmConfig(value, "x"),
      (e: unknown) =>
        e instanceof SchemaViolationError && pattern.test(e.message),
    );
  }
  assert.throws(
    () => resolveLlmConfig(HOST, { env, override: { provider_name: "x" } }),
    /^SchemaViolationError: llm_override\.provider_name/,
  );
});

Deno.test("redactLlmConfig() removes every credential", () => {
  const config: LlmConfig = {
    provider_name: "openai",
    provider_credentials: { api_key: "sk-secret-1", api_key_env: "SECRET_VAR" },
    provider_config: {
      base_url: "https://user:sk-secret-2@proxy.test/v1?api_key=sk-secret-3#x",
      model: "gpt-4o-mini",
      max_tokens: 100,
      headers: { authorization: "Bearer sk-secret-4" },
    },
    is_default: true,
  };
  const safe = redactLlmConfig(config);
  assert.deepEqual(safe, {
    provider_name: "openai",
    provider_credentials: {},
    provider_config: {
      base_url: "https://proxy.test/v1",
      model: "gpt-4o-mini",
      max_tokens: 100,
    },
    is_default: true,
  });
  assert.ok(!/secret|SECRET/.test(JSON.stringify(safe)));
  // The input is left alone: the host still needs it.
  assert.equal(config.provider_credentials?.api_key, "sk-secret-1");
  assert.deepEqual(
    redactLlmConfig({ provider_name: "anthropic", provider_config: false }),
    {
      provider_name: "anthropic",
      provider_credentials: {},
      provider_config: {},
      is_default: false,
    },
  );
});

Deno.test("resolveLlmConfig() tells an operator's endpoint from a chosen one, and createProvider() checks the chosen one", () => {
  const host = [{
    provider_name: "openai",
    provider_credentials: { api_key: "sk-host" },
    provider_config: { base_url: "http://127.0.0.1:11434/v1", model: "m" },
    is_default: true,
  }];
  const mine = resolveLlmConfig(host);
  assert.equal(mine.operatorEndpoint, true);
  // A client that only changes the model stays on the operator's endpoint.
  const model = resolveLlmConfig(host, {
    override: { provider_name: "openai", provider_config: { model: "n" } },
  });
  assert.equal(model.operatorEndpoint, true);
  createProvider(model);
  const chosen = resolveLlmConfig(host, {
    skill: {
      provider_name: "openai",
      provider_credentials: { api_key: "sk-skill" },
      provider_config: { base_url: "http://127.0.0.1:8080/v1" },
    },
  });
  assert.equal(chosen.operatorEndpoint, false);
  assert.throws(
    () => createProvider(chosen),
    /Cannot use LLM endpoint "http:\/\/127\.0\.0\.1:8080\/v1": its host is not in llm\.allowed_hosts/,
  );
  const rules = {
    maxResponseBytes: 1024,
    maxToolCalls: 1,
    allowedHosts: ["127.0.0.1:8080"],
  };
  assert.equal(createProvider(chosen, { rules }).model, "m");
  // No base_url and no host entry for the provider: the official API, chosen.
  const official = resolveLlmConfig(host, {
    override: {
      provider_name: "anthropic",
      provider_credentials: { api_key: "sk-own" },
      provider_config: { model: "c" },
    },
  });
  assert.equal(official.operatorEndpoint, false);
  assert.throws(
    () => createProvider(official),
    /"https:\/\/api\.anthropic\.com": its host/,
  );
});

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
    checkLlmConfig(
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

const SELECTION_HOST: LlmConfig[] = [
  { provider_name: "openai", provider_config: { model: "a" } },
  {
    provider_name: "openai",
    provider_config: { model: "b" },
    is_default: true,
  },
  { provider_name: "anthropic", provider_config: { model: "c" } },
];

Deno.test("selectLlmConfig() prefers override, then skill, then host", () => {
  const override: LlmConfig = { provider_name: "anthropic" };
  const skill: LlmConfig = { provider_name: "openai" };
  assert.equal(
    selectLlmConfig(SELECTION_HOST, { override, skill }).chosen,
    override,
  );
  assert.equal(selectLlmConfig(SELECTION_HOST, { skill }).chosen, skill);
  const fromHost = selectLlmConfig(SELECTION_HOST, {});
  assert.equal(fromHost.source, "llm");
  assert.equal(fromHost.chosen, SELECTION_HOST[1]);
  assert.equal(fromHost.hostEntry, SELECTION_HOST[1]);
});

Deno.test("selectLlmConfig() backs a caller's provider with the host's default entry for it", () => {
  const picked = selectLlmConfig(SELECTION_HOST, {
    override: { provider_name: "openai" },
  });
  assert.equal(picked.source, "llm_override");
  assert.equal(picked.provider, "openai");
  assert.equal(picked.hostEntry, SELECTION_HOST[1]); // is_default beats first listed
  const none = selectLlmConfig([SELECTION_HOST[2]!], {
    skill: { provider_name: "openai" },
  });
  assert.equal(none.hostEntry, undefined);
});

Deno.test("hostDefault() refuses to guess between several entries", () => {
  assert.throws(
    () => hostDefault([SELECTION_HOST[0]!, SELECTION_HOST[2]!]),
    (e: unknown) =>
      e instanceof SkillboxError && e.code === "skill_error" &&
      /2 entries and none sets "is_default"/.test(e.message),
  );
  assert.equal(hostDefault(SELECTION_HOST), SELECTION_HOST[1]);
});

const KEY_HOST: LlmConfig = {
  provider_name: "openai",
  provider_credentials: { api_key: "sk-host" },
  provider_config: { base_url: "http://127.0.0.1:9/v1" },
};

function select(chosen: LlmConfig, source: LlmSelection["source"]) {
  return {
    chosen,
    source,
    provider: "openai" as const,
    hostEntry: source === "llm" ? chosen : KEY_HOST,
  };
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
  assert.equal(hostApiKey("openai", KEY_HOST, env), "sk-host");
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

Deno.test("sameBaseUrl() compares endpoints, unset meaning the official API", () => {
  assert.ok(sameBaseUrl("anthropic", undefined, "https://api.anthropic.com/"));
  assert.ok(sameBaseUrl("openai", "http://h.test/v1//", "http://h.test/v1"));
  assert.ok(!sameBaseUrl("openai", undefined, "https://api.anthropic.com"));
  assert.ok(!sameBaseUrl("openai", "http://h.test/v1", "http://h.test/v2"));
  // A lookalike host is another endpoint.
  assert.ok(
    !sameBaseUrl("openai", "https://api.openai.com.evil.test/v1", undefined),
  );
});

Deno.test("redactUrl() drops userinfo, query and fragment, keeps the path", () => {
  assert.equal(
    redactUrl("https://user:sk-1@proxy.test/v1/?api_key=sk-2#sk-3"),
    "https://proxy.test/v1/",
  );
  assert.equal(redactUrl("https://x.test/"), "https://x.test");
  assert.equal(redactUrl("::"), "");
});

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
