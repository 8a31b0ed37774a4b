import assert from "node:assert/strict";
import { z } from "zod";
import {
  allServerSecrets,
  basicAuthOf,
  publicSchema,
  REDACTED,
  scrubSecrets,
  scrubText,
  secretValues,
  serverSecrets,
} from "./secrets.ts";
import { validateValue } from "../schema/validator.ts";

Deno.test("secretValues() finds zod .meta({ secret: true }) fields in the JSON Schema", () => {
  const schema = z.toJSONSchema(z.object({
    base_url: z.string(),
    token: z.string().meta({ secret: true }),
    auth: z.object({ password: z.string().meta({ secret: true }) }).optional(),
    headers: z.record(z.string(), z.string().meta({ secret: true })),
  })) as Record<string, unknown>;
  const config = {
    base_url: "https://api.example",
    token: "tok-1234",
    auth: { password: "pw-5678" },
    headers: { a: "hdr-9012" },
  };
  assert.deepEqual(secretValues(schema, config).sort(), [
    "hdr-9012",
    "pw-5678",
    "tok-1234",
  ]);
});

Deno.test("secretValues() follows $ref, unions and arrays", () => {
  const schema = {
    type: "object",
    properties: {
      creds: { $ref: "#/$defs/creds" },
      keys: { type: "array", items: { type: "string", secret: true } },
      either: { anyOf: [{ type: "null" }, { type: "string", secret: true }] },
    },
    $defs: { creds: { type: "object", properties: { key: { secret: true } } } },
  };
  const config = {
    creds: { key: "creds-key" },
    keys: ["key-1"],
    either: "or-2",
  };
  assert.deepEqual(secretValues(schema, config).sort(), [
    "creds-key",
    "key-1",
    "or-2",
  ]);
});

Deno.test("secretValues() covers nested secrets", () => {
  const schema = {
    type: "object",
    properties: {
      token: { type: "string", secret: true },
      headers: { type: "object", additionalProperties: { secret: true } },
      pin: { type: "number", secret: true },
    },
  };
  const config = {
    token: "ghp_abcdef",
    headers: { Authorization: "Bearer xyz123" },
    pin: 4242,
    root: "/tmp",
  };
  assert.deepEqual(secretValues(schema, config), [
    "Bearer xyz123",
    "ghp_abcdef",
    "4242",
  ]);
});

Deno.test("scrubSecrets() replaces secrets anywhere and returns clean values as they are", () => {
  const clean = { a: ["x"], b: { c: 1 } };
  assert.equal(scrubSecrets(clean, ["ghp_abc"]), clean);
  assert.deepEqual(
    scrubSecrets(
      { list: ["ok", "token=ghp_abc;"], ["ghp_abc"]: true, n: null },
      ["ghp_abc"],
    ),
    { list: ["ok", `token=${REDACTED};`], [REDACTED]: true, n: null },
  );
  assert.equal(scrubSecrets("on and on", ["on"]), "on and on", "too short");
});

Deno.test("publicSchema() strips defaults and examples of secret fields only", () => {
  const schema = {
    type: "object",
    properties: {
      token: { type: "string", secret: true, default: "abcd", examples: ["x"] },
      root: { type: "string", default: "/tmp" },
    },
  };
  assert.deepEqual(publicSchema(schema), {
    type: "object",
    properties: {
      token: { type: "string", secret: true },
      root: { type: "string", default: "/tmp" },
    },
  });
});

Deno.test("serverSecrets() takes env and header values, and the credential after a scheme", () => {
  assert.deepEqual(
    serverSecrets({
      env: { A: "alpha-secret", B: "beta" },
      headers: { authorization: "Basic dXNlcjpwYXNz", "x-key": "k-1234" },
    }),
    ["Basic dXNlcjpwYXNz", "alpha-secret", "dXNlcjpwYXNz", "k-1234", "beta"],
  );
});

Deno.test("serverSecrets() leaves out values too short or too common to be credentials", () => {
  assert.deepEqual(
    serverSecrets({
      env: { A: "1", B: "on", C: "true", D: "False", E: "none", F: "  " },
      headers: { "x-a": "yes", "x-b": "Bearer no" },
    }),
    ["Bearer no"],
  );
});

