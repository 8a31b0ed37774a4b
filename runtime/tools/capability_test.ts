import assert from "node:assert/strict";
import { encodeResponse } from "../../protocol/responses.ts";
import { join } from "node:path";
import {
  createFakeSandbox,
  type FakeDefinition,
  fakeModule,
} from "../../tests/fixtures/tools/fake_sandbox.ts";
import type { Exchange, OutgoingMessage, SessionScope } from "../capability.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  decodeRequest,
  REQUEST_SCHEMAS,
} from "../../protocol/request_schemas.ts";
import type { RequestType } from "../../protocol/requests.ts";
import type { ToolDefinition, ToolResult } from "../../protocol/tool.ts";
import { loadRegistry } from "../registry/registry.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import type { RegistryChange, ToolEntry } from "../registry/types.ts";
import { ToolIndex } from "../search/tool_index.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { createToolsCapability, reindex } from "./capability.ts";
import { parseHostPolicy } from "./policy.ts";
import { output } from "../../protocol/output.ts";

const SECRET = "tok_9f8e7d6c5b4a";

const FILES: Record<string, FakeDefinition[]> = {
  "read_csv.ts": [{
    kind: "tool",
    name: "read_csv",
    fields: {
      description: "Read a CSV file and return its rows",
      tags: ["files", "csv"],
      input: {
        type: "object",
        properties: {
          path: { type: "string", description: "File to read" },
          opts: {
            type: "object",
            properties: { limit: { type: "integer" } },
          },
        },
        required: ["path"],
      },
    },
  }],
  "write_file.ts": [{
    kind: "tool",
    name: "write_file",
    fields: { description: "Write text to a file", tags: ["files"] },
  }],
  "big_export.ts": [{
    kind: "tool",
    name: "big_export",
    fields: {
      description: "Export a huge CSV table",
      tags: ["csv"],
      defer_loading: true,
    },
  }],
  "gh/toolkit.ts": [{
    kind: "toolkit",
    name: "github",
    fields: {
      config: {
        type: "object",
        properties: {
          token: { type: "string", secret: true },
          repo: { type: "string" },
        },
        required: ["token"],
      },
    },
  }],
  "gh/list_issues.ts": [{
    kind: "tool",
    name: "list_issues",
    fields: { description: "List GitHub issues", tags: ["git"] },
    permissions: "dynamic",
  }],
  "dangerous.ts": [{
    kind: "tool",
    name: "rm_rf",
    fields: { description: "Delete everything", tags: ["danger"] },
  }],
  "net.ts": [{
    kind: "tool",
    name: "fetch_page",
    fields: { description: "Fetch a web page" },
    permissions: { net: ["evil.example"] },
  }],
};

interface Setup {
  dir: string;
  sandbox: ReturnType<typeof createFakeSandbox>;
  tools: ReturnType<typeof createToolsCapability>;
  pushed: OutgoingMessage[];
  close(): Promise<void>;
  registry: Awaited<ReturnType<typeof loadRegistry>>;
}

async function setup(
  policy: Record<string, unknown> = {},
  extra: Record<string, FakeDefinition[]> = {},
): Promise<Setup> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "gh"));
  for (const [file, defs] of Object.entries({ ...FILES, ...extra })) {
    await Deno.writeTextFile(join(dir, file), fakeModule(defs));
  }
  const sandbox = createFakeSandbox();
  const registry = await loadRegistry({ sandbox, dirs: [dir] });
  const pushed: OutgoingMessage[] = [];
  const tools = createToolsCapability({
    registry,
    sandbox,
    configs: createToolkitConfigs(),
    policy: parseHostPolicy(policy),
    broadcast: (m) => pushed.push(m),
    maxEvents: 5,
  });
  return {
    dir,
    sandbox,
    tools,
    pushed,
    registry,
    async close() {
      await tools.close?.();
      await registry.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function session(token = ""): SessionScope & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    id: "sess1",
    token,
    state: new Map(),
    sent,
    send: (m) => sent.push(m),
    signal: new AbortController().signal,
  };
}

function exchange<T extends RequestType>(
  type: T,
  fields: Record<string, unknown>,
  scope: SessionScope,
): Exchange<T> {
  return {
    request: decodeRequest(REQUEST_SCHEMAS[type].parse({
      type,
      id: "req1",
      ...fields,
    })) as Exchange<T>["request"],
    session: scope,
    signal: scope.signal,
  };
}

