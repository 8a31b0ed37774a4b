import assert from "node:assert/strict";
import type { EgressBroker, EgressScope } from "../egress/broker.ts";
import type { SessionScope } from "../capability.ts";
import {
  createToolCaller,
  eventSize,
  RESULT_EVENT_BYTES,
  ToolCallHooks,
} from "./call.ts";
import {
  createToolkitConfigs,
  type SessionToolkitConfig,
} from "../toolkits/configs.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import { parseHostPolicy } from "./policy.ts";
import type {
  SandboxCall,
  SandboxHooks,
  SandboxOutcome,
} from "../sandbox/types.ts";
import { validateValue } from "../schema/validator.ts";
import { SkillEventLog } from "../skills/relays.ts";
import { output } from "../../protocol/output.ts";
import {
  type PermissionDeniedError,
  SkillboxError,
} from "../../protocol/errors.ts";
import type { CallEvent } from "../../protocol/tool.ts";

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

// The checks, the hooks and the outcome, through the caller: a tool "add"
// outside a toolkit, and "peek" in toolkit "kit" (configured by a stand-in).

const ADD = buildSnapshot([{
  origin: "file",
  root: "/s",
  module: {
    path: "/s/add.ts",
    hash: "h",
    error: null,
    definitions: [{
      export: "default",
      kind: "tool",
      name: "add",
      permissions: {},
      runnable: true,
      fields: {
        description: "Add",
        input: {
          type: "object",
          properties: { a: { type: "number" } },
          required: ["a"],
        },
      },
    }],
  },
}]);

type Snapshot = ReturnType<typeof buildSnapshot>;
type Answer = (
  call: SandboxCall,
  hooks: SandboxHooks,
) => Promise<SandboxOutcome>;

const answered: Answer = () =>
  Promise.resolve({ ok: true, value: null, truncated: false });

function callerOf(snapshot: Snapshot, options: {
  policy?: Parameters<typeof parseHostPolicy>[0];
  answer?: Answer;
  resolved?: SessionToolkitConfig;
  permissions?: () => Promise<Record<string, string[]>>;
  maxEvents?: number;
} = {}) {
  const real = createToolkitConfigs();
  const resolved = options.resolved;
  return createToolCaller({
    registry: { snapshot },
    configs: resolved ? { ...real, resolve: () => resolved } : real,
    policy: parseHostPolicy(options.policy ?? {}),
    maxEvents: options.maxEvents,
    sandbox: {
      call: options.answer ?? answered,
      resolvePermissions: options.permissions ?? (() => Promise.resolve({})),
    },
  });
}

// A configuration with the toolkit's secret, valid unless `problem` is set.
function withSecret(problem: string | null = null): SessionToolkitConfig {
  return {
    configured: true,
    config: Object.freeze({}),
    problem,
    secrets: ["s3cret"],
  };
}

const PEEK = kitModules({
  kitHash: "k",
  kitPermissions: {},
  toolHash: "p",
  toolPermissions: {},
});

Deno.test("a call goes through when the tool is served and the policy allows it", async () => {
  const out = await callerOf(ADD).call({
    name: "add",
    args: { a: 1 },
    session: session("s"),
  });
  assert.equal(out.result.success, true);
  assert.equal(out.entry, ADD.tools.get("add"));
});

Deno.test("a call to an unknown tool throws unknown_tool, saying why a blocked name is blocked", async () => {
  const caller = callerOf({
    ...ADD,
    blocked: new Map([["dup", "two files define it"]]),
  });
  await assert.rejects(
    caller.call({ name: "dup", args: {}, session: session("s") }),
    {
      code: "unknown_tool",
      message: 'Unknown tool "dup": two files define it',
    },
  );
  await assert.rejects(
    caller.call({ name: "nope", args: {}, session: session("s") }),
    { code: "unknown_tool", message: 'Unknown tool "nope"' },
  );
});

Deno.test("a call the policy refuses throws tool_denied", async () => {
  await assert.rejects(
    callerOf(ADD, { policy: { tools: { deny: ["add"] } } }).call({
      name: "add",
      args: { a: 1 },
      session: session("s"),
    }),
    { code: "tool_denied" },
  );
});

