import assert from "node:assert/strict";
import { isOutput, output } from "../../protocol/output.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  decodeRequest,
  REQUEST_SCHEMAS,
} from "../../protocol/request_schemas.ts";
import { encodeResponse } from "../../protocol/responses.ts";
import { type CallEvent, toolOutcome } from "../../protocol/tool.ts";
import type { SkillDefinition, SkillResult } from "../../protocol/skill.ts";
import { SKILL_EVENT_KINDS } from "../../protocol/codes.ts";
import {
  createSkillsCapability,
  hostLlm,
  registryToolHost,
  type SkillsCapabilityOptions,
} from "./capability.ts";
import { codeSkillRecord, type SkillRecord } from "./catalog.ts";
import {
  aborted,
  fakeSession,
  fakeTools,
  inProcessSandbox,
  scriptedProvider,
  type SkillBody,
  skillMdRecord,
} from "../../tests/support/skill_fakes.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import type { SessionToolCall } from "../tools/call.ts";

function codeSkill(
  name: string,
  fields: Record<string, unknown> = {},
): SkillRecord {
  return codeSkillRecord({
    path: `/skills/${name}.ts`,
    export: "default",
    hash: "h",
    name,
    runnable: true,
    fields: { description: `The ${name} skill`, ...fields },
  }, { source: "system" });
}

function setup(
  records: SkillRecord[],
  bodies: Record<string, SkillBody> = {},
  extra: Partial<SkillsCapabilityOptions> = {},
) {
  const sandbox = inProcessSandbox(
    Object.fromEntries(
      Object.entries(bodies).map(([n, b]) => [`/skills/${n}.ts`, b]),
    ),
  );
  const cap = createSkillsCapability({
    catalog: { skills: () => Promise.resolve(records) },
    tools: fakeTools({}),
    sandbox,
    ...extra,
  });
  const session = fakeSession();
  const call = async (
    fields: Record<string, unknown>,
    signal: AbortSignal = session.signal,
  ) => {
    const request = decodeRequest(REQUEST_SCHEMAS["skill/call/req"].parse({
      type: "skill/call/req",
      id: "req-1",
      ...fields,
    }));
    const resp = encodeResponse(
      "skill/call/req",
      request.id,
      await cap.handlers["skill/call/req"]!({ request, session, signal }),
    );
    return resp as typeof resp & { data: SkillResult | null; error: unknown };
  };
  const discover = async (fields: Record<string, unknown> = {}) => {
    const request = decodeRequest(REQUEST_SCHEMAS["skill/discover/req"].parse({
      type: "skill/discover/req",
      id: "req-d",
      ...fields,
    }));
    const resp = encodeResponse(
      "skill/discover/req",
      request.id,
      await cap.handlers["skill/discover/req"]!({
        request,
        session,
        signal: session.signal,
      }),
    );
    return resp.skills as SkillDefinition[];
  };
  return { cap, session, sandbox, call, discover };
}

const kinds = (events: CallEvent[]) => events.map((e) => e.kind);

const REQUIRED = [
  "name",
  "version",
  "description",
  "triggers",
  "status",
  "when_to_use",
  "argument_hint",
  "source",
];

Deno.test("skill/discover/req lists every required field and redacts llm_config", async () => {
  const { discover } = setup([
    codeSkill("a", {
      llm_config: {
        provider_name: "openai",
        provider_credentials: { api_key: "sk-secret-1" },
        provider_config: { model: "gpt", api_key: "sk-secret-2" },
      },
    }),
  ]);
  const [skill] = await discover();
  assert.ok(skill);
  for (const field of REQUIRED) assert.ok(field in skill, field);
  for (const field of ["input_schema", "output_schema", "tools", "metadata"]) {
    assert.ok(field in skill, field);
  }
  assert.deepEqual(skill.llm_config?.provider_credentials, {});
  assert.ok(!JSON.stringify(skill).includes("sk-secret"));
});