async function list(
  s: Setup,
  fields: Record<string, unknown> = {},
  scope = session(),
): Promise<string[]> {
  const resp = encodeResponse(
    "tool/list/req",
    "req1",
    await s.tools.handlers["tool/list/req"]!(
      exchange("tool/list/req", fields, scope),
    ),
  );
  assert.equal(resp.type, "tool/list/resp");
  assert.equal(resp.req_id, "req1");
  return (resp.tools as ToolDefinition[]).map((t) => t.name);
}

async function call(
  s: Setup,
  fields: Record<string, unknown>,
  scope = session(),
): Promise<ToolResult> {
  const resp = encodeResponse(
    "tool/call/req",
    "req1",
    await s.tools.handlers["tool/call/req"]!(
      exchange("tool/call/req", { arguments: {}, ...fields }, scope),
    ),
  );
  assert.equal(resp.type, "tool/call/resp");
  assert.equal(resp.req_id, "req1");
  assert.equal(typeof resp.created_at, "number");
  return resp.data as ToolResult;
}

Deno.test("tool/list/req list mode filters by tags (AND) and kind, skips deferred, sorts", async (t) => {
  const s = await setup();
  try {
    await t.step("everything non-deferred, by name", async () => {
      assert.deepEqual(await list(s), [
        "fetch_page",
        "list_issues",
        "read_csv",
        "rm_rf",
        "write_file",
      ]);
    });
    await t.step("tags AND", async () => {
      assert.deepEqual(await list(s, { filter_tags: ["files"] }), [
        "read_csv",
        "write_file",
      ]);
      assert.deepEqual(await list(s, { filter_tags: ["files", "csv"] }), [
        "read_csv",
      ]);
    });
    await t.step("kind = origin or toolkit", async () => {
      assert.equal((await list(s, { filter_kind: "file" })).length, 5);
      assert.deepEqual(await list(s, { filter_kind: "builtin" }), []);
      assert.deepEqual(await list(s, { filter_kind: "github" }), [
        "list_issues",
      ]);
    });
  } finally {
    await s.close();
  }
});

Deno.test("tool/list/req sends complete definitions with parameters from the schema", async () => {
  const s = await setup();
  try {
    const resp = encodeResponse(
      "tool/list/req",
      "req1",
      await s.tools.handlers["tool/list/req"]!(
        exchange("tool/list/req", { filter_tags: ["csv"] }, session()),
      ),
    );
    const [def] = resp.tools as ToolDefinition[];
    assert.equal(def?.name, "read_csv");
    assert.deepEqual(def?.input_parameters.map((p) => [p.name, p.required]), [
      ["path", true],
      ["opts", false],
    ]);
    assert.equal(def?.input_parameters[1]?.properties?.limit?.type, "integer");
    assert.equal(def?.toolkit, null);
    const all = await s.tools.handlers["tool/list/req"]!(
      exchange("tool/list/req", {}, session()),
    );
    const issues = all.tools.find((tool) => tool.name === "list_issues");
    assert.equal(issues?.toolkit, "github");
  } finally {
    await s.close();
  }
});

Deno.test("tool/list/req search mode ranks by relevance and includes deferred only when asked", async () => {
  const s = await setup();
  try {
    const hits = await list(s, { query: "read a csv file" });
    assert.equal(hits[0], "read_csv");
    assert.ok(!hits.includes("big_export"));
    const deferred = await list(s, {
      query: "export csv",
      include_deferred: true,
    });
    assert.equal(deferred[0], "big_export");
    assert.deepEqual(
      await list(s, { query: "csv", filter_tags: ["files"] }),
      ["read_csv"],
    );
  } finally {
    await s.close();
  }
});

Deno.test("the policy hides denied tools and refuses their calls with tool_denied", async () => {
  const s = await setup({
    tools: {
      deny: ["tag:danger"],
      tokens: { admin: { allow: ["rm_rf"] } },
    },
  });
  try {
    assert.ok(!(await list(s)).includes("rm_rf"));
    assert.ok(!(await list(s, { query: "delete" })).includes("rm_rf"));
    await assert.rejects(
      call(s, { tool_name: "rm_rf" }),
      (e: unknown) =>
        e instanceof SkillboxError && e.code === "tool_denied" &&
        /rule "tag:danger"/.test(e.message),
    );
    assert.equal(s.sandbox.calls.length, 0);
    assert.ok((await list(s, {}, session("admin"))).includes("rm_rf"));
    assert.equal(
      (await call(s, { tool_name: "rm_rf" }, session("admin"))).success,
      true,
    );
  } finally {
    await s.close();
  }
});