Deno.test("a call to a tool of an MCP server not up says so", async () => {
  const kit = (description: string, tags: string[]) =>
    callerOf({
      ...ADD,
      blocked: new Map<string, string>(),
      toolkits: new Map([["gh", { name: "gh", description, tags } as never]]),
    });
  const down = kit('Tools of the MCP server "gh" (unavailable: starting)', [
    "mcp",
    "unavailable",
  ]);
  await assert.rejects(
    down.call({ name: "gh__search", args: {}, session: session("s") }),
    {
      code: "unknown_tool",
      message:
        'Unknown tool "gh__search": its MCP server "gh" is unavailable (starting); its tools are listed once it is up',
    },
  );
  // Up, or not an MCP server's: only the name.
  const up = kit('Tools of the MCP server "gh"', ["mcp"]);
  await assert.rejects(
    up.call({ name: "gh__search", args: {}, session: session("s") }),
    { message: 'Unknown tool "gh__search"' },
  );
});

Deno.test("arguments that do not fit the input schema are a schema_violation", async () => {
  const caller = callerOf(ADD);
  const bad = await caller.call({
    name: "add",
    args: { a: "x" },
    session: session("s"),
  });
  assert.equal(bad.result.errorCode, "schema_violation");
  assert.match(bad.result.error ?? "", /^Invalid arguments for tool "add": /);
});

Deno.test("a tool whose input schema does not compile answers tool_error", async () => {
  const odd = {
    ...ADD.tools.get("add")!,
    name: "odd",
    inputSchema: { type: "object", properties: { a: { $ref: "#/nowhere" } } },
  };
  const out = await callerOf({ ...ADD, tools: new Map([["odd", odd]]) }).call(
    { name: "odd", args: { a: 1 }, session: session("s") },
  );
  assert.equal(out.result.errorCode, "tool_error");
  assert.match(out.result.error ?? "", /its input schema is invalid/);
});

// Input schemas the open-object shortcut must answer as the validator does.
const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: {} },
  { type: "object" },
  { type: "object", properties: {}, additionalProperties: true },
  {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    title: "t",
    description: "d",
  },
  // Not open: each constrains something.
  { type: "object", properties: {}, additionalProperties: false },
  { type: "object", required: ["a"] },
  { type: "object", properties: { a: { type: "number" } } },
  { type: "object", maxProperties: 0 },
  { type: "object", title: { not: "a string" } },
  { type: ["object", "null"] },
  { type: "object", not: {} },
  { type: "object", $ref: "#/$defs/x", $defs: { x: { required: ["a"] } } },
  {},
];

const VALUES: unknown[] = [
  {},
  { a: 1 },
  { a: "x", b: [1, { c: null }] },
  [],
  [1, 2],
  null,
  "text",
  3,
];

function callerWithSchema(inputSchema: Record<string, unknown>) {
  const tool = { ...ADD.tools.get("add")!, name: "t", inputSchema };
  return callerOf({ ...ADD, tools: new Map([["t", tool]]) });
}

Deno.test("the arguments check answers as validateValue does, for open and other schemas", async () => {
  for (const schema of SCHEMAS) {
    const caller = callerWithSchema(schema);
    for (const value of VALUES) {
      const args = value as Record<string, unknown>;
      const { result } = await caller.call({
        name: "t",
        args,
        session: session("s"),
      });
      // A fresh copy of the schema: the validator's own cache is not shared.
      const slow = validateValue(structuredClone(schema), args);
      const where = `${JSON.stringify(schema)} on ${JSON.stringify(value)}`;
      assert.equal(result.success, slow.valid, where);
      if (!slow.valid) {
        assert.equal(
          result.error,
          `Invalid arguments for tool "t": ${slow.message}`,
          where,
        );
      }
    }
  }
});

Deno.test("the arguments check still refuses what an open-looking schema forbids", async () => {
  const fits = async (schema: Record<string, unknown>, args: unknown) =>
    (await callerWithSchema(schema).call({
      name: "t",
      args: args as Record<string, unknown>,
      session: session("s"),
    })).result.success;
  const closed = {
    type: "object",
    properties: {},
    additionalProperties: false,
  };
  assert.equal(await fits(closed, { a: 1 }), false);
  const open = { type: "object", properties: {} };
  assert.equal(await fits(open, { a: 1 }), true);
  // An array is not an object, however the schema reads.
  assert.equal(await fits(open, []), false);
});

