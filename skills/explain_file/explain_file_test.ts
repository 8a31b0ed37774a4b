import assert from "node:assert/strict";
import type {
  ChatMessage,
  ChatResponse,
  ChatToolCall,
  Context,
} from "../../sandbox/sdk/types.ts";
import explainFile from "./explain_file.ts";

/** A context whose model asks for one related file with `call`, then answers. */
function contextAsking(call: ChatToolCall) {
  const reads: unknown[] = [];
  const fed: ChatMessage[] = [];
  let turn = 0;
  const ctx: Context = {
    progress: () => {},
    status: () => {},
    log: () => {},
    artifact: () => {},
    tools: {
      call(name, args) {
        if (name === "list_dir") return Promise.resolve({ entries: [] });
        reads.push(args?.path);
        return Promise.resolve({
          path: String(args?.path),
          content: "1| export {}",
          truncated: false,
          end_line: 1,
        });
      },
    },
    llm: {
      chat(request): Promise<ChatResponse> {
        turn++;
        if (turn === 2) fed.push(...request.messages);
        return Promise.resolve({
          text: turn === 1 ? "" : "It exports nothing.",
          tool_calls: turn === 1 ? [call] : [],
          stop_reason: turn === 1 ? "tool_use" : "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
          turn,
        });
      },
    },
    fetch: () => Promise.reject(new Error("No network in this test")),
    config: {},
    metadata: {},
    signal: new AbortController().signal,
    session: "s",
    call: "c",
  };
  return { ctx, reads, fed };
}

Deno.test("explain_file answers a model's tool call whose arguments are not usable", async (t) => {
  const odd: [string, unknown][] = [
    ["null arguments", null],
    ["a path String() refuses", { path: { toString: 1 } }],
    ["a path that is no string", { path: 42 }],
  ];
  for (const [name, args] of odd) {
    await t.step(name, async () => {
      const { ctx, reads, fed } = contextAsking({
        id: "t1",
        name: "read_file",
        arguments: args as Record<string, unknown>,
      });
      const out = await explainFile.run({ path: "a.ts" }, ctx) as {
        data: { explanation: string; files_read: string[] };
      };
      assert.equal(out.data.explanation, "It exports nothing.");
      assert.deepEqual(out.data.files_read, ["a.ts"]);
      // Only the explained file was read; the model was told what was wrong.
      assert.deepEqual(reads, ["a.ts"]);
      assert.match(String(fed.at(-1)?.content), /^Error: .*"path"/);
    });
  }
});
