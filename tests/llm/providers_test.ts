// The providers end to end: the official SDKs against local servers that
// speak each provider's real streaming format.

import assert from "node:assert/strict";
import { resolveLlmConfig } from "../../runtime/llm/config.ts";
import type { ChatMessage } from "../../protocol/chat.ts";
import {
  createProvider,
  type LlmProvider,
} from "../../runtime/llm/provider.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  type MockLlmServer,
  type MockScript,
  startMockOpenAI,
} from "../support/mock_openai.ts";
import { startMockAnthropic } from "../support/mock_anthropic.ts";

const PROVIDERS = [
  { name: "openai", start: startMockOpenAI },
  { name: "anthropic", start: startMockAnthropic },
] as const;

function providerFor(name: string, mock: MockLlmServer): LlmProvider {
  return createProvider(resolveLlmConfig([{
    provider_name: name,
    provider_credentials: { api_key: "sk-test" },
    provider_config: { base_url: mock.url, model: "mock-model" },
  }]));
}

/** Rejects if `promise` does not settle within `ms` (a bound, not a sleep). */
async function within<T>(promise: Promise<T>, ms: number, what: string) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Timed out after ${ms} ms: ${what}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

const ADD_TOOL = {
  name: "add",
  description: "Adds numbers",
  input_schema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "array" } },
    required: ["a"],
  },
};