Deno.test("a toolkit's configuration problem refuses the call: missing or invalid, without its secrets", async () => {
  const missing = await callerOf(PEEK, {
    resolved: {
      configured: false,
      config: {},
      problem: "root is required",
      secrets: [],
    },
  }).call({ name: "peek", args: {}, session: session("s") });
  assert.match(missing.result.error ?? "", /is not configured/);
  assert.match(
    missing.result.error ?? "",
    /send toolkit\/configure\/req first/,
  );
  const invalid = await callerOf(PEEK, {
    resolved: withSecret("key s3cret is too short"),
  }).call({ name: "peek", args: {}, session: session("s") });
  assert.match(
    invalid.result.error ?? "",
    /configuration of toolkit "kit" is invalid/,
  );
  assert.equal(invalid.result.error?.includes("s3cret"), false);
  // A refusal before the code ran: a failed result naming the tool.
  assert.equal(invalid.result.success, false);
  assert.equal(invalid.result.toolName, "peek");
  assert.equal(invalid.breakLoop, false);
  assert.equal(invalid.entry, PEEK.tools.get("peek"));
});

Deno.test("a grant that cannot be computed keeps a SkillboxError's code; a denied one names the permission", async () => {
  const dynamic = kitModules({
    kitHash: "k",
    kitPermissions: "dynamic",
    toolHash: "p",
    toolPermissions: {},
  });
  const coded = await callerOf(dynamic, {
    resolved: withSecret(),
    permissions: () => Promise.reject(new SkillboxError("timeout", "late")),
  }).call({ name: "peek", args: {}, session: session("s") });
  assert.equal(coded.result.errorCode, "timeout");
  const thrown = await callerOf(dynamic, {
    resolved: withSecret(),
    permissions: () => Promise.reject(new Error("boom")),
  }).call({ name: "peek", args: {}, session: session("s") });
  assert.equal(thrown.result.errorCode, "tool_error");
  assert.match(thrown.result.error ?? "", /could not be computed: boom/);

  const denied = callerOf(dynamic, {
    resolved: withSecret(),
    policy: { permissions: { read: ["/data"] } },
    permissions: () => Promise.resolve({ read: ["/etc/s3cret"] }),
  }).call({ name: "peek", args: {}, session: session("s") });
  await assert.rejects(denied, (error: PermissionDeniedError) => {
    assert.equal(error.code, "tool_denied");
    assert.equal(error.message.includes("s3cret"), false);
    assert.deepEqual(error.detail, { tool_name: "peek", permission: "read" });
    return true;
  });
});

Deno.test("a call's result reads an Output: data, summary, exit code, break_loop", async () => {
  const out = await callerOf(ADD, {
    answer: () =>
      Promise.resolve({
        ok: true,
        value: output({
          data: { n: 1 },
          summary: "one",
          exit_code: 3,
          break_loop: true,
        }),
        truncated: false,
      }),
  }).call({ name: "add", args: { a: 1 }, session: session("s") });
  assert.deepEqual(out.result.data, { n: 1 });
  assert.equal(out.result.summary, "one");
  assert.equal(out.result.exitCode, 3);
  assert.equal(out.breakLoop, true);
});

Deno.test("a call's result is truncated when events were cut or the value was", async () => {
  const cut = await callerOf(ADD, {
    maxEvents: 1,
    answer: (_call, hooks) => {
      hooks.onEvent("log", {});
      hooks.onEvent("log", {});
      return Promise.resolve({ ok: true, value: 1, truncated: false });
    },
  }).call({ name: "add", args: { a: 1 }, session: session("s") });
  assert.equal(cut.result.truncated, true);
  const event: CallEvent = { kind: "log", data: {}, seq: 0 };
  assert.deepEqual(cut.result.events, [event]);
  const big = await callerOf(ADD, {
    answer: () => Promise.resolve({ ok: true, value: 1, truncated: true }),
  }).call({ name: "add", args: { a: 1 }, session: session("s") });
  assert.equal(big.result.truncated, true);
});

Deno.test("a failed outcome becomes a failed result, scrubbed", async () => {
  const out = await callerOf(PEEK, {
    resolved: withSecret(),
    answer: () =>
      Promise.resolve({
        ok: false,
        code: "timeout",
        message: "stuck on s3cret",
        retryable: true,
      }),
  }).call({ name: "peek", args: {}, session: session("s") });
  assert.equal(out.result.success, false);
  assert.equal(out.result.errorCode, "timeout");
  assert.equal(out.result.error?.includes("s3cret"), false);
  assert.equal(out.breakLoop, false);
});

