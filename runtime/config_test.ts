import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import { parseConfig } from "./config.ts";
import { resolveConfig } from "./config_overrides.ts";

Deno.test("parseConfig() applies defaults and keeps later sections loose", () => {
  const config = parseConfig(`{
    // operators write comments
    "limits": { "max_parallel": 8, },
    "toolkits": { "web": { "net": ["example.com"] } },
  }`);
  assert.equal(config.limits.maxParallel, 8);
  assert.equal(config.limits.maxMessageBytes, 4 * 1024 * 1024);
  assert.equal(config.listen.port, 8787);
  assert.deepEqual(config.skills, ["./skills"]);
  assert.deepEqual(config.toolkits, { web: { net: ["example.com"] } });
});

Deno.test("parseConfig() reports line and column of a syntax error", () => {
  assert.throws(
    () => parseConfig('{\n  "listen": {\n    "port": ,\n  }\n}', "x.jsonc"),
    (error: Error) =>
      error instanceof ConfigError && /^x\.jsonc:3:13: /.test(error.message),
  );
});

Deno.test("parseConfig() names the field path of a schema error", async (t) => {
  for (
    const [text, path] of [
      ['{"listen":{"port":70000}}', "listen.port"],
      ['{"tokens":[1]}', "tokens.0"],
      ['{"limits":{"max_parallell":3}}', "limits"],
      ['{"lisen":{}}', "(root)"],
    ]
  ) {
    await t.step(path!, () => {
      assert.throws(() => parseConfig(text!), (error: Error) => {
        assert.ok(error.message.includes(path!), error.message);
        return true;
      });
    });
  }
});

Deno.test("resolveConfig() ranks flags over environment over file", () => {
  const file = parseConfig('{"listen":{"hostname":"0.0.0.0","port":1}}');
  const both = resolveConfig(file, {
    env: { SKILLBOX_PORT: "2", SKILLBOX_TOKENS: "a, b" },
    flags: { port: 3 },
  });
  assert.equal(both.config.listen.port, 3);
  assert.equal(both.config.listen.hostname, "0.0.0.0");
  assert.deepEqual(both.config.tokens, ["a", "b"]);
  assert.deepEqual(both.overrides, {
    "listen.port": "--port",
    tokens: "SKILLBOX_TOKENS",
  });
  assert.equal(file.listen.port, 1, "the input is not mutated");
  assert.throws(
    () => resolveConfig(file, { env: { SKILLBOX_PORT: "x" } }),
    /SKILLBOX_PORT/,
  );
});

Deno.test("parseConfig() reads sandbox.confinement and the egress section", () => {
  const defaults = parseConfig("{}");
  assert.equal(defaults.sandbox.confinement, "auto");
  assert.deepEqual(defaults.egress.secrets, []);
  assert.equal(defaults.egress.maxParallelHost, 32);
  assert.equal(
    parseConfig('{ "egress": { "max_parallel_host": 3 } }').egress
      .maxParallelHost,
    3,
  );
  assert.throws(
    () => parseConfig('{ "egress": { "max_parallel_host": 0 } }'),
    /egress\.max_parallel_host/,
  );
  const config = parseConfig(`{
    "sandbox": { "confinement": "required" },
    "egress": {
      "allow_private_hosts": ["intranet.example"],
      "secrets": [{ "host": "api.example.com", "header": "Authorization", "value_env": "API_TOKEN" }]
    }
  }`);
  assert.equal(config.sandbox.confinement, "required");
  assert.deepEqual(config.egress.allowPrivateHosts, ["intranet.example"]);
  assert.deepEqual(config.egress.secrets, [{
    host: "api.example.com",
    header: "Authorization",
    valueEnv: "API_TOKEN",
    toolkits: [],
  }]);
  assert.throws(
    () => parseConfig('{ "sandbox": { "confinement": "maybe" } }'),
    /sandbox\.confinement/,
  );
  assert.throws(
    () =>
      parseConfig(
        '{ "egress": { "secrets": [{ "host": "a", "header": "X: y", "value_env": "V" }] } }',
      ),
    /egress\.secrets\.0\.header/,
  );
  for (const host of ["http://a", "HTTPS://a:8443/", "a:80", "[::1]:80"]) {
    const { egress } = parseConfig(JSON.stringify({
      egress: { secrets: [{ host, header: "X", value_env: "V" }] },
    }));
    assert.equal(egress.secrets[0]?.host, host);
  }
  for (const host of ["https://a/v1", "ftp://a", "a b", ""]) {
    assert.throws(
      () =>
        parseConfig(JSON.stringify({
          egress: { secrets: [{ host, header: "X", value_env: "V" }] },
        })),
      /egress\.secrets\.0\.host/,
      host,
    );
  }
});

Deno.test("parseConfig() reads an MCP server's read and write lists", () => {
  const config = parseConfig(`{ "mcp_servers": {
    "fs": { "command": "node", "args": ["/x/index.js", "/srv/data"], "write": ["/srv/data"] }
  } }`);
  const fs = config.mcpServers?.fs as { read?: string[]; write?: string[] };
  assert.deepEqual(fs.read, []);
  assert.deepEqual(fs.write, ["/srv/data"]);
  assert.throws(
    () =>
      parseConfig(
        '{ "mcp_servers": { "fs": { "command": "x", "write": "/srv" } } }',
      ),
    /mcp_servers\.fs/,
  );
});
