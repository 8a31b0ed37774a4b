import assert from "node:assert/strict";
import { createToolkitConfigs } from "./configs.ts";
import type { ToolkitEntry } from "../registry/types.ts";

function session(id: string) {
  return {
    id,
    token: "",
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
  };
}

function kit(hash: string, rootDefault: string): ToolkitEntry {
  return {
    kind: "toolkit",
    name: "fs",
    alias: "",
    description: "",
    category: "",
    tags: [],
    iconSvg: null,
    version: "1.0.0",
    tools: [],
    path: "/s/fs/toolkit.ts",
    export: "default",
    hash,
    origin: "file",
    permissions: {},
    configSchema: {
      type: "object",
      properties: {
        root: { type: "string", default: rootDefault },
        token: { type: "string", secret: true },
      },
    },
  };
}

Deno.test("createToolkitConfigs() resolves once per toolkit version and configuration", async (t) => {
  const configs = createToolkitConfigs({ fs: { token: "host-secret" } });
  const v1 = kit("h1", "/a");
  const a = session("a");
  const b = session("b");

  await t.step("the same inputs give the same frozen answer", () => {
    const first = configs.resolve(a, v1);
    assert.equal(configs.resolve(a, v1), first);
    assert.equal(configs.resolve(b, v1), first, "no own configuration: shared");
    assert.deepEqual(first.config, { root: "/a", token: "host-secret" });
    assert.deepEqual(first.secrets, ["host-secret"]);
    assert.ok(Object.isFrozen(first.config));
    assert.throws(() => {
      (first.config as Record<string, unknown>).root = "/etc";
    }, TypeError);
  });

  await t.step(
    "a session's new configuration is seen at once, by it only",
    () => {
      const own = { root: "/b", token: "session-secret" };
      assert.equal(configs.configure(a, v1, own), null);
      const resolved = configs.resolve(a, v1);
      assert.deepEqual(resolved.config, {
        root: "/b",
        token: "session-secret",
      });
      assert.deepEqual(resolved.secrets, ["session-secret"]);
      assert.deepEqual(configs.resolve(b, v1).config.root, "/a");
      // The store keeps its own copy: editing the object sent changes nothing.
      own.root = "/etc";
      assert.equal(configs.resolve(a, v1).config.root, "/b");
      assert.equal(configs.configure(a, v1, { token: "newer-secret" }), null);
      assert.deepEqual(configs.resolve(a, v1).secrets, ["newer-secret"]);
      assert.equal(configs.resolve(a, v1).config.root, "/a");
    },
  );

  await t.step("a new toolkit version is resolved again", () => {
    const v2 = kit("h2", "/c");
    assert.equal(configs.resolve(b, v2).config.root, "/c");
    assert.equal(configs.resolve(a, v2).config.token, "newer-secret");
    const strict = {
      ...kit("h3", "/d"),
      configSchema: {
        type: "object",
        properties: { root: { type: "number" } },
        required: ["root"],
      },
    };
    assert.match(
      String(configs.resolve(b, strict).problem),
      /"root" is required/,
    );
  });
});

Deno.test("configure() refuses a session's configuration holding too many secret values", () => {
  // Every string a call of the toolkit returns is scrubbed of each secret
  // value in turn: 50,000 of them (750 KB of JSON) held the host's thread
  // for 100 s per megabyte of a tool's output.
  const configs = createToolkitConfigs();
  const headers = {
    ...kit("h1", "/a"),
    configSchema: {
      type: "object",
      properties: {
        headers: {
          type: "object",
          additionalProperties: { type: "string" },
          secret: true,
        },
      },
    },
  };
  const a = session("a");
  const values = (n: number) =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`h${i}`, `value-${i}`]),
    );
  assert.equal(configs.configure(a, headers, { headers: values(256) }), null);
  assert.equal(
    configs.configure(a, headers, { headers: values(257) }),
    "it holds 257 secret values, more than the 256 a toolkit's configuration may hold",
  );
  // The refused one is not kept: the last accepted one is.
  assert.equal(configs.resolve(a, headers).secrets.length, 256);
});
