import assert from "node:assert/strict";
import {
  PermissionDeniedError,
  SkillboxError,
  TimeoutError,
} from "../../protocol/errors.ts";
import type { Skill } from "../../protocol/skill.ts";
import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import { isOutput, output } from "../../protocol/output.ts";
import { SkillEventLog } from "./relays.ts";
import {
  checkSchema,
  failSkill,
  isEmptySchema,
  notRunnableError,
  parseFinalAnswer,
  runAgentLoop,
  runSkill,
} from "./run.ts";
import { SkillFileRefusedError } from "./skill_md.ts";
import type { SkillRecord } from "./catalog.ts";
import { skillMdRecord } from "../../tests/support/skill_fakes.ts";

Deno.test("failSkill() emits skill.failed and maps the code", async (t) => {
  const cases: [string, unknown, string][] = [
    ["a timeout", new TimeoutError("late"), "timeout"],
    [
      "a tool error reads as skill_error",
      new SkillboxError("tool_error", "x"),
      "skill_error",
    ],
    ["a denial", new PermissionDeniedError("no"), "tool_denied"],
    [
      "max_turns",
      new SkillboxError("max_turns_exceeded", "m"),
      "max_turns_exceeded",
    ],
  ];
  for (const [name, error, code] of cases) {
    await t.step(name, () => {
      const log = new SkillEventLog("r1");
      const result = failSkill(log, error, 12);
      assert.equal(result.success, false);
      assert.equal(result.errorCode, code);
      assert.equal(result.durationMs, 12);
      const last = result.events.at(-1);
      assert.equal(last?.kind, "skill.failed");
      assert.equal(last?.data.error_code, code);
      assert.equal(last?.data.error, result.error);
    });
  }
});

Deno.test("notRunnableError() gives the blocked reason, or why not", () => {
  const def = (fields: Partial<Skill>) =>
    ({ name: "s", status: "Blocked", ...fields }) as Skill;
  assert.equal(
    notRunnableError(def({ metadata: { blocked_reason: "asks for run" } }))
      .message,
    'Cannot run skill "s" (Blocked): asks for run',
  );
  assert.equal(
    notRunnableError(def({})).message,
    'Cannot run skill "s" (Blocked): it cannot run',
  );
  assert.equal(notRunnableError(def({})).code, "skill_error");
});

Deno.test("checkSchema() names the failing field by its path", () => {
  const schema = {
    type: "object",
    properties: {
      rows: { type: "number" },
      opts: {
        type: "object",
        properties: { sep: { type: "string" } },
        required: ["sep"],
      },
    },
    required: ["rows"],
  };
  assert.equal(checkSchema(schema, { rows: 1, opts: { sep: "," } }), null);
  assert.equal(
    checkSchema(schema, { opts: { sep: "," } }),
    '"rows" is required',
  );
  assert.equal(
    checkSchema(schema, { rows: "1", opts: { sep: "," } }),
    '"rows" must be of type number, got string',
  );
  assert.equal(
    checkSchema(schema, { rows: 1, opts: {} }),
    '"opts.sep" is required',
  );
});

Deno.test("checkSchema() accepts anything against an empty schema", () => {
  assert.ok(isEmptySchema({}));
  assert.equal(checkSchema({}, Symbol.for("x")), null);
});

Deno.test("checkSchema() words other keywords without quoting the value", () => {
  const problem = checkSchema({ type: "number", maximum: 3 }, 12345);
  assert.equal(problem, "The value is greater than 3");
});

// Runs a skill with no LLM and no tools; the observer lists each run it
// saw finish, and must see every run it started finish.
async function runFailing(
  record: SkillRecord,
  fakes: { toolkit?: () => undefined; event?: () => void } = {},
) {
  const ended: string[] = [];
  const result = await runSkill(record, record.definition, {
    reqId: "r1",
    arguments: {},
    timeout: 5,
    streaming: false,
    llmOverride: null,
    metadata: {},
    session: {
      id: "s",
      token: "",
      state: new Map(),
      send() {},
      signal: new AbortController().signal,
    },
    signal: new AbortController().signal,
    tools: {
      tool: () => undefined,
      toolkit: fakes.toolkit ?? (() => undefined),
      call: () => Promise.reject(new Error("unused")),
    },
    llm: () => {
      throw new Error("no LLM");
    },
    observer: {
      started: () => "run1",
      event: fakes.event ?? (() => {}),
      finished: (id, end) => ended.push(`${id} ${end.outcome}`),
    },
  });
  assert.equal(result.success, false);
  assert.deepEqual(ended, [`run1 ${result.errorCode}`]);
  return result;
}