for (const { name, start } of PROVIDERS) {
  Deno.test(`${name}: chat() relays each token to onToken before it resolves`, async () => {
    const release = Promise.withResolvers<void>();
    await using mock = start([{
      tokens: ["Hel", "lo", " world"],
      pause: release.promise,
      usage: { input_tokens: 7, output_tokens: 3 },
    }]);
    const llm = providerFor(name, mock);
    let settled = false;
    const seen: string[] = [];
    let settledAtLastToken: boolean | undefined;
    const done = llm.chat({
      system: "Be brief",
      messages: [{ role: "user", content: "Say hello" }],
    }, {
      turn: 2,
      onToken(text) {
        seen.push(text);
        if (seen.length === 3) {
          settledAtLastToken = settled;
          release.resolve(); // only now may the mock finish the answer
        }
      },
    }).finally(() => settled = true);
    const res = await within(done, 5000, "chat() to resolve");
    assert.equal(settledAtLastToken, false);
    assert.deepEqual(seen, ["Hel", "lo", " world"]);
    assert.equal(res.text, "Hello world");
    assert.equal(res.stop_reason, "end_turn");
    assert.deepEqual(res.usage, { input_tokens: 7, output_tokens: 3 });
    assert.equal(res.turn, 2);
    assert.deepEqual(res.tool_calls, []);
    const body = mock.requests[0]!.body;
    assert.equal(body.stream, true);
    assert.equal(body.model, "mock-model");
    if (name === "openai") {
      assert.deepEqual(body.stream_options, { include_usage: true });
      assert.deepEqual((body.messages as ChatMessage[])[0], {
        role: "system",
        content: "Be brief",
      });
    } else {
      assert.equal(body.system, "Be brief");
    }
  });

  Deno.test(`${name}: chat() assembles a tool call streamed in pieces`, async () => {
    const args = { a: 1, b: [2, 3], note: 'split me "please"' };
    await using mock = start([{
      tokens: ["Let me add."],
      tool_calls: [{ id: "call_1", name: "add", arguments: args }],
    }]);
    const res = await providerFor(name, mock).chat({
      messages: [{ role: "user", content: "1+2+3?" }],
      tools: [ADD_TOOL],
    });
    assert.deepEqual(res.tool_calls, [{
      id: "call_1",
      name: "add",
      arguments: args,
    }]);
    assert.equal(res.text, "Let me add.");
    assert.equal(res.stop_reason, "tool_use");
    const tools = mock.requests[0]!.body.tools as Record<string, unknown>[];
    if (name === "openai") {
      assert.deepEqual(tools, [{
        type: "function",
        function: {
          name: "add",
          description: "Adds numbers",
          parameters: ADD_TOOL.input_schema,
        },
      }]);
    } else {
      assert.deepEqual(tools, [{
        name: "add",
        description: "Adds numbers",
        input_schema: ADD_TOOL.input_schema,
      }]);
    }
  });

  Deno.test(`${name}: a two-turn exchange feeds the tool result back`, async () => {
    await using mock = start([
      { tool_calls: [{ id: "call_7", name: "add", arguments: { a: 2 } }] },
      { tokens: ["The sum ", "is 5"] },
    ]);
    const llm = providerFor(name, mock);
    const messages: ChatMessage[] = [{ role: "user", content: "Add 2" }];
    const first = await llm.chat({
      system: "Use tools",
      messages,
      tools: [ADD_TOOL],
    }, { turn: 1 });
    assert.equal(first.stop_reason, "tool_use");
    messages.push(
      { role: "assistant", content: first.text, tool_calls: first.tool_calls },
      { role: "tool", tool_call_id: "call_7", content: "5" },
    );
    const second = await llm.chat({
      system: "Use tools",
      messages,
      tools: [ADD_TOOL],
    }, { turn: 2 });
    assert.equal(second.text, "The sum is 5");
    assert.equal(second.stop_reason, "end_turn");
    assert.equal(second.turn, 2);

    const sent = mock.requests[1]!.body.messages;
    if (name === "openai") {
      assert.deepEqual(sent, [
        { role: "system", content: "Use tools" },
        { role: "user", content: "Add 2" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_7",
            type: "function",
            function: { name: "add", arguments: '{"a":2}' },
          }],
        },
        { role: "tool", tool_call_id: "call_7", content: "5" },
      ]);
    } else {
      assert.deepEqual(sent, [
        { role: "user", content: [{ type: "text", text: "Add 2" }] },
        {
          role: "assistant",
          content: [{
            type: "tool_use",
            id: "call_7",
            name: "add",
            input: { a: 2 },
          }],
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "call_7",
            content: "5",
          }],
        },
      ]);
    }
  });

  Deno.test(`${name}: provider HTTP errors surface as clear errors`, async (t) => {
    const cases = [
      { status: 429, retryable: true, message: "Rate limit reached" },
      { status: 500, retryable: true, message: "Internal failure" },
      { status: 401, retryable: false, message: "Invalid API key" },
    ];
    for (const c of cases) {
      await t.step(`HTTP ${c.status}`, async () => {
        await using mock = start([{
          status: c.status,
          error_message: c.message,
        }]);
        const error = await providerFor(name, mock).chat({
          messages: [{ role: "user", content: "hi" }],
        }).then(() => null, (e) => e);
        assert.ok(error instanceof SkillboxError, String(error));
        assert.equal(error.code, "skill_error");
        assert.equal(error.retryable, c.retryable);
        assert.match(
          error.message,
          new RegExp(`^LLM provider "${name}" answered HTTP ${c.status}`),
        );
        assert.ok(error.message.endsWith(`: ${c.message}`), error.message);
        assert.equal(error.detail.status, c.status);
        // No silent SDK retries: the caller sees the failure and decides.
        assert.equal(mock.requests.length, 1);
      });
    }
  });

  Deno.test(`${name}: aborting mid-stream rejects promptly and closes the connection`, async () => {
    await using mock = start([{ tokens: ["Thinking"], hang: true }]);
    const controller = new AbortController();
    const reason = new Error("Skill cancelled");
    const seen: string[] = [];
    const chat = providerFor(name, mock).chat({
      messages: [{ role: "user", content: "Go on forever" }],
    }, {
      signal: controller.signal,
      onToken(text) {
        seen.push(text);
        controller.abort(reason);
      },
    });
    const error = await within(
      chat.then(() => null, (e) => e),
      2000,
      "chat() to reject after abort",
    );
    assert.equal(error, reason);
    assert.deepEqual(seen, ["Thinking"]);
    await within(mock.disconnected(0), 2000, "the server to see the close");
  });

  Deno.test(`${name}: a stream that breaks off fails the turn clearly`, async (t) => {
    await t.step("an in-stream error event", async () => {
      await using mock = start([{
        tokens: ["Par"],
        stream_error: { type: "overloaded_error", message: "Overloaded" },
      }]);
      const error = await providerFor(name, mock).chat({
        messages: [{ role: "user", content: "x" }],
      }).then(() => null, (e) => e);
      assert.ok(error instanceof SkillboxError, String(error));
      assert.equal(
        error.message,
        `LLM provider "${name}" failed mid-stream (overloaded_error): Overloaded`,
      );
      assert.equal(error.retryable, true);
    });
    await t.step("a connection closed before the end marker", async () => {
      await using mock = start([{ tokens: ["Par"], drop: true }]);
      await assert.rejects(
        providerFor(name, mock).chat({
          messages: [{ role: "user", content: "x" }],
        }),
        (e: unknown) =>
          e instanceof SkillboxError && e.retryable &&
          e.message ===
            `LLM provider "${name}" closed the stream before the answer ended`,
      );
    });
  });

  Deno.test(`${name}: tool arguments that are not JSON fail the turn clearly`, async () => {
    await using mock = start([{
      tool_calls: [{ name: "add", arguments: '{"a": 1' }],
    }]);
    await assert.rejects(
      providerFor(name, mock).chat({
        messages: [{ role: "user", content: "x" }],
        tools: [ADD_TOOL],
      }),
      (e: unknown) =>
        e instanceof SkillboxError && e.retryable &&
        /tool call "add" with arguments that are not a JSON object/.test(
          e.message,
        ),
    );
  });

  Deno.test(`${name}: the key from api_key_env reaches the provider, and only it`, async () => {
    const variable = `SKILLBOX_TEST_KEY_${name.toUpperCase()}`;
    Deno.env.set(variable, "sk-from-env");
    try {
      await using mock = start([{ tokens: ["ok"] }]);
      const llm = createProvider(resolveLlmConfig([{
        provider_name: name,
        provider_credentials: { api_key_env: variable },
        provider_config: { base_url: mock.url, model: "m" },
        is_default: true,
      }]));
      await llm.chat({ messages: [{ role: "user", content: "hi" }] });
      const headers = mock.requests[0]!.headers;
      const sent = name === "openai"
        ? headers.authorization
        : headers["x-api-key"] ?? headers.authorization;
      assert.match(String(sent), /sk-from-env$/);
      assert.ok(!JSON.stringify(mock.requests[0]!.body).includes("sk-from"));
    } finally {
      Deno.env.delete(variable);
    }
  });
}

