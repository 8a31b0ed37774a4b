import assert from "node:assert/strict";
import { createToolCaller } from "./call.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { buildSnapshot } from "../registry/normalize.ts";
import { parseHostPolicy } from "./policy.ts";
import type { SandboxCall } from "../sandbox/types.ts";

function session(id: string) {
  return {
    id,
    token: "",
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
  };
}

Deno.test("createToolCaller() evaluates a toolkit's dynamic permissions once per configuration", async () => {
  const snapshot = buildSnapshot([{
    origin: "file",
    root: "/s",
    module: {
      path: "/s/kit/toolkit.ts",
      hash: "k1",
      error: null,
      definitions: [{
        export: "default",
        kind: "toolkit",
        name: "kit",
        permissions: "dynamic",
        runnable: false,
        fields: {
          config: {
            type: "object",
            properties: { root: { type: "string" } },
            required: ["root"],
          },
        },
      }],
    },
  }, {
    origin: "file",
    root: "/s",
    module: {
      path: "/s/kit/peek.ts",
      hash: "p1",
      error: null,
      definitions: [{
        export: "default",
        kind: "tool",
        name: "peek",
        permissions: {},
        runnable: true,
        fields: { description: "Peek", input: { type: "object" } },
      }],
    },
  }]);
  const evaluated: unknown[] = [];
  const grants: SandboxCall["grant"][] = [];
  const caller = createToolCaller({
    registry: { snapshot },
    configs: createToolkitConfigs(),
    policy: parseHostPolicy({ permissions: { read: ["/data"] } }),
    sandbox: {
      call: (call) => {
        grants.push(call.grant);
        return Promise.resolve({ ok: true, value: null, truncated: false });
      },
      resolvePermissions: (_path, _export, config) => {
        evaluated.push(config);
        return Promise.resolve({ read: [String(config.root)] });
      },
    },
  });
  const configure = (s: ReturnType<typeof session>, root: string) => {
    const kit = snapshot.toolkits.get("kit")!;
    createToolkitConfigs().configure(s, kit, { root });
  };
  const a = session("a");
  configure(a, "/data/a");
  for (let i = 0; i < 3; i++) {
    const out = await caller.call({ name: "peek", args: {}, session: a });
    assert.equal(out.result.success, true, String(out.result.error));
  }
  assert.deepEqual(evaluated, [{ root: "/data/a" }]);

  const b = session("b");
  configure(b, "/data/b");
  await caller.call({ name: "peek", args: {}, session: b });
  assert.deepEqual(evaluated, [{ root: "/data/a" }, { root: "/data/b" }]);
  assert.ok(
    grants.at(-1)?.read?.includes("/data/b"),
    "the grant follows the session's config",
  );
  assert.ok(!grants.at(-1)?.read?.includes("/data/a"));
});

function kitModules(options: {
  kitHash: string;
  kitPermissions: Record<string, string[]> | "dynamic";
  toolHash: string;
  toolPermissions: Record<string, string[]>;
}) {
  return buildSnapshot([{
    origin: "file",
    root: "/s",
    module: {
      path: "/s/kit/toolkit.ts",
      hash: options.kitHash,
      error: null,
      definitions: [{
        export: "default",
        kind: "toolkit",
        name: "kit",
        permissions: options.kitPermissions,
        runnable: false,
        fields: {
          config: { type: "object", properties: { root: { type: "string" } } },
        },
      }],
    },
  }, {
    origin: "file",
    root: "/s",
    module: {
      path: "/s/kit/peek.ts",
      hash: options.toolHash,
      error: null,
      definitions: [{
        export: "default",
        kind: "tool",
        name: "peek",
        permissions: options.toolPermissions,
        runnable: true,
        fields: { description: "Peek", input: { type: "object" } },
      }],
    },
  }]);
}

Deno.test("createToolCaller() reuses a checked grant until the tool or its toolkit changes version", async (t) => {
  const registry = {
    snapshot: kitModules({
      kitHash: "k1",
      kitPermissions: {},
      toolHash: "p1",
      toolPermissions: { read: ["data"] },
    }),
  };
  const grants: SandboxCall["grant"][] = [];
  const caller = createToolCaller({
    registry,
    configs: createToolkitConfigs(),
    policy: parseHostPolicy({ permissions: { read: ["/s"] } }),
    sandbox: {
      call: (call) => {
        grants.push(call.grant);
        return Promise.resolve({ ok: true, value: null, truncated: false });
      },
      resolvePermissions: () => Promise.resolve({ read: ["/s/dyn"] }),
    },
  });
  const call = () =>
    caller.call({ name: "peek", args: {}, session: session("a") });

  await t.step("the same version gets the same (frozen) grant", async () => {
    await call();
    await call();
    assert.equal(grants.length, 2);
    assert.equal(grants[0], grants[1]);
    assert.ok(Object.isFrozen(grants[0]) && Object.isFrozen(grants[0]?.read));
    assert.ok(grants[0]?.read?.includes("/s/kit/data"));
  });

  await t.step("a new tool version is checked again", async () => {
    registry.snapshot = kitModules({
      kitHash: "k1",
      kitPermissions: {},
      toolHash: "p2",
      toolPermissions: { net: ["evil.example"] },
    });
    await assert.rejects(call(), { code: "tool_denied" });
    registry.snapshot = kitModules({
      kitHash: "k1",
      kitPermissions: {},
      toolHash: "p3",
      toolPermissions: { read: ["other"] },
    });
    await call();
    assert.ok(grants.at(-1)?.read?.includes("/s/kit/other"));
    assert.ok(!grants.at(-1)?.read?.includes("/s/kit/data"));
  });

  await t.step(
    "a new toolkit version under the same tool entry is checked again",
    async () => {
      const tool = registry.snapshot.tools.get("peek")!;
      const next = kitModules({
        kitHash: "k2",
        kitPermissions: { read: ["shared"] },
        toolHash: "p3",
        toolPermissions: { read: ["other"] },
      });
      registry.snapshot = { ...next, tools: new Map([["peek", tool]]) };
      await call();
      assert.ok(grants.at(-1)?.read?.includes("/s/kit/shared"));
      assert.ok(grants.at(-1)?.read?.includes("/s/kit/other"));
    },
  );

  await t.step(
    "a toolkit turning dynamic is resolved in the sandbox",
    async () => {
      registry.snapshot = kitModules({
        kitHash: "k3",
        kitPermissions: "dynamic",
        toolHash: "p3",
        toolPermissions: {},
      });
      await call();
      const first = grants.at(-1);
      assert.ok(first?.read?.includes("/s/dyn"));
      await call();
      assert.equal(
        grants.at(-1),
        first,
        "cached per version and configuration",
      );
    },
  );
});