Deno.test("tool/call/req rejects an unknown tool and a clashing name with unknown_tool", async () => {
  const s = await setup({}, {
    "dup1.ts": [{ kind: "tool", name: "dup" }],
    "dup2.ts": [{ kind: "tool", name: "dup" }],
  });
  try {
    await assert.rejects(
      call(s, { tool_name: "nope" }),
      (e: unknown) =>
        e instanceof SkillboxError && e.code === "unknown_tool" &&
        e.message === 'Unknown tool "nope"',
    );
    await assert.rejects(
      call(s, { tool_name: "dup" }),
      (e: unknown) =>
        e instanceof SkillboxError && e.code === "unknown_tool" &&
        e.message.includes("dup1.ts") && e.message.includes("dup2.ts"),
    );
  } finally {
    await s.close();
  }
});

Deno.test("tool/call/req validates arguments before running anything", async () => {
  const s = await setup();
  try {
    const result = await call(s, {
      tool_name: "read_csv",
      arguments: { opts: { limit: "ten" } },
    });
    assert.equal(result.success, false);
    assert.equal(result.error_code, "schema_violation");
    assert.match(result.error ?? "", /"path" is required/);
    assert.match(result.error ?? "", /"opts\.limit" must be of type integer/);
    assert.equal(typeof result.duration_ms, "number");
    assert.equal(s.sandbox.calls.length, 0);
  } finally {
    await s.close();
  }
});

Deno.test("tool/call/req runs with the capped timeout and maps Output fields", async () => {
  const s = await setup({ max_timeout_seconds: 2 });
  try {
    s.sandbox.behaviours.set("read_csv", () => ({
      ok: true,
      value: output({
        data: { rows: 3 },
        summary: "3 rows",
        exit_code: 0,
        break_loop: true,
      }),
      truncated: true,
    }));
    const result = await call(s, {
      tool_name: "read_csv",
      arguments: { path: "a.csv" },
      timeout: 60,
    });
    assert.deepEqual(
      [result.success, result.data, result.summary, result.exit_code],
      [true, { rows: 3 }, "3 rows", 0],
    );
    assert.equal(result.truncated, true);
    assert.equal(s.sandbox.calls[0]?.timeoutMs, 2000);
    assert.deepEqual(s.sandbox.calls[0]?.args, { path: "a.csv" });
    const outcome = await s.tools.caller.call({
      name: "read_csv",
      args: { path: "b.csv" },
      session: session(),
      timeoutSeconds: 1,
    });
    assert.equal(outcome.breakLoop, true);
    assert.equal(s.sandbox.calls[1]?.timeoutMs, 1000);
  } finally {
    await s.close();
  }
});

Deno.test("tool/call/req turns a failure in the tool into success: false", async () => {
  const s = await setup();
  try {
    s.sandbox.behaviours.set("write_file", () => ({
      ok: false,
      code: "tool_error",
      message: "Disk full",
      retryable: false,
    }));
    const result = await call(s, { tool_name: "write_file" });
    assert.deepEqual(
      [result.success, result.error_code, result.error],
      [false, "tool_error", "Disk full"],
    );
    s.sandbox.behaviours.set("write_file", () => {
      throw new Error("pipe broke");
    });
    const crashed = await call(s, { tool_name: "write_file" });
    assert.deepEqual(
      [crashed.success, crashed.error_code, crashed.error],
      [false, "sandbox_crash", "pipe broke"],
    );
  } finally {
    await s.close();
  }
});

