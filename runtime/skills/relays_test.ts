import assert from "node:assert/strict";
import type { SessionScope } from "../capability.ts";
import {
  ChatRelay,
  createToolRelay,
  effectiveMaxTurns,
  SkillEventLog,
  type SkillToolCallOptions,
  type SkillToolHost,
  type ToolRelayOptions,
} from "./relays.ts";
import type { ChatRequest } from "../../protocol/chat.ts";
import type { ChatOptions, LlmProvider } from "../llm/provider.ts";
import { SkillboxError } from "../../protocol/errors.ts";

const session: SessionScope = {
  id: "s",
  token: "",
  state: new Map(),
  send() {},
  signal: new AbortController().signal,
};

function host(
  calls: { name: string; options: SkillToolCallOptions }[],
): SkillToolHost {
  return {
    tool: () => undefined,
    toolkit: () => undefined,
    call: (name, args, options) => {
      calls.push({ name, options });
      options.onEvent?.("progress", { pct: 50 });
      options.onEvent?.("tool.completed", { forged: true });
      if (name === "bad") {
        return Promise.reject(new SkillboxError("tool_error", "It broke"));
      }
      return Promise.resolve({ echo: args });
    },
  };
}

function relay(fields: Partial<ToolRelayOptions> = {}) {
  const log = new SkillEventLog("r1");
  const calls: { name: string; options: SkillToolCallOptions }[] = [];
  const call = createToolRelay({
    skill: "sk",
    allowed: new Set(["echo", "bad"]),
    files: null,
    tools: host(calls),
    session,
    log,
    signal: new AbortController().signal,
    remainingMs: () => 1234,
    ...fields,
  });
  return { call, log, calls };
}

Deno.test("createToolRelay() runs a declared tool with the time left and relays its progress only", async () => {
  const { call, log, calls } = relay();
  const value = await call("echo", { a: 1 }, "to check");
  assert.deepEqual(value, { echo: { a: 1 } });
  assert.equal(calls[0]?.options.timeoutMs, 1234);
  assert.deepEqual(log.events.map((e) => e.kind), [
    "tool.started",
    "progress",
    "tool.completed",
  ]);
  assert.equal(log.events[0]?.data.intention, "to check");
  assert.deepEqual(log.events[1]?.data, { pct: 50, tool: "echo" });
});

Deno.test("createToolRelay() turns a failed tool into tool.failed and a thrown error with its code", async () => {
  const { call, log } = relay();
  await assert.rejects(
    call("bad", {}, null),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "tool_error");
      assert.equal(error.message, "It broke");
      return true;
    },
  );
  assert.equal(log.events.at(-1)?.kind, "tool.failed");
  assert.equal(log.events.at(-1)?.data.error_code, "tool_error");
});

Deno.test("createToolRelay() refuses an undeclared tool before the host sees it", async () => {
  const { call, log, calls } = relay();
  await assert.rejects(call("rm_rf", {}, null), /cannot call tool "rm_rf"/);
  assert.equal(calls.length, 0);
  assert.deepEqual(log.events.map((e) => e.kind), ["tool.failed"]);
  assert.equal(log.events[0]?.data.error_code, "tool_denied");
});