Deno.test("mock servers record when each token was written", async () => {
  const writes: string[] = [];
  const script: MockScript = () => ({ tokens: ["a", "b"] });
  await using mock = startMockAnthropic(script, {
    onTokenWritten: (w) => writes.push(w.text),
  });
  const before = performance.timeOrigin + performance.now();
  await providerFor("anthropic", mock).chat({
    messages: [{ role: "user", content: "x" }],
  });
  assert.deepEqual(writes, ["a", "b"]);
  assert.deepEqual(mock.tokens.map((t) => t.text), ["a", "b"]);
  assert.ok(mock.tokens.every((t) => t.at >= before && t.index === 0));
});

Deno.test("openai: a compatible server's max_tokens and temperature are sent", async () => {
  await using mock = startMockOpenAI([{ tokens: ["x"] }]);
  const llm = createProvider(resolveLlmConfig([{
    provider_name: "openai",
    provider_config: {
      base_url: mock.url,
      model: "llama3.2",
      max_tokens: 64,
      temperature: 0.2,
    },
  }], { env: () => undefined }));
  await llm.chat({ messages: [{ role: "user", content: "x" }] });
  const body = mock.requests[0]!.body;
  assert.equal(body.max_tokens, 64);
  assert.equal(body.temperature, 0.2);
});
