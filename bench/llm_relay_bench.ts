/**
 * The provider half of token relay: time from the mock provider writing a
 * token to our `LlmProvider` handing it to `onToken` (through the official
 * SDK, its SSE parser and our assembly), and tokens per second with 16
 * concurrent streams. The skills bench adds the hop to the agent on top.
 *
 * Run alone: `deno run -A bench/llm_relay_bench.ts`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { createProvider, resolveLlmConfig } from "../runtime/llm/config.ts";
import type { LlmProvider } from "../runtime/llm/provider.ts";
import {
  type MockLlmServer,
  nowMs,
  startMockOpenAI,
} from "../tests/support/mock_openai.ts";
import { startMockAnthropic } from "../tests/support/mock_anthropic.ts";

const TOKENS_PER_TURN = 50;
const LATENCY_TURNS = 40;
const CONCURRENT = 16;
const TURNS_PER_STREAM = 5;

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.floor(sorted.length * p));
  return sorted[i] ?? NaN;
}

function providerFor(name: string, mock: MockLlmServer): LlmProvider {
  return createProvider(resolveLlmConfig([{
    provider_name: name,
    provider_credentials: { api_key: "sk-bench" },
    provider_config: { base_url: mock.url, model: "bench" },
  }]));
}

const tokens = Array.from({ length: TOKENS_PER_TURN }, (_, i) => `t${i} `);

async function measure(
  name: string,
  start: typeof startMockOpenAI,
): Promise<string[]> {
  // Latency: one stream at a time, each token paired with its write time.
  const latencies: number[] = [];
  {
    await using mock = start(() => ({ tokens }));
    const llm = providerFor(name, mock);
    for (let turn = 0; turn < LATENCY_TURNS; turn++) {
      const received: number[] = [];
      await llm.chat({ messages: [{ role: "user", content: "go" }] }, {
        onToken: () => received.push(nowMs()),
      });
      if (turn === 0) continue; // warm-up: JIT and connection setup
      const written = mock.tokens.filter((t) => t.index === turn);
      written.forEach((w, i) => latencies.push(received[i]! - w.at));
    }
  }
  latencies.sort((a, b) => a - b);

  // Throughput: 16 concurrent streams, several turns each.
  await using mock = start(() => ({ tokens }));
  const llm = providerFor(name, mock);
  let relayed = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT }, async () => {
      for (let turn = 0; turn < TURNS_PER_STREAM; turn++) {
        await llm.chat({ messages: [{ role: "user", content: "go" }] }, {
          onToken: () => relayed++,
        });
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  return [
    `${name}: write→onToken median ${
      percentile(latencies, 0.5).toFixed(3)
    } ms, p99 ${
      percentile(latencies, 0.99).toFixed(3)
    } ms (${latencies.length} tokens)`,
    `${name}: ${
      Math.round(relayed / seconds)
    } tokens/s relayed with ${CONCURRENT} concurrent streams`,
  ];
}

/** The bench entry for `bench/main.ts`. */
export const llmRelayBench: { name: string; run(): Promise<string[]> } = {
  name: "llm provider relay",
  async run() {
    return [
      ...await measure("openai", startMockOpenAI),
      ...await measure("anthropic", startMockAnthropic),
    ];
  },
};

if (import.meta.main) {
  for (const line of await llmRelayBench.run()) console.log(line);
}