Deno.test("skill/discover/req filters tags and categories with AND, hides archived", async (t) => {
  const { discover } = setup(
    [
      codeSkill("csv", { tags: ["data", "csv"], category: "data" }),
      codeSkill("json", { tags: ["data", "json"], category: "Data" }),
      codeSkill("todo", { tags: ["code"], category: "code" }),
      codeSkill("old", { tags: ["data"], category: "data" }),
    ],
    {},
    { archived: ["old"] },
  );
  const names = (skills: SkillDefinition[]) => skills.map((s) => s.name);
  await t.step("no filter lists all but archived, sorted", async () => {
    assert.deepEqual(names(await discover()), ["csv", "json", "todo"]);
  });
  await t.step("tags: every listed tag must be present", async () => {
    assert.deepEqual(names(await discover({ filter_tags: ["data"] })), [
      "csv",
      "json",
    ]);
    assert.deepEqual(names(await discover({ filter_tags: ["DATA", "csv"] })), [
      "csv",
    ]);
    assert.deepEqual(
      names(await discover({ filter_tags: ["csv", "json"] })),
      [],
    );
  });
  await t.step("categories: case-insensitive, AND", async () => {
    assert.deepEqual(names(await discover({ filter_categories: ["data"] })), [
      "csv",
      "json",
    ]);
    assert.deepEqual(
      names(await discover({ filter_categories: ["data", "code"] })),
      [],
    );
    assert.deepEqual(
      names(
        await discover({ filter_categories: ["code"], filter_tags: ["code"] }),
      ),
      ["todo"],
    );
  });
});

Deno.test("skill/discover/req shows a skill with a missing tool as Blocked with the reason", async () => {
  const { discover } = setup([
    codeSkill("a", { tools: ["fetch_page"], toolkits: ["github"] }),
  ]);
  const [skill] = await discover();
  assert.equal(skill?.status, "Blocked");
  assert.match(
    String(skill?.metadata?.blocked_reason),
    /tool "fetch_page" and toolkit "github"/,
  );
});

Deno.test("skill/call/req answers unknown and archived skills with unknown_skill and data null", async () => {
  const { call } = setup([codeSkill("old")], {}, { archived: ["old"] });
  for (const name of ["nope", "old"]) {
    const resp = await call({ name });
    assert.equal(resp.type, "skill/call/resp");
    assert.equal(resp.req_id, "req-1");
    assert.ok("data" in resp);
    assert.equal(resp.data, null);
    assert.deepEqual(Object.keys(resp.error as object).sort(), [
      "code",
      "message",
      "retryable",
    ]);
    assert.equal((resp.error as { code: string }).code, "unknown_skill");
    assert.match(
      (resp.error as { message: string }).message,
      new RegExp(`"${name}"`),
    );
  }
});

Deno.test("skill/call/req refuses arguments that break input_schema, naming the field", async () => {
  let ran = false;
  const { call } = setup([
    codeSkill("a", {
      input_schema: {
        type: "object",
        properties: { rows: { type: "integer" } },
        required: ["rows"],
      },
    }),
  ], { a: () => (ran = true) });
  const missing = await call({ name: "a", arguments: {} });
  assert.equal(missing.data?.success, false);
  assert.equal(missing.data?.error_code, "schema_violation");
  assert.match(missing.data?.error ?? "", /"rows" is required/);
  const wrong = await call({ name: "a", arguments: { rows: "many" } });
  assert.match(
    wrong.data?.error ?? "",
    /"rows" must be of type integer, got string/,
  );
  assert.equal(ran, false);
  assert.deepEqual(kinds(wrong.data!.events), [
    "skill.started",
    "skill.failed",
  ]);
});

