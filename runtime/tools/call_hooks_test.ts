import assert from "node:assert/strict";
import { eventSize, RESULT_EVENT_BYTES, ToolCallHooks } from "./call_hooks.ts";
import { SkillEventLog } from "../skills/relays.ts";
import type { CallEvent } from "../../protocol/tool.ts";

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