Deno.test("createToolRelay() offers read_skill_file only to a skill with linked files, and only those", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${folder}/ref.md`, "the reference");
    await Deno.writeTextFile(`${folder}/secret.txt`, "not linked");
    const withFiles = relay({ files: { folder, resources: ["ref.md"] } });
    assert.equal(
      await withFiles.call("read_skill_file", { path: "ref.md" }, null),
      "the reference",
    );
    await assert.rejects(
      withFiles.call("read_skill_file", { path: "secret.txt" }, null),
    );
    await assert.rejects(
      withFiles.call("read_skill_file", { path: "../../etc/passwd" }, null),
    );
    assert.equal(withFiles.calls.length, 0, "never reaches the tool host");
    const without = relay();
    await assert.rejects(
      without.call("read_skill_file", { path: "ref.md" }, null),
      /cannot call tool "read_skill_file"/,
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("createToolRelay() stops at once when the skill's signal aborted", async () => {
  const controller = new AbortController();
  const { call, calls } = relay({ signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await assert.rejects(call("echo", {}, null), /cancelled/);
  assert.equal(calls.length, 0);
});

Deno.test("createToolRelay() holds run_command to the skill's command rules", async () => {
  const { call, log, calls } = relay({
    allowed: new Set(["run_command"]),
    files: {
      folder: "/s",
      resources: [],
      commandRules: [{ words: ["git"], prefix: true }],
    },
  });
  await call("run_command", { command: "git", args: ["status"] }, null);
  assert.equal(calls.length, 1);
  await assert.rejects(
    call("run_command", { command: "rm", args: ["-rf", "x"] }, null),
    /Skill "sk" cannot run "rm -rf x"/,
  );
  assert.equal(calls.length, 1, "the refused command never reaches the host");
  assert.equal(log.events.at(-1)?.data.error_code, "tool_denied");
});

Deno.test("createToolRelay() reads a fetched skill's files through it, never runs its scripts, and rethrows a refused file", async () => {
  const { SkillFileRefusedError } = await import("./skill_md.ts");
  const asked: string[] = [];
  const { call, log } = relay({
    scripts: { interpreters: { ".sh": "sh" } },
    files: {
      folder: "",
      resources: ["guide.md", "scripts/run.sh", "forged.md"],
      fetched: {
        resources: ["guide.md", "scripts/run.sh", "forged.md"],
        note: "Fetched.",
        read: (path) => {
          asked.push(path);
          return path === "forged.md"
            ? Promise.reject(new SkillFileRefusedError("It is forged"))
            : Promise.resolve(`text of ${path}`);
        },
      },
    },
  });
  assert.equal(
    await call("read_skill_file", { path: "guide.md" }, null),
    "text of guide.md",
  );
  await assert.rejects(
    call("run_skill_script", { script: "scripts/run.sh" }, null),
    /the scripts of a skill served by an MCP server are not run by this host/,
  );
  await assert.rejects(
    call("read_skill_file", { path: "forged.md" }, null),
    (e) => e instanceof SkillFileRefusedError && /It is forged/.test(e.message),
  );
  assert.deepEqual(asked, ["guide.md", "forged.md"]);
  assert.deepEqual(
    log.events.map((e) => e.kind),
    [
      "tool.started",
      "tool.completed",
      "tool.failed",
      "tool.started",
      "tool.failed",
    ],
  );
});

function fakeProvider(seen: ChatOptions[]): LlmProvider {
  return {
    provider: "fake",
    model: "m1",
    chat: (_request: ChatRequest, options: ChatOptions = {}) => {
      seen.push(options);
      options.onToken?.("a");
      options.onToken?.("b");
      return Promise.resolve({
        text: "ab",
        tool_calls: [],
        stop_reason: "end_turn",
        usage: { input_tokens: 3, output_tokens: 2 },
        turn: options.turn ?? 1,
      });
    },
  };
}

// A run_skill_script call's arguments are checked before any script runs:
// no interpreter or confinement is needed, the call is refused first.
async function scriptRefusal(args: Record<string, unknown>): Promise<string> {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${folder}/scripts`);
    await Deno.writeTextFile(`${folder}/scripts/a.sh`, "echo hi");
    const { call, log } = relay({
      files: { folder, resources: [] },
      scripts: { interpreters: {} },
    });
    const error = await call("run_skill_script", {
      script: "scripts/a.sh",
      ...args,
    }, null).then(() => null, (e: Error) => e);
    assert.ok(error instanceof Error, "the call was not refused");
    assert.equal(log.events.at(-1)?.kind, "tool.failed");
    return error.message;
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("createToolRelay() names the run_skill_script argument the model got wrong", async (t) => {
  await t.step("an argument that is not a string", async () => {
    assert.match(await scriptRefusal({ args: ["-n", 5] }), /"args\.1"/);
  });
  await t.step("a file whose content is not text", async () => {
    assert.match(
      await scriptRefusal({ files: { "in.csv": "a", "b.csv": 2 } }),
      /"files\.b\.csv"/,
    );
  });
  await t.step("stdin that is not text", async () => {
    assert.match(await scriptRefusal({ stdin: 3 }), /"stdin"/);
  });
  await t.step("a script that is not one of the skill's", async () => {
    // Worded by the schema the model was offered: its list, not its value.
    assert.equal(
      await scriptRefusal({ script: "../a.sh" }),
      '"script" must be one of ["scripts/a.sh"]',
    );
  });
});