Deno.test("skill/call/req streams events live in order with seq from 0, and collects them", async () => {
  const provider = scriptedProvider([{ tokens: ["Hel", "lo"] }]);
  const { call, session } = setup(
    [codeSkill("a", { tools: ["echo"] })],
    {
      a: async (_args, ctx) => {
        ctx.progress(10, "start");
        ctx.status("working");
        ctx.log("info", "a line");
        await ctx.tools.call("echo", { text: "hi" });
        const reply = await ctx.llm.chat({
          messages: [{ role: "user", content: "hi" }],
        });
        return output({ data: { reply: reply.text }, summary: "said hello" });
      },
    },
    {
      tools: fakeTools({ echo: { run: (a) => a.text } }),
      llm: () => provider,
    },
  );
  const resp = await call({ name: "a", streaming: true });
  const result = resp.data!;
  assert.equal(result.success, true);
  assert.deepEqual(result.data, { reply: "Hello" });
  assert.equal(result.summary, "said hello");
  assert.deepEqual(kinds(result.events), [
    "skill.started",
    "progress",
    "status",
    "log",
    "tool.started",
    "tool.completed",
    "llm.started",
    "llm.token",
    "llm.token",
    "llm.completed",
    "skill.completed",
  ]);
  assert.deepEqual(
    result.events.map((e) => e.seq),
    result.events.map((_, i) => i),
  );
  const tokens = result.events.filter((e) => e.kind === "llm.token");
  assert.deepEqual(tokens.map((e) => e.data), [{ text: "Hel", turn: 1 }, {
    text: "lo",
    turn: 1,
  }]);
  const completed = result.events.find((e) => e.kind === "llm.completed")!;
  assert.deepEqual(completed.data, {
    turn: 1,
    usage: { input_tokens: 5, output_tokens: 3 },
    stop_reason: "end_turn",
  });
  const started = result.events.find((e) => e.kind === "tool.started")!;
  assert.equal(started.data.tool, "echo");
  assert.equal(started.data.arguments, '{"text":"hi"}');
  assert.equal(
    typeof result.events.find((e) => e.kind === "tool.completed")!.data
      .duration_ms,
    "number",
  );
  // Live: the same events, as skill/event messages echoing req_id.
  assert.deepEqual(
    session.sent.map((m) => [m.type, m.req_id, m.seq]),
    result.events.map((e) => ["skill/event", "req-1", e.seq]),
  );
  for (const kind of kinds(result.events)) {
    assert.ok(
      (SKILL_EVENT_KINDS as readonly string[]).includes(kind) ||
        ["progress", "status", "log"].includes(kind),
    );
  }
});

Deno.test("skill/call/req with streaming false sends nothing live but still collects events", async () => {
  const { call, session } = setup([codeSkill("a")], {
    a: (_args, ctx) => {
      ctx.status("quiet");
      return 1;
    },
  });
  const resp = await call({ name: "a", streaming: false });
  assert.equal(session.sent.length, 0);
  assert.deepEqual(kinds(resp.data!.events), [
    "skill.started",
    "status",
    "skill.completed",
  ]);
});

Deno.test("ctx.tools.call reaches declared tools and toolkits only, denying the rest inside the skill", async () => {
  let denial = "";
  const tools = fakeTools(
    {
      read_file: { run: () => "content", toolkit: "filesystem" },
      grep: { run: () => [], toolkit: "filesystem" },
      run_command: { run: () => "pwned" },
    },
    { filesystem: ["read_file", "grep"] },
  );
  const { call } = setup([codeSkill("a", { toolkits: ["filesystem"] })], {
    a: async (_args, ctx) => {
      assert.equal(await ctx.tools.call("read_file", { path: "x" }), "content");
      await ctx.tools.call("grep", { pattern: "x" });
      try {
        await ctx.tools.call("run_command", { cmd: "rm -rf /" });
      } catch (error) {
        denial = (error as Error).message;
      }
      return "done";
    },
  }, { tools });
  const result = (await call({ name: "a" })).data!;
  assert.equal(result.success, true);
  assert.match(
    denial,
    /cannot call tool "run_command": it is not in the skill's "tools" or "toolkits"/,
  );
  assert.deepEqual(tools.calls.map((c) => c.name), ["read_file", "grep"]);
  const failed = result.events.find((e) => e.kind === "tool.failed")!;
  assert.equal(failed.data.tool, "run_command");
  assert.equal(failed.data.error_code, "tool_denied");
});