Deno.test("runSkill() fails, not throws, on an input_schema the validator cannot use", async () => {
  // A skill folder's author writes its input_schema; a $ref that resolves
  // nowhere makes the validator throw. The call must still end with
  // skill.failed, and the run it started must be finished.
  const record = skillMdRecord(
    '---\nname: refs\ndescription: Refs\ninput_schema:\n  $ref: "#/nope"\n---\nGo.',
  );
  const result = await runFailing(record);
  assert.equal(result.errorCode, "skill_error");
  assert.match(
    result.error ?? "",
    /^Cannot run skill "refs": its input_schema cannot be used: Unresolved \$ref "#\/nope"/,
  );
  assert.deepEqual(result.events.map((e) => e.kind), [
    "skill.started",
    "skill.failed",
  ]);
});

Deno.test("runSkill() finishes the run it started when a step before the run throws", async (t) => {
  // Past observer.started() every path must reach finished(): a run left
  // open shows as running in the recorder until the host stops.
  const record = skillMdRecord(
    "---\nname: kits\ndescription: Kits\ntoolkits: [web]\n---\nGo.",
  );
  const call = async (
    fakes: { toolkit?: () => undefined; event?: () => void },
  ) => {
    const result = await runFailing(record, fakes);
    assert.equal(result.events.at(-1)?.kind, "skill.failed");
    return result;
  };
  await t.step("the tool host's toolkit lookup throws", async () => {
    const result = await call({
      toolkit: () => {
        throw new Error("registry is reloading");
      },
    });
    assert.equal(result.error, "registry is reloading");
  });
  await t.step("the observer's event hook throws", async () => {
    const result = await call({
      event: () => {
        throw new Error("console went away");
      },
    });
    assert.equal(result.error, "no LLM");
  });
});

Deno.test("parseFinalAnswer() quotes a long answer without half of a character", () => {
  // The 120-character excerpt ends inside the emoji's surrogate pair.
  const text = `${"a".repeat(119)}\u{1F600} and more prose`;
  assert.throws(
    () => parseFinalAnswer(text, { type: "object" }),
    (error: Error) => {
      assert.doesNotMatch(error.message, /[\ud800-\udbff](?![\udc00-\udfff])/);
      assert.match(error.message, /"a{119}…"$/);
      return true;
    },
  );
});

// A model that calls `tool` once, then answers with what it was fed back.
function callsOnce(tool: string) {
  return (request: ChatRequest): Promise<ChatResponse> => {
    const fed = request.messages.find((m) => m.role === "tool");
    return Promise.resolve({
      text: fed ? String(fed.content) : "",
      stop_reason: fed ? "end_turn" : "tool_use",
      turn: 1,
      tool_calls: fed ? [] : [{ id: "c1", name: tool, arguments: {} }],
      usage: { input_tokens: 1, output_tokens: 1 },
    });
  };
}

const DF = [{ name: "df", description: "Disk use", inputSchema: {} }];

Deno.test("runAgentLoop() feeds a tool's failure back to the model", async () => {
  const answer = await runAgentLoop({}, {
    name: "s",
    instructions: "Go.",
    tools: DF,
    chat: callsOnce("df"),
    callTool: () =>
      Promise.reject(new SkillboxError("tool_error", "disk full")),
  });
  assert.equal(answer, "Error: disk full");
});

Deno.test("runAgentLoop() ends at a skill file that is not what was listed", async () => {
  // The model never reads it: the run fails.
  await assert.rejects(
    runAgentLoop({}, {
      name: "s",
      instructions: "Go.",
      tools: DF,
      chat: callsOnce("df"),
      callTool: () =>
        Promise.reject(new SkillFileRefusedError('File "a.md" is refused')),
    }),
    SkillFileRefusedError,
  );
});

Deno.test("runAgentLoop() answers with the output of a tool that breaks the loop", async () => {
  const answer = await runAgentLoop({}, {
    name: "s",
    instructions: "Go.",
    tools: DF,
    chat: callsOnce("df"),
    callTool: () =>
      Promise.resolve(output({ data: 7, summary: "7 GB", break_loop: true })),
  });
  assert.ok(isOutput(answer));
  assert.deepEqual([answer.data, answer.summary], [7, "7 GB"]);
});