Deno.test("tool/call/req streams events with increasing seq and always collects them", async () => {
  const s = await setup();
  try {
    s.sandbox.behaviours.set("write_file", (_call, hooks) => {
      for (let i = 0; i < 7; i++) hooks.onEvent("progress", { pct: i * 10 });
      return { ok: true, value: "done", truncated: false };
    });
    const streaming = session();
    const result = await call(
      s,
      { tool_name: "write_file", streaming: true },
      streaming,
    );
    assert.deepEqual(
      streaming.sent.map((m) => [m.type, m.req_id, m.kind, m.seq]),
      Array.from(
        { length: 7 },
        (_, i) => ["tool/event", "req1", "progress", i],
      ),
    );
    assert.deepEqual(result.events.map((e) => e.seq), [0, 1, 2, 3, 4]);
    assert.equal(result.truncated, true, "events past maxEvents are cut");
    const quiet = session();
    const again = await call(s, { tool_name: "write_file" }, quiet);
    assert.equal(quiet.sent.length, 0);
    assert.equal(again.events.length, 5);
  } finally {
    await s.close();
  }
});

Deno.test("a toolkit's tool needs its configuration and gets it, secrets scrubbed on the way out", async () => {
  const s = await setup({ permissions: { net: ["api.github.com"] } });
  const configs = createToolkitConfigs();
  const tools = createToolsCapability({
    registry: s.registry,
    sandbox: s.sandbox,
    configs,
    policy: parseHostPolicy({ permissions: { net: ["api.github.com"] } }),
  });
  try {
    const scope = session();
    const before = encodeResponse(
      "tool/call/req",
      "req1",
      await tools.handlers["tool/call/req"]!(
        exchange(
          "tool/call/req",
          { tool_name: "list_issues", arguments: {} },
          scope,
        ),
      ),
    );
    const unconfigured = before.data as ToolResult;
    assert.equal(unconfigured.error_code, "tool_error");
    assert.match(
      unconfigured.error ?? "",
      /toolkit "github" is not configured/,
    );
    assert.equal(s.sandbox.calls.length, 0);

    const kit = s.registry.snapshot.toolkits.get("github")!;
    assert.equal(
      configs.configure(scope, kit, { token: SECRET, repo: "a/b" }),
      null,
    );
    s.sandbox.dynamic.set(
      join(s.dir, "gh", "list_issues.ts"),
      (config) => ({ net: [config.repo === "a/b" ? "api.github.com" : "x"] }),
    );
    s.sandbox.behaviours.set("list_issues", (c, hooks) => {
      hooks.onEvent("log", {
        level: "info",
        message: `using ${c.config.token}`,
      });
      return {
        ok: false,
        code: "tool_error",
        message: `401 for ${c.config.token}`,
        retryable: false,
      };
    });
    const resp = encodeResponse(
      "tool/call/req",
      "req1",
      await tools.handlers["tool/call/req"]!(
        exchange("tool/call/req", {
          tool_name: "list_issues",
          arguments: {},
          streaming: true,
        }, scope),
      ),
    );
    const sandboxCall = s.sandbox.calls[0]!;
    assert.deepEqual(sandboxCall.config, { token: SECRET, repo: "a/b" });
    assert.deepEqual(sandboxCall.grant.net, ["api.github.com"]);
    const everything = JSON.stringify([resp, scope.sent]);
    assert.ok(!everything.includes(SECRET), everything);
    assert.match(everything, /401 for \[redacted\]/);

    // A tool of no toolkit never sees another toolkit's configuration.
    encodeResponse(
      "tool/call/req",
      "req1",
      await tools.handlers["tool/call/req"]!(
        exchange(
          "tool/call/req",
          { tool_name: "write_file", arguments: {} },
          scope,
        ),
      ),
    );
    assert.deepEqual(s.sandbox.calls[1]?.config, {});
  } finally {
    await tools.close?.();
    await s.close();
  }
});

Deno.test("tool/call/req refuses a grant beyond the permission cap, naming the permission", async () => {
  const s = await setup();
  try {
    await assert.rejects(
      call(s, { tool_name: "fetch_page" }),
      (e: unknown) =>
        e instanceof SkillboxError && e.code === "tool_denied" &&
        /Permission "net" for "evil\.example"/.test(e.message),
    );
    assert.equal(s.sandbox.calls.length, 0);
  } finally {
    await s.close();
  }
});