Deno.test("a failing tool call emits tool.failed and throws inside the skill", async () => {
  const { call } = setup([codeSkill("a", { tools: ["boom"] })], {
    a: async (_args, ctx) => await ctx.tools.call("boom", {}),
  }, {
    tools: fakeTools({
      boom: {
        run: () => {
          throw new Error("disk on fire");
        },
      },
    }),
  });
  const result = (await call({ name: "a" })).data!;
  assert.equal(result.success, false);
  assert.equal(result.error_code, "skill_error");
  assert.match(result.error ?? "", /disk on fire/);
  assert.deepEqual(kinds(result.events), [
    "skill.started",
    "tool.started",
    "tool.failed",
    "skill.failed",
  ]);
});

Deno.test("a tool's own progress and logs are relayed as the skill's events, tagged with the tool", async () => {
  const { call } = setup([codeSkill("a", { tools: ["slow"] })], {
    a: async (_args, ctx) => await ctx.tools.call("slow", {}),
  }, {
    tools: fakeTools({
      slow: {
        run: (_args, _signal, emit) => {
          emit("progress", { pct: 50, message: "half" });
          emit("log", { level: "info", message: "working" });
          // Lifecycle kinds are the skill's own: a tool cannot forge them.
          emit("skill.completed", { forged: true });
          return "done";
        },
      },
    }),
  });
  const result = (await call({ name: "a", streaming: true })).data!;
  assert.equal(result.success, true, String(result.error));
  assert.deepEqual(kinds(result.events), [
    "skill.started",
    "tool.started",
    "progress",
    "log",
    "tool.completed",
    "skill.completed",
  ]);
  assert.deepEqual(result.events[2]?.data, {
    pct: 50,
    message: "half",
    tool: "slow",
  });
});

Deno.test("the LLM call after max_turns fails and the skill ends with max_turns_exceeded", async () => {
  const provider = scriptedProvider([{ text: "1" }, { text: "2" }, {
    text: "3",
  }]);
  let caught = "";
  const { call } = setup([codeSkill("a", { max_turns: 2 })], {
    a: async (_args, ctx) => {
      await ctx.llm.chat({ messages: [{ role: "user", content: "1" }] });
      await ctx.llm.chat({ messages: [{ role: "user", content: "2" }] });
      try {
        await ctx.llm.chat({ messages: [{ role: "user", content: "3" }] });
      } catch (error) {
        caught = (error as Error).message; // the skill swallows it
      }
      return "pretend success";
    },
  }, { llm: () => provider });
  const result = (await call({ name: "a" })).data!;
  assert.equal(result.success, false);
  assert.equal(result.error_code, "max_turns_exceeded");
  assert.match(caught, /max_turns \(2\)/);
  assert.equal(provider.requests.length, 2);
  assert.equal(result.events.filter((e) => e.kind === "llm.started").length, 2);
});

Deno.test("output that breaks output_schema fails with schema_violation saying where", async () => {
  const { call } = setup([
    codeSkill("a", {
      output_schema: {
        type: "object",
        properties: { rows: { type: "integer" } },
        required: ["rows"],
      },
    }),
  ], { a: () => ({ rows: "3" }) });
  const result = (await call({ name: "a" })).data!;
  assert.equal(result.error_code, "schema_violation");
  assert.match(
    result.error ?? "",
    /output_schema: "rows" must be of type integer, got string/,
  );
  assert.equal(result.events.at(-1)?.kind, "skill.failed");
});

