import assert from "node:assert/strict";
import type { SessionScope } from "../capability.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import type { RegistryChange } from "../registry/types.ts";
import { skill } from "../skills/catalog.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { createToolCaller } from "../tools/call.ts";
import { parseHostPolicy } from "../tools/policy.ts";
import { CODE_API_TOOL, createCodeApi } from "./code_api.ts";

function session(id: string, token = ""): SessionScope {
  return {
    id,
    token,
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
  };
}

const toolDef = (
  name: string,
  fields: Record<string, unknown> = {},
  permissions: Record<string, unknown> = {},
) => ({
  export: name,
  kind: "tool" as const,
  name,
  permissions,
  runnable: true,
  fields: {
    description: `Does ${name.replace(/_/g, " ")}`,
    input: { type: "object", properties: { n: { type: "number" } } },
    ...fields,
  },
});

function registry(extra: ReturnType<typeof toolDef>[] = []) {
  const snapshot = buildSnapshot([{
    origin: "file",
    root: "/s",
    module: {
      path: "/s/tools.ts",
      hash: "h",
      error: null,
      definitions: [
        toolDef("plain"),
        toolDef("hidden_deferred", { defer_loading: true }),
        toolDef("run_code"),
        toolDef("shell_out", {}, { run: ["bash"] }),
        toolDef("admin_only", { tags: ["admin"] }),
        ...extra,
      ],
    },
  }, {
    origin: "file",
    root: "/s",
    module: {
      path: "/s/kit/toolkit.ts",
      hash: "k",
      error: null,
      definitions: [{
        export: "default",
        kind: "toolkit",
        name: "kit",
        permissions: {},
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
      hash: "p",
      error: null,
      definitions: [toolDef("peek")],
    },
  }]);
  const listeners: ((change: RegistryChange) => void)[] = [];
  return {
    snapshot,
    onChange(listener: (change: RegistryChange) => void) {
      listeners.push(listener);
      return () => {};
    },
  };
}

const policy = parseHostPolicy({
  tools: {
    deny: ["tag:admin"],
    tokens: { boss: { allow: ["tag:admin"], deny: [], only: [] } },
  },
});

Deno.test("createCodeApi() declares what each session may call now", async () => {
  const configs = createToolkitConfigs();
  const api = createCodeApi({
    registry: registry(),
    policy,
    configs,
    skills: () =>
      Promise.resolve([
        skill({ name: "ready", description: "Ready" }),
        skill({ name: "blocked", description: "Blocked", status: "Blocked" }),
      ]),
  });
  const guest = session("g");
  const boss = session("b", "boss");
  const [forGuest, forBoss] = await Promise.all([
    api.declare({ session: guest }),
    api.declare({ session: boss }),
  ]);
  assert.deepEqual(forGuest.tools, ["hidden_deferred", "plain"]);
  assert.deepEqual(forBoss.tools, ["admin_only", "hidden_deferred", "plain"]);
  assert.deepEqual(forGuest.skills, ["ready"]);
  assert.match(forGuest.declarations, /toolkit "kit" \(peek\)/);
  assert.ok(!forGuest.declarations.includes("shell_out"), "grant refused");

  const kit = registry().snapshot.toolkits.get("kit")!;
  assert.equal(configs.configure(guest, kit, { root: "/data" }), null);
  const configured = await api.declare({ session: guest });
  assert.deepEqual(configured.tools, ["hidden_deferred", "peek", "plain"]);
  assert.ok(!configured.declarations.includes('toolkit "kit"'));
  assert.deepEqual((await api.declare({ session: boss })).tools, [
    "admin_only",
    "hidden_deferred",
    "plain",
  ]);
  api.close();
});

Deno.test("createCodeApi() narrows by query and bounds thousands of tools", async () => {
  const many = Array.from(
    { length: 2000 },
    (_, i) =>
      toolDef(`bulk_${i}`, {
        input: {
          type: "object",
          properties: Object.fromEntries(
            Array.from({ length: 20 }, (_, j) => [`field_${j}`, {
              type: "string",
              description: `Field ${j} of bulk tool ${i}`,
            }]),
          ),
        },
      }),
  );
  const api = createCodeApi({
    registry: registry([...many, toolDef("weather_forecast")]),
    policy,
    configs: createToolkitConfigs(),
  });
  const guest = session("g");
  const all = await api.declare({ session: guest });
  assert.ok(all.omitted > 0);
  assert.ok(all.declarations.length <= 128 * 1024 + 1024);
  assert.match(all.declarations, /more left out .* narrow it with a query/);
  const found = await api.declare({ session: guest, query: "weather" });
  assert.deepEqual(found.tools, ["weather_forecast"]);
  const limited = await api.declare({
    session: guest,
    query: "bulk",
    limit: 5,
  });
  assert.equal(limited.tools.length, 5);
  const junk = await api.declare({ session: guest, query: "\u0000 */ ;;" });
  assert.deepEqual(junk.tools, []);
  api.close();
});

Deno.test("the shipped code_api is answered for the calling session; a drop-in of its name runs as a plain tool", async () => {
  const api = createCodeApi({
    registry: registry(),
    policy,
    configs: createToolkitConfigs(),
  });
  const ran: string[] = [];
  const callerOver = (origin: "builtin" | "file") =>
    createToolCaller({
      registry: {
        snapshot: buildSnapshot([{
          origin,
          root: "/r",
          module: {
            path: "/r/code/code_api.ts",
            hash: "c",
            error: null,
            definitions: [{ ...toolDef("code_api"), export: "default" }],
          },
        }]),
      },
      configs: createToolkitConfigs(),
      sandbox: {
        call: (call) => {
          ran.push(call.path);
          return Promise.resolve({
            ok: true,
            value: "sandbox",
            truncated: false,
          });
        },
        resolvePermissions: () => Promise.resolve({}),
      },
      hosted: new Map([[CODE_API_TOOL, api]]),
    });
  const shipped = callerOver("builtin");
  const boss = await shipped.call({
    name: "code_api",
    args: {},
    session: session("b", "boss"),
  });
  const guest = await shipped.call({
    name: "code_api",
    args: { query: "admin" },
    session: session("g"),
  });
  assert.match(JSON.stringify(boss.result.data), /admin_only/);
  assert.equal(guest.result.success, true);
  assert.doesNotMatch(JSON.stringify(guest.result.data), /admin_only/);
  assert.deepEqual(ran, []);
  const dropIn = await callerOver("file").call({
    name: "code_api",
    args: {},
    session: session("b", "boss"),
  });
  assert.equal(dropIn.result.data, "sandbox");
  assert.deepEqual(ran, ["/r/code/code_api.ts"]);
  api.close();
});