Deno.test("serverSecrets() takes a URL's user name, password and query values, as written and decoded", () => {
  assert.deepEqual(
    serverSecrets({
      url:
        "https://ops-user:p%40ss-word@mcp.example:8443/mcp?key=k3y%2Bv&api_key=a+b+c+d&v=2&flag",
    }),
    [
      // What the host sends for them (Basic auth), whole and alone.
      "Basic b3BzLXVzZXI6cEBzcy13b3Jk",
      "b3BzLXVzZXI6cEBzcy13b3Jk",
      "p%40ss-word",
      "p@ss-word",
      "ops-user",
      "k3y%2Bv",
      "a+b+c+d",
      "a b c d",
      "k3y+v",
    ],
  );
  // Host, port and path are no secrets; a URL that does not parse has none.
  assert.deepEqual(serverSecrets({ url: "https://mcp.example:8443/mcp" }), []);
  assert.deepEqual(serverSecrets({ url: "not a url" }), []);
});

Deno.test("serverSecrets() takes the values of secret-named args only", () => {
  assert.deepEqual(
    serverSecrets({
      args: [
        "run",
        "--allow-env=API_KEY",
        "/srv/node_modules/@scope/server/index.js",
        "--api-key",
        "sk-test-123456",
        "--token=tok-abcdef",
        "API_SECRET=s3cr3t-value",
        "--client-credential",
        "cred-42-x",
        "--password",
        "--verbose",
        "--port",
        "8080",
        "/srv/data",
      ],
    }),
    ["sk-test-123456", "s3cr3t-value", "tok-abcdef", "cred-42-x"],
  );
});

Deno.test("scrubSecrets() replaces a server's secrets anywhere in a value, keys included", () => {
  const secrets = serverSecrets({ env: { T: "tok-abcdef" } });
  assert.deepEqual(
    scrubSecrets({ "tok-abcdef": ["saw tok-abcdef"], n: 1 }, secrets),
    { "[redacted]": ["saw [redacted]"], n: 1 },
  );
  assert.equal(scrubSecrets("untouched", []), "untouched");
  assert.deepEqual(allServerSecrets(undefined), []);
});

Deno.test("scrubText() and scrubSecrets() replace a secret whole when a shorter one is inside it, in any order", () => {
  // Shorter first, the shorter one used to be replaced first and leave
  // most of the longer one showing ("[redacted]-1234-extra").
  const secrets = ["pass", "pass-1234-extra"];
  assert.equal(scrubText("x pass-1234-extra y", secrets), "x [redacted] y");
  assert.deepEqual(scrubSecrets({ "pass-1234-extra": "a pass" }, secrets), {
    "[redacted]": "a [redacted]",
  });
});

Deno.test("scrubText() replaces a secret cut at either end of a string, from 4 characters on", () => {
  const secret = "tok-7Qm2xV9pL4sK";
  // The start of a secret left at the end by a cut, at every length.
  for (let n = 4; n < secret.length; n++) {
    assert.equal(
      scrubText(`body ${secret.slice(0, n)}`, [secret]),
      `body ${REDACTED}`,
      `${n} characters`,
    );
    // And its end left at the start, when a tail was kept.
    assert.equal(
      scrubText(`${secret.slice(-n)} tail`, [secret]),
      `${REDACTED} tail`,
      `${n} characters`,
    );
  }
  // A string that is all cut secret, at both ends, or with a whole one.
  assert.equal(scrubText("7Qm2xV", [secret]), REDACTED);
  assert.equal(
    scrubText(`L4sK ${secret} tok-7`, [secret]),
    `${REDACTED} ${REDACTED} ${REDACTED}`,
  );
  // The longest cut of any secret goes; three characters stay.
  assert.equal(
    scrubText("x tok-7Qm2", ["tok-7Q-other", secret]),
    `x ${REDACTED}`,
  );
  assert.equal(scrubText("x tok", [secret]), "x tok");
  assert.equal(scrubText("4sK x", [secret]), "4sK x");
  // Inside a string a piece is not a cut: it stays.
  assert.equal(scrubText("a tok-7Qm b", [secret]), "a tok-7Qm b");
  // Nor is a secret under 4 characters scrubbed at all.
  assert.equal(scrubText("abc ab", ["abc"]), "abc ab");
});