Deno.test("the effective timeout is the smallest of request, skill and policy", async (t) => {
  const hang: SkillBody = (_args, ctx) =>
    aborted(ctx.signal).then(() => new Promise(() => {}));
  await t.step("skill timeout_seconds below the request's", async () => {
    const { call, sandbox } = setup(
      [codeSkill("a", { timeout_seconds: 0.05 })],
      { a: hang },
    );
    const result = (await call({ name: "a", timeout: 60 })).data!;
    assert.equal(result.error_code, "timeout");
    assert.match(result.error ?? "", /timed out after 50 ms/);
    assert.ok(sandbox.calls[0]!.timeoutMs <= 50);
  });
  await t.step("policy cap below both", async () => {
    const { call } = setup([codeSkill("a", { timeout_seconds: 30 })], {
      a: hang,
    }, {
      limits: { maxTimeoutSeconds: 0.04 },
    });
    const result = (await call({ name: "a", timeout: 60 })).data!;
    assert.match(result.error ?? "", /timed out after 40 ms/);
  });
});

Deno.test("a session that ends cancels the skill and its in-flight LLM call", async () => {
  let llmSignal: AbortSignal | null = null;
  const inFlight = Promise.withResolvers<void>();
  const provider = scriptedProvider([async (_req, signal) => {
    llmSignal = signal;
    inFlight.resolve();
    await aborted(signal);
    throw signal.reason;
  }]);
  const { call, session } = setup([codeSkill("a")], {
    a: async (_args, ctx) =>
      await ctx.llm.chat({ messages: [{ role: "user", content: "hi" }] }),
  }, { llm: () => provider });
  const pending = call({ name: "a" });
  await inFlight.promise; // end the session once the LLM call is in flight
  session.end();
  const result = (await pending).data!;
  assert.equal(result.success, false);
  assert.match(result.error ?? "", /cancelled: the session ended/);
  assert.equal(llmSignal!.aborted, true);
  assert.equal(result.events.at(-1)?.kind, "skill.failed");
});

Deno.test("ctx.metadata is the call's metadata and ctx.llm honours llm_override", async () => {
  let seen: unknown = null;
  let chosen: unknown = null;
  const provider = scriptedProvider([{ text: "ok" }]);
  const { call } = setup([
    codeSkill("a", { llm_config: { provider_name: "anthropic" } }),
  ], {
    a: async (_args, ctx) => {
      seen = ctx.metadata;
      return (await ctx.llm.chat({
        messages: [{ role: "user", content: "x" }],
      })).text;
    },
  }, {
    llm: (configs) => {
      chosen = configs;
      return provider;
    },
  });
  const override = { provider_name: "openai", provider_config: { model: "m" } };
  const result = (await call({
    name: "a",
    metadata: { trace: "t1" },
    llm_override: override,
  })).data!;
  assert.equal(result.data, "ok");
  assert.deepEqual(seen, { trace: "t1" });
  const c = chosen as {
    override: { providerName: string; providerConfig: unknown };
    skill: { providerName: string };
  };
  assert.equal(c.override.providerName, "openai");
  assert.deepEqual(c.override.providerConfig, { model: "m" });
  assert.equal(c.skill.providerName, "anthropic");
});

Deno.test("a skill cannot forge lifecycle events through the sandbox hooks", async () => {
  const cap = createSkillsCapability({
    catalog: { skills: () => Promise.resolve([codeSkill("a")]) },
    tools: fakeTools({}),
    sandbox: {
      call(_call, hooks) {
        hooks.onEvent("skill.completed", { forged: true });
        hooks.onEvent("llm.token", { text: "fake" });
        hooks.onEvent("progress", { pct: 50 });
        return Promise.resolve({ ok: true, value: 1, truncated: false });
      },
    },
  });
  const session = fakeSession();
  const request = decodeRequest(REQUEST_SCHEMAS["skill/call/req"].parse({
    type: "skill/call/req",
    id: "r",
    name: "a",
  }));
  const resp = await cap.handlers["skill/call/req"]!({
    request,
    session,
    signal: session.signal,
  });
  const result = resp.result!;
  assert.deepEqual(kinds(result.events), [
    "skill.started",
    "progress",
    "skill.completed",
  ]);
  assert.equal(result.events.at(-1)?.data.forged, undefined);
});

