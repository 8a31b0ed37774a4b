import assert from "node:assert/strict";
import { createToolCaller } from "./call.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { buildSnapshot } from "../registry/normalize.ts";
import { parseHostPolicy } from "./policy.ts";
import type { SandboxCall } from "../../sandbox/types.ts";

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