Deno.test("scrubSecrets() scrubs a cut secret in every string of a value", () => {
  const secret = "Bearer tok-7Qm2xV9pL4sK";
  assert.deepEqual(
    scrubSecrets(
      { body: "x".repeat(50) + secret.slice(0, 12), list: ["sK ok", "pL4sK"] },
      [secret],
    ),
    { body: "x".repeat(50) + REDACTED, list: ["sK ok", REDACTED] },
  );
  // A key is never cut: one that ends like the secret starts stays.
  assert.deepEqual(
    scrubSecrets({ "x-tenant": "v" }, ["tenant-secret-51be20"]),
    { "x-tenant": "v" },
  );
});

Deno.test("secretValues() walks a schema whose $refs branch at every level once per value", () => {
  // Walked by paths, four references to the whole schema branch 4^n ways;
  // walked with the configuration, each schema node once per value.
  const loop = {
    type: "object",
    properties: {
      a: { $ref: "#" },
      b: { $ref: "#" },
      c: { $ref: "#" },
      d: { $ref: "#" },
      token: { type: "string", secret: true },
    },
  };
  let config: Record<string, unknown> = { token: "deep-loop-secret" };
  for (let i = 0; i < 40; i++) config = { a: config, d: { b: {} } };
  assert.deepEqual(secretValues(loop, config), ["deep-loop-secret"]);
});

Deno.test("secretValues() finds secrets under patternProperties, tuples and if/then/else", () => {
  const schema = {
    type: "object",
    properties: {
      keys: {
        type: "object",
        patternProperties: { "^k_": { type: "string", secret: true } },
      },
      pair: {
        type: "array",
        prefixItems: [{ type: "string" }, { type: "string", secret: true }],
      },
      old_pair: {
        type: "array",
        items: [{ type: "string", secret: true }],
      },
      auth: {
        type: "object",
        if: { properties: { kind: { const: "token" } } },
        then: { properties: { token: { type: "string", secret: true } } },
        else: { properties: { password: { type: "string", secret: true } } },
        dependentSchemas: {
          user: { properties: { pin: { type: "string", secret: true } } },
        },
      },
    },
  };
  const config = {
    keys: { k_one: "key-one-secret" },
    pair: ["user", "pair-secret"],
    old_pair: ["old-pair-secret"],
    auth: {
      kind: "token",
      token: "token-secret",
      user: "u",
      pin: "pin-secret",
    },
  };
  assert.deepEqual(secretValues(schema, config).sort(), [
    "key-one-secret",
    "old-pair-secret",
    "pair-secret",
    "pin-secret",
    "token-secret",
  ]);
});

Deno.test("serverSecrets() takes the credentials of a URL and a header passed as args", () => {
  const found = serverSecrets({
    args: [
      "mcp-remote",
      "https://ops-user:pw-12345@remote.example/mcp?api_key=k-5678",
      "--url=https://remote.example/sse?sig=s-9012",
      "--header",
      "Authorization: Bearer tok-3456",
      "X-Trace:on-7890",
      "/srv/index.js",
    ],
  });
  for (
    const value of [
      "ops-user",
      "pw-12345",
      "k-5678",
      "s-9012",
      "Bearer tok-3456",
      "tok-3456",
    ]
  ) assert.ok(found.includes(value), value);
  // Paths, hosts, and headers not named as credentials stay readable.
  for (
    const value of ["remote.example", "/srv/index.js", "on-7890", "mcp-remote"]
  ) assert.ok(!found.some((s) => s.includes(value)), value);
});

Deno.test("secretValues() finds every $ref the validator follows: escapes, anchors, ids", () => {
  const schema = {
    $id: "https://example.test/config.json",
    type: "object",
    properties: {
      spaced: { $ref: "#/$defs/api%20key" },
      slashed: { $ref: "#/$defs/a~1b" },
      anchored: { $ref: "#pin" },
      by_id: { $ref: "password.json" },
    },
    $defs: {
      "api key": { type: "string", secret: true },
      "a/b": { type: "string", secret: true },
      pin: { $anchor: "pin", type: "string", secret: true },
      pw: { $id: "password.json", type: "string", secret: true },
    },
  };
  // Each reference is one the validator resolves: the configuration
  // below is checked against all four definitions.
  const config = {
    spaced: "key-secret-1",
    slashed: "slash-secret-2",
    anchored: "anchor-secret-3",
    by_id: "id-secret-4",
  };
  assert.equal(validateValue(schema, config).valid, true);
  assert.equal(validateValue(schema, { ...config, by_id: 4 }).valid, false);
  assert.equal(validateValue(schema, { ...config, spaced: 1 }).valid, false);
  assert.deepEqual(
    secretValues(schema, config).sort(),
    Object.values(config).sort(),
  );
});

