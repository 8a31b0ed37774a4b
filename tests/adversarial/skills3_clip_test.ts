/**
 * A tool's result fed back to the model is cut at 32,000 UTF-16 units. A
 * cut through a character outside the BMP left half of it, a lone
 * surrogate, in the next request: JSON that strict providers refuse
 * ("no low surrogate in string"), so any tool whose output put an emoji
 * across the bound failed the skill's run. The cut keeps characters whole.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ChatRequest } from "../../protocol/chat.ts";
import { runAgentLoop } from "../../runtime/skills/run.ts";
import { summarize } from "../../runtime/skills/relays.ts";

Deno.test("a tool result cut at its bound reaches the model without half a character", async () => {
  const requests: ChatRequest[] = [];
  await runAgentLoop({}, {
    name: "long",
    instructions: "Read the tool.",
    tools: [{ name: "read", description: "Reads", inputSchema: {} }],
    chat: (request) => {
      requests.push(structuredClone(request));
      const done = request.messages.some((m) => m.role === "tool");
      return Promise.resolve({
        text: done ? "ok" : "",
        stop_reason: done ? "end_turn" : "tool_use",
        turn: requests.length,
        tool_calls: done ? [] : [{ id: "c1", name: "read", arguments: {} }],
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    },
    // An emoji (two UTF-16 units) across the 32,000th unit.
    callTool: () =>
      Promise.resolve(`${"x".repeat(31_999)}\u{1F600}${"y".repeat(100)}`),
  });
  const fed = requests.at(-1)!.messages.find((m) => m.role === "tool")!;
  const content = String(fed.content);
  assert.ok(content.isWellFormed(), "a lone surrogate is fed to the model");
  assert.match(content, /^x{31999}\n\[cut: \d+ more characters\]$/);
});

Deno.test("summarize() cuts a long value without half a character", () => {
  // Event summaries are stored and served: an emoji across the 500th unit
  // of the JSON text (a string field's own cut at 200 is escaped by
  // JSON.stringify, so it stays well-formed).
  for (let pad = 145; pad < 155; pad++) {
    const line = summarize(["x".repeat(pad), ..."\u{1F600}".repeat(200)]);
    assert.ok(
      line.isWellFormed(),
      `a lone surrogate is left at the cut (${pad})`,
    );
    assert.ok(line.endsWith("…"));
  }
});
