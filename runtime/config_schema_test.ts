import assert from "node:assert/strict";
import { validateConfig } from "./config_schema.ts";
import { ConfigError } from "./config_error.ts";

Deno.test("validateConfig() maps snake_case sections onto the camelCase config", () => {
  const config = validateConfig({
    builtin_skills: false,
    archived_skills: ["old"],
    sandbox: { memory_mb: 64, cache_dir: null },
    limits: { default_max_turns: 3 },
    toolkits: { filesystem: { root: "/data" } },
    llm: [{ provider_name: "openai", provider_config: { model: "m" } }],
  }, "f");
  assert.equal(config.builtinSkills, false);
  assert.deepEqual(config.archivedSkills, ["old"]);
  assert.equal(config.sandbox.memoryMb, 64);
  assert.equal(config.sandbox.cacheDir, null);
  assert.equal(config.sandbox.spareWorkers, 1);
  assert.equal(config.limits.defaultMaxTurns, 3);
  assert.equal(config.limits.maxTurns, 50);
  assert.deepEqual(config.toolkits, { filesystem: { root: "/data" } });
  assert.equal(config.llm[0]?.provider_name, "openai");
});

Deno.test("validateConfig() fails with the file and field path of each section's error", async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ sandbox: { memory_mb: 8 } }, /^f\.jsonc: sandbox\.memory_mb/],
    [
      { llm: [{ provider_name: "gemini" }] },
      /^f\.jsonc: llm\.0\.provider_name/,
    ],
    [{ policy: { permissions: 3 } }, /^f\.jsonc: /],
    [[], /^f\.jsonc: /],
  ];
  for (const [value, pattern] of cases) {
    await t.step(JSON.stringify(value), () => {
      assert.throws(
        () => validateConfig(value, "f.jsonc"),
        (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      );
    });
  }
});

Deno.test("validateConfig() gives each call its own default arrays", () => {
  const a = validateConfig(undefined, "f");
  a.skills.push("./mine");
  assert.deepEqual(validateConfig({}, "f").skills, ["./skills"]);
});

Deno.test("validateConfig() reads llm as the providers array or as an object with its rules", () => {
  const shorthand = validateConfig({
    llm: [{ provider_name: "openai", provider_config: { model: "m" } }],
  }, "f");
  assert.deepEqual(shorthand.llmRules, {
    maxResponseBytes: 1048576,
    maxToolCalls: 64,
    allowedHosts: [],
  });
  const full = validateConfig({
    llm: {
      providers: [{
        provider_name: "anthropic",
        provider_config: { model: "m" },
      }],
      max_response_bytes: 4096,
      max_tool_calls: 3,
      allowed_hosts: ["llm.example:8443"],
    },
  }, "f");
  assert.equal(full.llm[0]?.provider_name, "anthropic");
  assert.deepEqual(full.llmRules, {
    maxResponseBytes: 4096,
    maxToolCalls: 3,
    allowedHosts: ["llm.example:8443"],
  });
  assert.throws(
    () => validateConfig({ llm: { providers: [{ provider_name: "x" }] } }, "f"),
    /^ConfigError: f: llm\.providers\.0\.provider_name/,
  );
  assert.throws(
    () => validateConfig({ llm: { max_tool_calls: 0 } }, "f"),
    /llm/,
  );
});

Deno.test("validateConfig() takes console.admin_tokens among the tokens only, and never prints one", () => {
  const config = validateConfig({
    tokens: ["t-one", "t-two"],
    console: { admin_tokens: ["t-two"] },
  }, "f");
  assert.deepEqual(config.console, { adminTokens: ["t-two"] });
  assert.deepEqual(validateConfig({}, "f").console, { adminTokens: [] });
  assert.throws(
    () =>
      validateConfig({
        tokens: ["t-one"],
        console: { admin_tokens: ["t-one", "t-secret-stray"] },
      }, "f"),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        'f: console.admin_tokens.1: not one of "tokens" (an admin token must also be an accepted token)',
      );
      return true;
    },
  );
  assert.throws(
    () => validateConfig({ console: { admin: [] } }, "f"),
    /console/,
  );
});

