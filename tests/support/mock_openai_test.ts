import assert from "node:assert/strict";
import { startMockOpenAI } from "./mock_openai.ts";
import { startMockAnthropic } from "./mock_anthropic.ts";

const TOKENS = 10_000;

/** Rejects when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Not settled within ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

for (
  const [name, start, path] of [
    ["openai", startMockOpenAI, "/chat/completions"],
    ["anthropic", startMockAnthropic, "/v1/messages"],
  ] as const
) {
  Deno.test(`${name} mock: a paced turn streams tokens one by one and stops when the client leaves`, async () => {
    // At 10 ms apart, 10,000 tokens would take 100 s: the stream can only
    // end this soon because the client left and the mock noticed.
    await using mock = start([{
      tokens: Array.from({ length: TOKENS }, (_, i) => `t${i} `),
      token_interval_ms: 10,
    }]);
    const response = await fetch(mock.url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages: [] }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.pipeThrough(new TextDecoderStream())
      .getReader();
    let seen = "";
    while (!seen.includes("t0 ")) {
      const { done, value } = await reader.read();
      assert.ok(!done, "the stream ended before the first token");
      seen += value;
    }
    await reader.cancel();
    await within(mock.disconnected(0), 10_000);
    assert.ok(mock.tokens.length >= 1);
    assert.ok(mock.tokens.length < TOKENS);
    assert.deepEqual(
      mock.tokens.map((t) => t.text),
      Array.from({ length: mock.tokens.length }, (_, i) => `t${i} `),
    );
  });
}