Deno.test("a sandbox that throws keeps a SkillboxError's code and says sandbox_crash otherwise", async () => {
  const coded = await callerOf(ADD, {
    answer: () => Promise.reject(new SkillboxError("timeout", "late")),
  }).call({ name: "add", args: { a: 1 }, session: session("s") });
  assert.equal(coded.result.errorCode, "timeout");
  assert.equal(coded.result.error, "late");
  const thrown = await callerOf(ADD, {
    answer: () => Promise.reject("text"),
  }).call({ name: "add", args: { a: 1 }, session: session("s") });
  assert.equal(thrown.result.errorCode, "sandbox_crash");
  assert.equal(thrown.result.error, "text");
});

Deno.test("a result is walked for secrets only when the toolkit has some", async () => {
  const value = { a: "s3cret" };
  const answer: Answer = () =>
    Promise.resolve({ ok: true, value, truncated: false });
  const plain = await callerOf(ADD, { answer }).call({
    name: "add",
    args: { a: 1 },
    session: session("s"),
  });
  assert.equal(plain.result.data, value);
  const secret = await callerOf(PEEK, { resolved: withSecret(), answer })
    .call({ name: "peek", args: {}, session: session("s") });
  assert.equal(JSON.stringify(secret.result.data).includes("s3cret"), false);
});

Deno.test("a shipped entry of a hosted tool's name goes to its runner; a drop-in of that name to the sandbox", async () => {
  const tool = (origin: "builtin" | "file") => ({
    origin,
    root: "/r",
    module: {
      path: `/r/${origin}/run_code.ts`,
      hash: "h",
      error: null,
      definitions: [{
        export: "default",
        kind: "tool" as const,
        name: "run_code",
        permissions: {},
        runnable: true,
        fields: { description: "Runs code", input: { type: "object" } },
      }],
    },
  });
  const sandboxed: string[] = [];
  const hosted: unknown[] = [];
  const callerOver = (origin: "builtin" | "file") => {
    const caller = createToolCaller({
      registry: { snapshot: buildSnapshot([tool(origin)]) },
      configs: createToolkitConfigs(),
      sandbox: {
        call: async (call, hooks) => {
          sandboxed.push(call.path);
          // A plain tool's ctx.tools stays refused.
          await assert.rejects(hooks.callTool("x", {}, session("s").signal), {
            code: "tool_denied",
          });
          return { ok: true, value: "sandbox", truncated: false };
        },
        resolvePermissions: () => Promise.resolve({}),
      },
      hosted: new Map([["run_code", {
        run: ({ call, request, caller: outer, sandbox }) => {
          hosted.push([call.path, request.name, outer === caller]);
          assert.equal(typeof sandbox.call, "function");
          return Promise.resolve({
            ok: true,
            value: "hosted",
            truncated: false,
          });
        },
      }]]),
    });
    return caller;
  };
  const scope = session("s");
  const shipped = await callerOver("builtin").call({
    name: "run_code",
    args: {},
    session: scope,
  });
  const dropIn = await callerOver("file").call({
    name: "run_code",
    args: {},
    session: scope,
  });
  assert.equal(shipped.result.data, "hosted");
  assert.deepEqual(hosted, [["/r/builtin/run_code.ts", "run_code", true]]);
  assert.equal(dropIn.result.data, "sandbox");
  assert.deepEqual(sandboxed, ["/r/file/run_code.ts"]);
});

Deno.test("an imported server's entry goes to the imported runner; a drop-in with an imported-looking path or name to the sandbox", async () => {
  const definition = (name: string, exportName: string) => ({
    export: exportName,
    kind: "tool" as const,
    name,
    permissions: {},
    runnable: true,
    fields: { description: name, input: { type: "object" } },
  });
  const snapshot = buildSnapshot([
    {
      origin: "mcp",
      root: "/mcp:/",
      module: {
        path: "/mcp:/calc",
        hash: "h",
        error: null,
        definitions: [definition("calc__add", "add")],
      },
    },
    // A drop-in under a folder named like the imported servers' paths, its
    // export that of a tool the server could have (a name in the server's
    // namespace, "calc__nope", is refused by the registry: below).
    {
      origin: "file",
      root: "/mcp:/",
      module: {
        path: "/mcp:/calc/add.ts",
        hash: "h",
        error: null,
        definitions: [
          definition("calc_nope", "add"),
          definition("calc__nope", "add"),
        ],
      },
    },
    // A shipped tool of an imported-looking name is not imported either.
    {
      origin: "builtin",
      root: "/b",
      module: {
        path: "/b/calc__ship.ts",
        hash: "h",
        error: null,
        definitions: [definition("calc__ship", "default")],
      },
    },
  ]);
  const ran: string[] = [];
  const caller = createToolCaller({
    registry: { snapshot },
    configs: createToolkitConfigs(),
    sandbox: {
      call: (call) => {
        ran.push(`sandbox ${call.path}`);
        return Promise.resolve({
          ok: true,
          value: "sandbox",
          truncated: false,
        });
      },
      resolvePermissions: () => Promise.resolve({}),
    },
    imported: {
      run: ({ call, request }) => {
        ran.push(`imported ${call.path} ${call.export} ${request.name}`);
        return Promise.resolve({ ok: true, value: "server", truncated: false });
      },
    },
  });
  const scope = session("s");
  const data = async (name: string) =>
    (await caller.call({ name, args: {}, session: scope })).result.data;
  assert.equal(await data("calc__add"), "server");
  assert.equal(snapshot.tools.has("calc__nope"), false);
  assert.equal(await data("calc_nope"), "sandbox");
  assert.equal(await data("calc__ship"), "sandbox");
  assert.deepEqual(ran, [
    "imported /mcp:/calc add calc__add",
    "sandbox /mcp:/calc/add.ts",
    "sandbox /b/calc__ship.ts",
  ]);
});