Deno.test("secretValues() still reads a schema the validator cannot compile", () => {
  // Two nodes claim one URI: cfworker refuses to index the schema, so no
  // configuration is ever accepted under it; its toolkit still loads.
  const schema = {
    type: "object",
    properties: {
      a: { $id: "https://example.test/same", type: "string", secret: true },
      b: { $id: "https://example.test/same", type: "string" },
      c: { $ref: "#/properties/a" },
    },
  };
  assert.throws(() => validateValue(schema, {}), /Cannot compile schema/);
  assert.deepEqual(secretValues(schema, { a: "a-secret", b: "plain" }), [
    "a-secret",
  ]);
});

Deno.test("secretValues() finds secrets under every keyword the validator applies to members", () => {
  // Each of these keywords makes the validator check a value against a
  // schema that says `secret: true`: a configuration it accepts must not
  // show that value anywhere.
  const schema = {
    type: "object",
    properties: {
      extra: {
        type: "object",
        properties: { region: { type: "string" } },
        unevaluatedProperties: { type: "string", secret: true },
      },
      rest: {
        type: "array",
        items: [{ type: "string" }],
        additionalItems: { type: "string", secret: true },
      },
      tail: {
        type: "array",
        prefixItems: [{ type: "string" }],
        unevaluatedItems: { type: "string", secret: true },
      },
      some: {
        type: "array",
        contains: { type: "string", secret: true },
      },
      auth: {
        type: "object",
        dependencies: {
          user: { properties: { pin: { type: "string", secret: true } } },
          region: ["user"],
        },
      },
    },
  };
  const config = {
    extra: { region: "eu", api_key: "extra-key-secret" },
    rest: ["first", "rest-secret"],
    tail: ["first", "tail-secret"],
    some: ["some-secret"],
    auth: { user: "u", pin: "pin-secret" },
  };
  // The validator accepts it, so these values reach the toolkit's tools.
  assert.equal(validateValue(schema, config).valid, true);
  const values = secretValues(schema, config);
  for (
    const secret of [
      "extra-key-secret",
      "rest-secret",
      "tail-secret",
      "some-secret",
      "pin-secret",
    ]
  ) {
    assert.ok(values.includes(secret), secret);
    assert.doesNotMatch(
      JSON.stringify(scrubSecrets(config, values)),
      new RegExp(secret),
    );
  }
});

Deno.test("secretValues() finds a secret however deep a recursive schema nests it", () => {
  const tree = {
    type: "object",
    properties: {
      child: { $ref: "#" },
      token: { type: "string", secret: true },
    },
  };
  let config: Record<string, unknown> = { token: "deep-secret-40" };
  for (let i = 0; i < 40; i++) config = { child: config };
  assert.deepEqual(secretValues(tree, config), ["deep-secret-40"]);
});

Deno.test("secretValues() finds a secret whose field name holds a dot", () => {
  const schema = {
    type: "object",
    properties: {
      "api.key": { type: "string", secret: true },
      "*": { type: "string" },
    },
  };
  assert.deepEqual(
    secretValues(schema, { "api.key": "dotted-secret", "*": "plain" }),
    ["dotted-secret"],
  );
});

Deno.test("scrubSecrets() scrubs a secret however deep a value nests it", () => {
  let deep: unknown = { note: "token ghp_deep123 leaked" };
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.doesNotMatch(
    JSON.stringify(scrubSecrets(deep, ["ghp_deep123"])),
    /ghp_deep/,
  );
  // Past the depth walked one by one, a subtree without secrets is kept.
  let clean: unknown = { note: "nothing here" };
  for (let i = 0; i < 100; i++) clean = [clean];
  assert.equal(scrubSecrets(clean, ["ghp_deep123"]), clean);
});

Deno.test("secretValues() takes every value as secret when the walk is too long", () => {
  const schema = {
    type: "object",
    properties: { token: { type: "string", secret: true } },
    additionalProperties: { type: "string" },
  };
  const config: Record<string, unknown> = { token: "the-token" };
  for (let i = 0; i < 200_000; i++) config[`k${i}`] = `v${i}`;
  const values = secretValues(schema, config);
  assert.ok(values.includes("the-token"));
  assert.ok(values.includes("v199999"));
  // Below the bound only the secret field is.
  assert.deepEqual(secretValues(schema, { token: "the-token", a: "v1" }), [
    "the-token",
  ]);
});