Deno.test("ChatRelay numbers turns and emits llm.* events in order", async () => {
  const log = new SkillEventLog("r1");
  const seen: ChatOptions[] = [];
  let resolved = 0;
  const { chat } = new ChatRelay({
    skill: "s",
    maxTurns: 5,
    log,
    signal: new AbortController().signal,
    provider: () => {
      resolved++;
      return fakeProvider(seen);
    },
  });
  await chat({ messages: [] });
  await chat({ messages: [] });
  assert.equal(resolved, 1, "the provider is picked once");
  assert.deepEqual(seen.map((o) => o.turn), [1, 2]);
  assert.deepEqual(log.events.map((e) => [e.kind, e.data.turn]), [
    ["llm.started", 1],
    ["llm.token", 1],
    ["llm.token", 1],
    ["llm.completed", 1],
    ["llm.started", 2],
    ["llm.token", 2],
    ["llm.token", 2],
    ["llm.completed", 2],
  ]);
  assert.deepEqual(log.events[0]?.data, {
    turn: 1,
    provider: "fake",
    model: "m1",
  });
  assert.deepEqual(log.events[3]?.data.usage, {
    input_tokens: 3,
    output_tokens: 2,
  });
});

Deno.test("ChatRelay refuses the turn over max_turns without calling the provider", async () => {
  const log = new SkillEventLog("r1");
  const seen: ChatOptions[] = [];
  const relay = new ChatRelay({
    skill: "s",
    maxTurns: 1,
    log,
    signal: new AbortController().signal,
    provider: () => fakeProvider(seen),
  });
  await relay.chat({ messages: [] });
  await assert.rejects(relay.chat({ messages: [] }), /reached max_turns \(1\)/);
  assert.equal(seen.length, 1);
  assert.equal(relay.exceeded?.code, "max_turns_exceeded");
  assert.equal(log.events.filter((e) => e.kind === "llm.started").length, 1);
});

Deno.test("ChatRelay stops at once when the skill's signal aborted, and joins a call's own signal", async () => {
  const seen: ChatOptions[] = [];
  const skill = new AbortController();
  const { chat } = new ChatRelay({
    skill: "s",
    maxTurns: 5,
    log: new SkillEventLog("r1"),
    signal: skill.signal,
    provider: () => fakeProvider(seen),
  });
  const own = new AbortController();
  await chat({ messages: [] }, own.signal);
  own.abort("call done");
  assert.equal(
    seen[0]?.signal?.aborted,
    true,
    "the call's signal reaches the provider",
  );
  skill.abort(new Error("timed out"));
  await assert.rejects(chat({ messages: [] }), /timed out/);
  assert.equal(seen.length, 1);
});

Deno.test("effectiveMaxTurns() takes the skill's value, the default, and the policy cap", () => {
  assert.equal(effectiveMaxTurns(3, {}), 3);
  assert.equal(effectiveMaxTurns(undefined, { defaultMaxTurns: 4 }), 4);
  assert.equal(effectiveMaxTurns(null, {}), 10);
  assert.equal(effectiveMaxTurns(100, {}), 50);
  assert.equal(effectiveMaxTurns(100, { maxTurns: 7 }), 7);
});

Deno.test("ChatRelay allows exactly max turns, numbered from 1", async () => {
  const seen: ChatOptions[] = [];
  const relay = new ChatRelay({
    skill: "plan",
    maxTurns: 2,
    log: new SkillEventLog("r1"),
    signal: new AbortController().signal,
    provider: () => fakeProvider(seen),
  });
  await relay.chat({ messages: [] });
  await relay.chat({ messages: [] });
  assert.deepEqual(seen.map((o) => o.turn), [1, 2]);
  assert.equal(relay.turns, 2);
  assert.equal(relay.exceeded, null);
  await assert.rejects(relay.chat({ messages: [] }), (error) => {
    assert.ok(error instanceof SkillboxError);
    assert.equal(error.code, "max_turns_exceeded");
    assert.equal(
      error.message,
      'Skill "plan" reached max_turns (2): LLM call 3 refused',
    );
    return true;
  });
  // Read again through a function: the earlier assert narrowed the getter.
  const exceeded = (r: ChatRelay) => r.exceeded;
  assert.equal(exceeded(relay)?.code, "max_turns_exceeded");
  assert.equal(relay.turns, 2);
});

Deno.test("ChatRelay with no turns refuses the first call, before picking a provider", async () => {
  const relay = new ChatRelay({
    skill: "none",
    maxTurns: 0,
    log: new SkillEventLog("r1"),
    signal: new AbortController().signal,
    provider: () => {
      throw new Error("no provider needed");
    },
  });
  await assert.rejects(relay.chat({ messages: [] }), /LLM call 1 refused/);
});
