import assert from "node:assert/strict";
import { operatorSecrets, Redactor } from "./redact.ts";

Deno.test("Redactor.json() redacts secret keys at any depth, and secret values anywhere", () => {
  const r = new Redactor(["operator-secret"]);
  const out = JSON.parse(r.json({
    headers: { Authorization: "Bearer abc", "x-api-key": "k" },
    list: [{ password: "p" }, "see operator-secret here"],
    "operator-secret": 1,
    usage: { input_tokens: 3 },
  }, { secrets: ["kit-secret"] }));
  assert.deepEqual(out, {
    headers: { Authorization: "[redacted]", "x-api-key": "[redacted]" },
    list: [{ password: "[redacted]" }, "see [redacted] here"],
    "[redacted]": 1,
    usage: { input_tokens: 3 },
  });
  assert.equal(
    r.json("the kit-secret leaks", { secrets: ["kit-secret"] }),
    '"the [redacted] leaks"',
  );
});

Deno.test("Redactor.json() caps long strings, deep nesting, wide objects and the total", () => {
  const r = new Redactor();
  assert.ok(r.json({ s: "y".repeat(1e6) }).length < 2200);
  let deep: unknown = "bottom";
  for (let i = 0; i < 100; i++) deep = { d: deep };
  assert.ok(r.json(deep).includes("[…]"));
  const wide = Object.fromEntries(
    Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]),
  );
  const text = r.json(wide);
  assert.ok(text.length <= 16_500);
  assert.equal(JSON.parse(text).truncated, true);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.doesNotThrow(() => r.json(cyclic));
});

Deno.test("operatorSecrets() finds egress secrets bound to hosts by their variable", () => {
  const env = (name: string) =>
    ({ GH_TOKEN: "ghp-egress", OTHER: "not-named" } as Record<string, string>)[
      name
    ];
  const found = operatorSecrets({
    tokens: [],
    llm: [],
    toolkits: {},
    egress: {
      secrets: [{ valueEnv: "GH_TOKEN" }, { valueEnv: "MISSING" }],
    },
  }, env);
  assert.deepEqual(found, ["ghp-egress"]);
  const redactor = new Redactor(found);
  assert.ok(!redactor.json({ note: "sent ghp-egress" }).includes("ghp-egress"));
});

Deno.test("Redactor scrubs a call's secrets whether its array is frozen (merged once) or still changing (merged each time)", () => {
  const r = new Redactor(["operator-secret"]);
  const kit = Object.freeze(["kit-secret-1", "kit-secret-1-longer"]);
  for (let i = 0; i < 3; i++) {
    assert.equal(
      r.json({ note: "kit-secret-1-longer, kit-secret-1, operator-secret" }, {
        secrets: kit,
      }),
      '{"note":"[redacted], [redacted], [redacted]"}',
    );
    assert.equal(r.text("kit-secret-1", { secrets: kit }), "[redacted]");
  }
  // Another frozen array is another set of secrets, not the first one's.
  assert.equal(
    r.text("kit-secret-1 other-kit", { secrets: Object.freeze(["other-kit"]) }),
    "kit-secret-1 [redacted]",
  );
  const growing = ["first-secret"];
  assert.equal(
    r.text("first-secret second-secret", { secrets: growing }),
    "[redacted] second-secret",
  );
  growing.push("second-secret");
  assert.equal(
    r.text("first-secret second-secret", { secrets: growing }),
    "[redacted] [redacted]",
  );
});

Deno.test("operatorSecrets() counts imported MCP servers' env and header values, not trivial ones", () => {
  const found = operatorSecrets({
    tokens: [],
    llm: [],
    toolkits: {},
    mcpServers: {
      local: { env: { GH_TOKEN: "ghp-from-env", DEBUG: "true", N: "1" } },
      remote: {
        headers: { authorization: "Bearer tok-hdr", "x-tenant": "acme-42" },
      },
    },
  }, () => undefined);
  assert.deepEqual(found.sort(), [
    "Bearer tok-hdr",
    "acme-42",
    "ghp-from-env",
    "tok-hdr",
  ]);
});

Deno.test("Redactor scrubs a secret cut at the end or start of a string, before its own cut", () => {
  const r = new Redactor(["sk-operator-7f3a9c"]);
  assert.equal(
    r.json({ body: "answer: sk-operator-7f", tail: "3a9c ended" }),
    '{"body":"answer: [redacted]","tail":"[redacted] ended"}',
  );
  assert.equal(
    r.text("says kit-secret-51b", { secrets: ["kit-secret-51be20"] }),
    "says [redacted]",
  );
});