Deno.test("scrubSecrets() ends on a cyclic value nested deeper than it walks one by one", () => {
  const cyclic: unknown[] = [];
  cyclic.push(cyclic, "clean");
  let deep: unknown = cyclic;
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.equal(scrubSecrets(deep, ["ghp_deep123"]), deep);
});

Deno.test("publicSchema() strips a secret field's default however deep it is", () => {
  // As a schema arrives from a module: parsed, `__proto__` an own key.
  let deep: Record<string, unknown> = JSON.parse(
    '{ "type": "string", "secret": true, "default": "deep-default-1", "__proto__": { "a": 1 } }',
  );
  for (let i = 0; i < 5000; i++) {
    deep = { type: "object", properties: { next: deep } };
  }
  const shown = publicSchema(deep);
  const text = JSON.stringify(shown);
  assert.doesNotMatch(text, /deep-default-1/);
  assert.match(text, /"__proto__":\{"a":1\}/);
  assert.notEqual(shown, deep);
});

Deno.test("basicAuthOf() encodes a user name and password of any length", () => {
  // A URL's userinfo has no length bound: a spread of its bytes into one
  // call's arguments would overflow the stack past about 100,000.
  const password = "p".repeat(300_000);
  const url = new URL(`https://ops:${password}@mcp.example/mcp`);
  const auth = basicAuthOf(url);
  assert.equal(atob(auth!.slice("Basic ".length)), `ops:${password}`);
  assert.ok(serverSecrets({ url: url.href }).includes(password));
});

Deno.test("scrubText() finds a long secret cut at an end in one pass over it", () => {
  // A session sets its own toolkit's secrets (`toolkit/configure/req`, up
  // to max_message_bytes) and can make a tool print what it likes: a
  // secret of a megabyte of one letter and a text of that letter made the
  // cut search compare again from every place (hours on the host's one
  // thread, where every session's calls wait).
  const run = "a".repeat(1024 * 1024);
  // The text starts with the secret's end (all of the text but its "b")...
  assert.equal(scrubText(`${run}b`, [`${run}a`]), `${REDACTED}b`);
  // ...or ends with the secret's start (all of it but its "b").
  assert.equal(scrubText(`aaaaa${run}`, [`${run}b`]), `aaaaa${REDACTED}`);
  // A secret whose start comes again in it: the cut is found after a
  // longer try at it failed ("abcab" then "c").
  assert.equal(
    scrubText("log abcabcabd", ["abcabd-secret"]),
    `log abc${REDACTED}`,
  );
  assert.equal(
    scrubText("abcabd tail", ["secret-abcabcabd"]),
    `${REDACTED} tail`,
  );
  // The same in the one pass, which long failed tries lead to.
  const some = "a".repeat(1000);
  assert.equal(
    scrubText(`${some}${some}b`, [`${some}b${"z".repeat(1000)}`]),
    `${some}${REDACTED}`,
  );
});

Deno.test("scrubText() finds a long secret of one repeated letter in a long text in one pass", () => {
  // V8's own search compares a long pattern again from nearly every place
  // when it is one letter repeated around another: a 4 KiB secret against
  // 4 MiB of that letter took 36 s, 16 KiB two minutes, and a quarter of
  // a megabyte (which a session may set) would take half an hour.
  const half = "a".repeat(128 * 1024);
  const secret = `${half}b${half}`;
  const text = "a".repeat(4 * 1024 * 1024);
  const inner = text.slice(half.length * 2);
  // No whole one: a cut one at each end.
  assert.equal(scrubText(text, [secret]), `${REDACTED}${inner}${REDACTED}`);
  // The text inside the secret, the other way round.
  assert.equal(scrubText(secret, [text]), `${REDACTED}b${REDACTED}`);
  // A text that is all a piece of the secret.
  assert.equal(scrubText(secret.slice(1, -1), [secret]), REDACTED);
  // Whole ones, each replaced.
  assert.equal(
    scrubText(`x${secret}y${secret}${secret}`, [secret]),
    `x${REDACTED}y${REDACTED}${REDACTED}`,
  );
});
