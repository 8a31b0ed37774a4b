import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { SkillboxError } from "../../protocol/errors.ts";
import { mapProviderError, StreamedTurn, streamTurn } from "./_turn.ts";

const map = (error: unknown) =>
  mapProviderError("openai", error, {
    baseUrl: "http://127.0.0.1:9/v1",
  }) as SkillboxError;

Deno.test("mapProviderError() keeps an HTTP status, message and type", () => {
  const error = map(
    new OpenAI.RateLimitError(
      429,
      { message: "Slow down.", type: "rate_limit_error" },
      undefined,
      new Headers(),
    ),
  );
  assert.ok(error instanceof SkillboxError);
  assert.equal(error.code, "skill_error");
  assert.equal(
    error.message,
    'LLM provider "openai" answered HTTP 429: Slow down',
  );
  assert.equal(error.retryable, true);
  assert.deepEqual(error.detail, {
    provider: "openai",
    status: 429,
    type: "rate_limit_error",
  });
});

Deno.test("mapProviderError() reads the Anthropic SDK's errors, HTTP and mid-stream", () => {
  // Anthropic's SDK keeps the whole body, `{type: "error", error}`.
  const body = {
    type: "error",
    error: { type: "overloaded_error", message: "Overloaded" },
  };
  const http = mapProviderError(
    "anthropic",
    new Anthropic.APIError(529, body, undefined, new Headers()),
    { baseUrl: "https://api.anthropic.com" },
  ) as SkillboxError;
  assert.equal(
    http.message,
    'LLM provider "anthropic" answered HTTP 529: Overloaded',
  );
  assert.deepEqual(http.detail, {
    provider: "anthropic",
    status: 529,
    type: "overloaded_error",
  });
  const midStream = mapProviderError(
    "anthropic",
    new Anthropic.APIError(undefined, body, undefined, new Headers()),
    { baseUrl: "https://api.anthropic.com" },
  ) as SkillboxError;
  assert.equal(
    midStream.message,
    'LLM provider "anthropic" failed mid-stream (overloaded_error): Overloaded',
  );
  assert.equal(midStream.retryable, true);
});

Deno.test("mapProviderError() names the address and cause of a connection failure", () => {
  for (
    const failure of [
      new OpenAI.APIConnectionError({ cause: new Error("connection refused") }),
      new Anthropic.APIConnectionError({
        cause: new Error("connection refused"),
      }),
    ]
  ) {
    const error = map(failure);
    assert.equal(
      error.message,
      'Cannot reach LLM provider "openai" at "http://127.0.0.1:9/v1": Connection error (connection refused)',
    );
    assert.equal(error.retryable, true);
  }
});

Deno.test("mapProviderError() names the address without what secrets hide in", () => {
  const error = mapProviderError(
    "openai",
    new OpenAI.APIConnectionError({}),
    { baseUrl: "https://user:sk-1@llm.example/v1?api_key=sk-2#sk-3" },
  );
  assert.match(error.message, /at "https:\/\/llm\.example\/v1"/);
  assert.doesNotMatch(error.message, /sk-/);
});

Deno.test("mapProviderError() passes a SkillboxError through and wraps anything else", () => {
  const own = new SkillboxError("skill_error", "Already mapped");
  assert.equal(map(own), own);
  const other = map(new TypeError("boom"));
  assert.equal(other.message, 'LLM provider "openai" failed mid-stream: boom');
  assert.equal(other.retryable, false);
  assert.equal(
    map("text").message,
    'LLM provider "openai" failed mid-stream: text',
  );
});

Deno.test("StreamedTurn counts UTF-8 bytes, not UTF-16 units", () => {
  const bounds = new StreamedTurn("openai", {
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

Deno.test("StreamedTurn fails the call past max_tool_calls", () => {
  const bounds = new StreamedTurn("anthropic", {
    maxResponseBytes: 1,
    maxToolCalls: 2,
  });
  bounds.callAt(0);
  bounds.callAt(1);
  bounds.callAt(1); // the same call again: not counted
  assert.throws(
    () => bounds.callAt(2),
    /made more than 2 tool calls in one turn: the limit is llm\.max_tool_calls \(2\)/,
  );
});

Deno.test("streamTurn() answers a stop reason and usage a server sent as no string or count as safe values", async () => {
  // The SDKs pass the server's JSON through unchecked: a hostile endpoint's
  // object or huge number reached ChatResponse (and the store) as sent.
  const options = {
    provider: "openai",
    baseUrl: "http://127.0.0.1:9/v1",
  };
  const res = await streamTurn(options, (turn) => {
    turn.usage = {
      input_tokens: { n: 1 } as unknown as number,
      output_tokens: 1e300,
    };
    return Promise.resolve({ x: 1 } as unknown as string);
  });
  assert.equal(res.stop_reason, "unknown");
  assert.deepEqual(res.usage, {
    input_tokens: 0,
    output_tokens: Number.MAX_SAFE_INTEGER,
  });
  for (const [count, expected] of [[-5, 0], [2.7, 2], [Infinity, 0], [7, 7]]) {
    const ok = await streamTurn(options, (turn) => {
      turn.usage = { input_tokens: count!, output_tokens: 0 };
      return Promise.resolve("end_turn");
    });
    assert.equal(ok.usage.input_tokens, expected, `count ${count}`);
    assert.equal(ok.stop_reason, "end_turn");
  }
});