Deno.test("validateConfig() reads listen.allowed_hosts and allowed_origins, and names a malformed one", () => {
  const config = validateConfig({
    listen: {
      allowed_hosts: ["proxy.example", "box.lan:8443", "[fd00::1]"],
      allowed_origins: ["https://app.example", "http://localhost:5173"],
    },
  }, "a.jsonc");
  assert.deepEqual(config.listen.allowedHosts, [
    "proxy.example",
    "box.lan:8443",
    "[fd00::1]",
  ]);
  assert.deepEqual(config.listen.allowedOrigins, [
    "https://app.example",
    "http://localhost:5173",
  ]);
  assert.deepEqual(validateConfig({}, "a.jsonc").listen.allowedHosts, []);
  for (const bad of ["a/b", "*.example.com", "user@box", "box:http"]) {
    assert.throws(
      () => validateConfig({ listen: { allowed_hosts: [bad] } }, "a.jsonc"),
      /listen\.allowed_hosts\.0: expected a host name/,
      bad,
    );
  }
  assert.throws(
    () =>
      validateConfig(
        { listen: { allowed_origins: ["app.example"] } },
        "a.jsonc",
      ),
    /listen\.allowed_origins\.0: expected an origin/,
  );
  assert.throws(
    () =>
      validateConfig(
        { listen: { allowed_origins: ["https://app.example/path"] } },
        "a.jsonc",
      ),
    /listen\.allowed_origins\.0/,
  );
});

Deno.test("validateConfig() refuses a duration longer than a timer can wait", async (t) => {
  // Deno fires a setTimeout longer than 2^31-1 ms after 1 ms: such a value
  // would close every handshake, idle stream or call at once.
  const cases: [unknown, RegExp][] = [
    [{ limits: { handshake_timeout_seconds: 3e6 } }, /handshake_timeout/],
    [{ limits: { sse_idle_seconds: 3e6 } }, /sse_idle_seconds/],
    [{ limits: { shutdown_timeout_seconds: 3e6 } }, /shutdown_timeout/],
    [{ sandbox: { process_wait_ms: 2 ** 31 } }, /process_wait_ms/],
    [{ egress: { timeout_seconds: 3e6 } }, /egress\.timeout_seconds/],
    [{ mcp: { retry_max_ms: 2 ** 31 } }, /mcp\.retry_max_ms/],
    [
      { mcp_servers: { a: { command: "x", start_timeout_ms: 2 ** 31 } } },
      /start_timeout_ms/,
    ],
  ];
  for (const [value, pattern] of cases) {
    await t.step(JSON.stringify(value), () => {
      assert.throws(
        () => validateConfig(value, "f.jsonc"),
        (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      );
    });
  }
  const longest = validateConfig({
    limits: { handshake_timeout_seconds: 2_147_483 },
    sandbox: { process_wait_ms: 2 ** 31 - 1 },
  }, "f");
  assert.equal(longest.limits.handshakeTimeoutSeconds, 2_147_483);
});

Deno.test("validateConfig() checks console.admin_tokens in work linear in the tokens", () => {
  // Each admin token was looked up with `tokens.includes`: n admin tokens
  // among n tokens compared n²/2 strings, 11 s for a 1 MiB file of them.
  // The work is counted as the elements an array search may compare (the
  // length of each array `includes` or `indexOf` is called on).
  const steps = (n: number) => {
    const tokens = Array.from({ length: n }, (_, i) => `token-${i}`);
    let count = 0;
    const { includes, indexOf } = Array.prototype;
    Array.prototype.includes = function (this: unknown[], ...args) {
      count += this.length;
      return includes.apply(this, args as [unknown, number?]);
    };
    Array.prototype.indexOf = function (this: unknown[], ...args) {
      count += this.length;
      return indexOf.apply(this, args as [unknown, number?]);
    };
    try {
      const config = validateConfig({
        tokens,
        console: { admin_tokens: tokens.toReversed() },
      }, "f");
      assert.equal(config.console?.adminTokens.length, n);
    } finally {
      Array.prototype.includes = includes;
      Array.prototype.indexOf = indexOf;
    }
    return count;
  };
  for (const n of [500, 2000]) {
    const count = steps(n);
    assert.ok(count <= 20 * n, `${count} steps for ${n} tokens`);
  }
});

Deno.test("validateConfig() names the first problems of many, and counts the rest", () => {
  // Every wrong element of a long array is a problem of its own: a million
  // of them made a 73 MB message, seconds to build and no use to read.
  for (const n of [1_000, 4_000]) {
    assert.throws(
      () => validateConfig({ archived_skills: Array(n).fill(3) }, "f"),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^f: archived_skills\.0: /);
        assert.ok(
          error.message.endsWith(`; and ${n - 10} more`),
          error.message.slice(-40),
        );
        assert.equal(error.message.split("; ").length, 11);
        return true;
      },
    );
  }
  assert.throws(
    () => validateConfig({ tokens: [1], sandbox: { memory_mb: 8 } }, "f"),
    /^ConfigError: f: tokens\.0: .*; sandbox\.memory_mb: [^;]*$/,
  );
});
