import assert from "node:assert/strict";
import { TurnBounds } from "./turn_bounds.ts";

Deno.test("TurnBounds counts UTF-8 bytes, not UTF-16 units", () => {
  const bounds = new TurnBounds("openai", {
    maxResponseBytes: 10,
    maxToolCalls: 1,
  });
  bounds.add("é€😀"); // 2 + 3 + 4 bytes
  bounds.add("a");
  assert.throws(
    () => bounds.add("a"),
    (e: Error & { code?: string }) =>
      e.code === "skill_error" &&
      /sent more than 10 bytes .*llm\.max_response_bytes \(10\)/.test(
        e.message,
      ),
  );
});

Deno.test("TurnBounds fails the call past max_tool_calls", () => {
  const bounds = new TurnBounds("anthropic", {
    maxResponseBytes: 1,
    maxToolCalls: 2,
  });
  bounds.call();
  bounds.call();
  assert.throws(
    () => bounds.call(),
    /made more than 2 tool calls in one turn: the limit is llm\.max_tool_calls \(2\)/,
  );
});
