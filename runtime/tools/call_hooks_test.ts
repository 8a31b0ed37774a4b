import assert from "node:assert/strict";
import { ToolCallHooks } from "./call_hooks.ts";
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
  await assert.rejects(hooks.callTool(), { code: "tool_denied" });
  await assert.rejects(hooks.chat(), { code: "tool_denied" });
});
