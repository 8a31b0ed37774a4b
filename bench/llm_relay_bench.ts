/**
 * The provider half of token relay: time from the mock provider writing a
 * token to our `LlmProvider` handing it to `onToken` (through the official
 * SDK, its SSE parser and our assembly), and tokens per second with 16
 * concurrent streams. The skills bench adds the hop to the agent on top.
 *
 * The mock provider (`_relay_mock.ts`) runs in its own process, as a real
 * provider does, so its event loop and garbage collector stay out of the
 * figures. Like the skills bench, latency is reported paced (a token every
 * `intervalMs`: each figure is one token's own trip) and burst (50 tokens
 * written at once: later tokens queue behind earlier ones).
 *
 * Run alone: `deno run -A bench/llm_relay_bench.ts`
 * (`SKILLBOX_BENCH_INTERVAL_MS` sets the pacing, default 3).
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { resolveLlmConfig } from "../runtime/llm/config.ts";
import { createProvider, type LlmProvider } from "../runtime/llm/provider.ts";
import { nowMs, type TokenWrite } from "../tests/support/mock_openai.ts";
import { type RelayAsk, spawnRelayMock } from "./_relay_mock.ts";
import { formatLatency, latencyStats } from "./_stats.ts";

const TOKENS_PER_TURN = 50;
const PACED_TURNS = 20;
const BURST_TURNS = 40;
const CONCURRENT = 16;
const TURNS_PER_STREAM = 5;

type Provider = "openai" | "anthropic";

function providerFor(name: Provider, url: string): LlmProvider {
  return createProvider(resolveLlmConfig([{
    provider_name: name,
    provider_credentials: { api_key: "sk-bench" },
    provider_config: { base_url: url, model: "bench" },
  }]));
}

/** One turn; returns each token's text and arrival time. */
async function turn(
  llm: LlmProvider,
  ask: RelayAsk,
): Promise<{ text: string; at: number }[]> {
  const received: { text: string; at: number }[] = [];
  await llm.chat({
    messages: [{ role: "user", content: JSON.stringify(ask) }],
  }, { onToken: (text) => received.push({ text, at: nowMs() }) });
  return received;
}

async function measure(name: Provider, intervalMs: number): Promise<string[]> {
  const mock = await spawnRelayMock(name);
  const received: Record<"paced" | "burst", { text: string; at: number }[]> = {
    paced: [],
    burst: [],
  };
  let relayed = 0;
  let seconds = 0;
  let writes = new Map<string, TokenWrite>();
  try {
    const llm = providerFor(name, mock.url);
    const paced: RelayAsk = {
      tokens: TOKENS_PER_TURN,
      interval_ms: intervalMs,
    };
    const burst: RelayAsk = { tokens: TOKENS_PER_TURN };
    await turn(llm, burst); // warm-up: JIT and connection setup
    for (let i = 0; i < PACED_TURNS; i++) {
      received.paced.push(...await turn(llm, paced));
    }
    for (let i = 0; i < BURST_TURNS; i++) {
      received.burst.push(...await turn(llm, burst));
    }
    const began = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        for (let i = 0; i < TURNS_PER_STREAM; i++) {
          // Awaited first: `relayed += await …` would read `relayed` before
          // the await and lose the other streams' counts.
          const tokens = await turn(llm, burst);
          relayed += tokens.length;
        }
      }),
    );
    seconds = (performance.now() - began) / 1000;
  } finally {
    // Stopped either way, so a failed turn does not leave the mock running.
    writes = await mock.stop();
  }
  const latency = (tokens: { text: string; at: number }[]) =>
    latencyStats(tokens.map((t) => {
      const write = writes.get(t.text);
      if (!write) throw new Error(`Token "${t.text}" was never written`);
      return t.at - write.at;
    }));
  return [
    `${name}: paced (a token every ${intervalMs} ms) write→onToken ${
      formatLatency(latency(received.paced))
    }`,
    `${name}: burst (${TOKENS_PER_TURN} tokens at once) write→onToken ${
      formatLatency(latency(received.burst))
    }`,
    `${name}: ${
      Math.round(relayed / seconds)
    } tokens/s relayed with ${CONCURRENT} concurrent streams`,
  ];
}

/** The bench entry for `bench/main.ts`. */
export const llmRelayBench: { name: string; run(): Promise<string[]> } = {
  name: "llm provider relay",
  async run() {
    const interval = Number(Deno.env.get("SKILLBOX_BENCH_INTERVAL_MS") ?? 3);
    return [
      ...await measure("openai", interval),
      ...await measure("anthropic", interval),
      `(mock provider in its own process; 1-min load average ${
        Deno.loadavg()[0]!.toFixed(2)
      } on ${navigator.hardwareConcurrency} CPUs)`,
    ];
  },
};

if (import.meta.main) {
  for (const line of await llmRelayBench.run()) console.log(line);
}