Deno.test("an instruction skill runs in the agent loop: intention recorded and stripped, results fed back", async () => {
  const record = skillMdRecord(
    "---\nname: count\ndescription: Count files\ntools: [list]\noutput_schema:\n  type: object\n  required: [n]\n  properties:\n    n: {type: integer}\n---\nCount the files.",
  );
  const tools = fakeTools({
    list: {
      prompt: "Lists files.",
      inputSchema: { type: "object", properties: { dir: { type: "string" } } },
      run: () => ["a", "b", "c"],
    },
  });
  const provider = scriptedProvider([
    {
      tool_calls: [{
        id: "c1",
        name: "list",
        arguments: { dir: ".", intention: "See what is there" },
      }],
    },
    { tokens: ["```json\n", '{"n": 3}', "\n```"] },
  ]);
  const { call } = setup([record], {}, { tools, llm: () => provider });
  const result = (await call({ name: "count", arguments: {} })).data!;
  assert.equal(result.success, true, result.error ?? "");
  assert.deepEqual(result.data, { n: 3 });
  assert.deepEqual(tools.calls, [{ name: "list", args: { dir: "." } }]);
  const started = result.events.find((e) => e.kind === "tool.started")!;
  assert.equal(started.data.intention, "See what is there");
  // The model was offered the tool with an intention field and its prompt.
  const first = provider.requests[0]!;
  assert.match(first.system ?? "", /Count the files\./);
  assert.match(first.system ?? "", /### list\nLists files\./);
  assert.ok(
    "intention" in (first.tools![0]!.input_schema.properties as object),
  );
  // The tool result went back as a tool message.
  const second = provider.requests[1]!;
  assert.deepEqual(second.messages.at(-1), {
    role: "tool",
    tool_call_id: "c1",
    content: '["a","b","c"]',
  });
});

Deno.test("a tool result with break_loop ends the agent loop with that result", async () => {
  const record = skillMdRecord(
    "---\nname: stop\ndescription: Stops early\ntools: [final]\n---\nCall final.",
  );
  const tools = fakeTools({
    final: {
      run: () =>
        output({ data: { answer: 42 }, summary: "done", break_loop: true }),
    },
  });
  const provider = scriptedProvider([
    { tool_calls: [{ id: "c1", name: "final", arguments: {} }] },
  ]);
  const { call } = setup([record], {}, { tools, llm: () => provider });
  const result = (await call({ name: "stop" })).data!;
  assert.equal(result.success, true);
  assert.deepEqual(result.data, { answer: 42 });
  assert.equal(result.summary, "done");
  assert.equal(provider.requests.length, 1);
});

Deno.test("the agent loop stops at max_turns with max_turns_exceeded", async () => {
  const record = skillMdRecord(
    "---\nname: loop\ndescription: Loops\ntools: [t]\nmax_turns: 2\n---\nLoop.",
  );
  const again = { tool_calls: [{ id: "c", name: "t", arguments: {} }] };
  const provider = scriptedProvider([again, again, again]);
  const { call } = setup([record], {}, {
    tools: fakeTools({ t: { run: () => "more" } }),
    llm: () => provider,
  });
  const result = (await call({ name: "loop" })).data!;
  assert.equal(result.error_code, "max_turns_exceeded");
  assert.equal(provider.requests.length, 2);
});

Deno.test("a Blocked skill refuses calls with the reason", async () => {
  const { call } = setup([codeSkill("a", { tools: ["missing"] })], {
    a: () => 1,
  });
  const result = (await call({ name: "a" })).data!;
  assert.equal(result.error_code, "skill_error");
  assert.match(result.error ?? "", /Blocked.*tool "missing"/);
});

const GREP: ToolEntry = {
  kind: "tool",
  name: "grep",
  description: "Search files",
  version: "1.0.0",
  tags: [],
  inputSchema: { type: "object", properties: { q: { type: "string" } } },
  outputSchema: {},
  streaming: true,
  idempotent: true,
  deferLoading: false,
  toolkit: "filesystem",
  prompt: "Use a regex.",
  permissions: {},
  isolation: "warm",
  path: "/s/grep.ts",
  export: "default",
  hash: "h",
  origin: "builtin",
};

const SNAPSHOT = {
  generation: 1,
  tools: new Map([["grep", GREP]]),
  toolkits: new Map(),
  skills: new Map(),
  blocked: new Map(),
  agentSkills: [],
  errors: [],
} as unknown as RegistrySnapshot;

const session = {
  id: "s",
  token: "",
  state: new Map(),
  send() {},
  signal: new AbortController().signal,
};

Deno.test("registryToolHost() hands out the registry's tool as the domain tool, guidance included", () => {
  const host = registryToolHost({
    registry: { snapshot: SNAPSHOT },
    caller: { call: () => Promise.reject(new Error("unused")) },
  });
  const tool = host.tool("grep");
  assert.equal(tool?.inputSchema, GREP.inputSchema);
  assert.equal(tool?.prompt, "Use a regex.");
  assert.equal(host.tool("nope"), undefined);
});

Deno.test("registryToolHost() throws a failed outcome with its code, and makes a break_loop an output", async () => {
  const seen: SessionToolCall[] = [];
  const outcomes = [
    {
      result: toolOutcome({
        success: false,
        toolName: "grep",
        durationMs: 1,
        errorCode: "timeout",
        error: "Timed out",
      }),
      breakLoop: false,
    },
    {
      result: toolOutcome({
        success: true,
        toolName: "grep",
        durationMs: 1,
        data: { hits: 1 },
      }),
      breakLoop: true,
    },
  ];
  const host = registryToolHost({
    registry: { snapshot: SNAPSHOT },
    caller: {
      call: (request) => {
        seen.push(request);
        return Promise.resolve({ ...outcomes.shift()!, entry: GREP });
      },
    },
  });
  await assert.rejects(
    host.call("grep", { q: "x" }, {
      session,
      signal: session.signal,
      timeoutMs: 1500,
    }),
    (error) => {
      assert.ok(error instanceof SkillboxError);
      assert.equal(error.code, "timeout");
      assert.equal(error.message, "Timed out");
      return true;
    },
  );
  assert.equal(seen[0]?.timeoutSeconds, 1.5);
  const stopped = await host.call("grep", {}, {
    session,
    signal: session.signal,
    timeoutMs: 1000,
  });
  assert.ok(isOutput(stopped));
  assert.equal(stopped.break_loop, true);
  assert.deepEqual(stopped.data, { hits: 1 });
});

Deno.test("hostLlm() evicts one provider at a time, so a client cycling overrides keeps others' providers", () => {
  const llm = hostLlm([{
    provider_name: "openai",
    provider_credentials: { api_key: "sk-host" },
    provider_config: { model: "m" },
    is_default: true,
  }]);
  const mine = llm({ override: null, skill: null });
  const cycle = (i: number) =>
    llm({
      override: {
        providerName: "openai",
        providerCredentials: {},
        providerConfig: { model: `m${i}` },
        isDefault: false,
      },
      skill: null,
    });
  for (let i = 0; i < 31; i++) cycle(i); // the cache is full now
  assert.equal(llm({ override: null, skill: null }), mine);
  for (let i = 31; i < 100; i++) {
    cycle(i);
    // In use between the other client's calls, so never the least recent.
    assert.equal(llm({ override: null, skill: null }), mine);
  }
});

Deno.test("skill/discover/req lists skills in code-unit order, as tools are", async () => {
  // localeCompare's order depends on the machine's locale and puts "a"
  // before "B"; every other list on the wire (tools, toolkits, MCP skills)
  // is in code-unit order.
  const { discover } = setup(["zed", "a", "Zed", "B"].map((n) => codeSkill(n)));
  assert.deepEqual((await discover()).map((s) => s.name), [
    "B",
    "Zed",
    "a",
    "zed",
  ]);
});