Deno.test("a registry change updates list and search and pushes tools.changed", async () => {
  const s = await setup();
  try {
    await Deno.writeTextFile(
      join(s.dir, "new.ts"),
      fakeModule([{
        kind: "tool",
        name: "summarize_pdf",
        fields: { description: "Summarize a PDF document" },
      }]),
    );
    await Deno.remove(join(s.dir, "write_file.ts"));
    await s.registry.reload();
    const names = await list(s);
    assert.ok(names.includes("summarize_pdf"));
    assert.ok(!names.includes("write_file"));
    assert.deepEqual(await list(s, { query: "pdf" }), ["summarize_pdf"]);
    assert.equal(s.pushed.length, 1);
    const push = s.pushed[0]!;
    assert.equal(push.type, "invoke/event");
    assert.equal(push.kind, "tools.changed");
    assert.ok(!("req_id" in push));
    assert.deepEqual(push.data, {
      added: ["summarize_pdf"],
      changed: [],
      removed: ["write_file"],
      toolkits: [],
      skills: [],
    });
  } finally {
    await s.close();
  }
});

function snapshotOf(tools: Record<string, string>) {
  return buildSnapshot(
    Object.entries(tools).map(([name, description]) => ({
      origin: "file" as const,
      root: "/s",
      module: {
        path: `/s/${name}.ts`,
        hash: description,
        error: null,
        definitions: [{
          export: "default",
          kind: "tool" as const,
          name,
          permissions: {},
          runnable: true,
          fields: { description, input: { type: "object" } },
        }],
      },
    })),
  );
}

const none = { added: [], changed: [], removed: [] };

function change(fields: Partial<RegistryChange>): RegistryChange {
  return {
    snapshot: buildSnapshot([]),
    tools: none,
    toolkits: none,
    skills: none,
    agentSkillsChanged: false,
    errorsChanged: false,
    ...fields,
  };
}

// The push the capability broadcasts for one reload, if any.
function pushedFor(reload: RegistryChange): OutgoingMessage | undefined {
  let follow: ((change: RegistryChange) => void) | undefined;
  const pushed: OutgoingMessage[] = [];
  const tools = createToolsCapability({
    registry: {
      snapshot: buildSnapshot([]),
      onChange: (listener) => {
        follow = listener;
        return () => {};
      },
    },
    configs: createToolkitConfigs(),
    sandbox: {
      call: () => Promise.reject(new Error("unused")),
      resolvePermissions: () => Promise.resolve({}),
    },
    broadcast: (message) => pushed.push(message),
  });
  follow?.(reload);
  void tools.close?.();
  assert.ok(pushed.length <= 1);
  return pushed[0];
}

Deno.test("reindex() removes, adds and replaces the tools a reload touched, and only those", () => {
  const before = snapshotOf({ a: "Alpha", b: "Beta", c: "Gamma" });
  const index = new ToolIndex<ToolEntry>(before.tools.values());
  const untouched = before.tools.get("c");
  const after = snapshotOf({ b: "Bravo", c: "Gamma", d: "Delta" });
  reindex(
    index,
    change({
      snapshot: after,
      tools: { added: ["d"], changed: ["b"], removed: ["a"] },
    }),
  );
  const found = (query: string) => index.search(query).map((hit) => hit.entry);
  assert.deepEqual(found("alpha"), []);
  assert.equal(found("bravo")[0]?.description, "Bravo");
  assert.equal(found("delta")[0]?.description, "Delta");
  assert.equal(found("gamma")[0], untouched);
  assert.deepEqual(
    index.search("bravo").map((hit) => hit.entry.name),
    ["b"],
  );
});

Deno.test("a reload pushes tools.changed listing tools, toolkits and skills, seq the generation", () => {
  const snapshot = snapshotOf({ t: "T" });
  const event = pushedFor(change({
    snapshot,
    tools: { added: ["t"], changed: [], removed: ["old"] },
    toolkits: { added: [], changed: ["kit"], removed: [] },
    skills: { added: [], changed: [], removed: ["s"] },
  }));
  assert.ok(event);
  assert.equal(event.type, "invoke/event");
  assert.equal(event.kind, "tools.changed");
  assert.equal(event.seq, snapshot.generation);
  assert.deepEqual(event.data, {
    added: ["t"],
    changed: [],
    removed: ["old"],
    toolkits: ["kit"],
    skills: ["s"],
  });
});

Deno.test("a reload that changed only errors pushes nothing", () => {
  assert.equal(pushedFor(change({ errorsChanged: true })), undefined);
  assert.notEqual(
    pushedFor(change({ skills: { ...none, added: ["s"] } })),
    undefined,
  );
});