Deno.test("ToolCallHooks keeps events up to the bound but relays them all", () => {
  const relayed: CallEvent[] = [];
  const hooks = new ToolCallHooks({ onEvent: (e) => relayed.push(e) }, [], 2);
  for (let i = 0; i < 3; i++) hooks.onEvent("progress", { pct: i });
  assert.equal(hooks.events.length, 2);
  assert.equal(hooks.eventsCut, true);
  assert.deepEqual(relayed.map((e) => e.seq), [0, 1, 2]);
});

Deno.test("ToolCallHooks refuses ctx.tools and ctx.llm with tool_denied", async () => {
  const hooks = new ToolCallHooks({}, [], 10);
  await assert.rejects(
    hooks.callTool("add", {}, new AbortController().signal),
    { code: "tool_denied" },
  );
  await assert.rejects(hooks.chat(), { code: "tool_denied" });
});

Deno.test("ToolCallHooks keeps at most RESULT_EVENT_BYTES of events, and relays every one", () => {
  const relayed: number[] = [];
  const hooks = new ToolCallHooks(
    { onEvent: (e) => relayed.push(e.seq) },
    [],
    1000,
  );
  const big = "x".repeat(1024 * 1024);
  for (let i = 0; i < 20; i++) hooks.onEvent("log", { message: big });
  hooks.onEvent("log", { message: "small" });
  assert.equal(relayed.length, 21);
  assert.equal(hooks.eventsCut, true);
  const kept = hooks.events.reduce((n, e) => n + eventSize(e), 0);
  assert.ok(kept <= RESULT_EVENT_BYTES, `${kept} bytes kept`);
  assert.equal(hooks.events.length, 7);
  // What is kept is a prefix: no later small event slips in after a cut.
  assert.deepEqual(hooks.events.map((e) => e.seq), [0, 1, 2, 3, 4, 5, 6]);
});

Deno.test("SkillEventLog bounds its kept events in bytes, and keeps the terminal one", () => {
  const log = new SkillEventLog("r", {});
  const big = "x".repeat(1024 * 1024);
  for (let i = 0; i < 20; i++) log.emit("status", { message: big });
  log.emit("skill.completed", {});
  assert.equal(log.truncated, true);
  assert.equal(log.events.at(-1)?.kind, "skill.completed");
  const kept = log.events.reduce((n, e) => n + eventSize(e), 0);
  assert.ok(kept <= RESULT_EVENT_BYTES + 100, `${kept} bytes kept`);
});

Deno.test("ToolCallHooks names the broker only secrets long enough to cut", async () => {
  // A 1-3 character secret cut from answers would garble every "1" or "on"
  // in them, as events skip it (usableSecrets).
  const scopes: EgressScope[] = [];
  const broker = {
    fetch: (_request: unknown, scope: EgressScope) => {
      scopes.push(scope);
      return Promise.reject(new Error("not sent"));
    },
  } as unknown as EgressBroker;
  const hooks = new ToolCallHooks({}, ["on", "s3cret-value"], 10, {
    broker,
    net: ["*"],
    toolkit: "http",
    session: { id: "s", token: "" } as unknown as SessionScope,
  });
  await hooks.fetch({ url: "https://a.test/" }, new AbortController().signal)
    .catch(() => {});
  assert.deepEqual(scopes[0]?.hide, ["s3cret-value"]);
});
