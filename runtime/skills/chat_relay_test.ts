import assert from "node:assert/strict";
import type { ChatRequest } from "../../protocol/chat.ts";
import type { ChatOptions, LlmProvider } from "../llm/provider.ts";
import { createChatRelay } from "./chat_relay.ts";
import { SkillEventLog } from "./events.ts";
import { TurnBudget } from "./turn_budget.ts";

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

Deno.test("createChatRelay() numbers turns and emits llm.* events in order", async () => {
  const log = new SkillEventLog("r1");
  const seen: ChatOptions[] = [];
  let resolved = 0;
  const chat = createChatRelay({
    budget: new TurnBudget("s", 5),
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

Deno.test("createChatRelay() refuses the turn over max_turns without calling the provider", async () => {
  const log = new SkillEventLog("r1");
  const seen: ChatOptions[] = [];
  const budget = new TurnBudget("s", 1);
  const chat = createChatRelay({
    budget,
    log,
    signal: new AbortController().signal,
    provider: () => fakeProvider(seen),
  });
  await chat({ messages: [] });
  await assert.rejects(chat({ messages: [] }), /reached max_turns \(1\)/);
  assert.equal(seen.length, 1);
  assert.equal(budget.exceeded?.code, "max_turns_exceeded");
  assert.equal(log.events.filter((e) => e.kind === "llm.started").length, 1);
});

Deno.test("createChatRelay() stops at once when the skill's signal aborted, and joins a call's own signal", async () => {
  const seen: ChatOptions[] = [];
  const skill = new AbortController();
  const chat = createChatRelay({
    budget: new TurnBudget("s", 5),
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
