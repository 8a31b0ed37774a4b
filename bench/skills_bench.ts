/**
 * Skill token relay, end to end: time from the mock provider writing a
 * token to the agent receiving its `llm.token` event over the WebSocket
 * (through the official `openai` SDK, the provider, the skills capability's
 * event log, the dispatcher and the socket), median and p99 (goal: p99 ≤
 * 5 ms); then tokens per second relayed with 16 skill runs at once, each on
 * its own connection.
 *
 * Run alone: `deno run -A --unstable-worker-options bench/skills_bench.ts`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { startMockOpenAI } from "../tests/support/mock_openai.ts";
import { connectA2e, startStack } from "../tests/skills/_stack.ts";

const TOKENS_PER_RUN = 50;
const LATENCY_RUNS = 40;
const CONCURRENT = 16;
const TOKENS_PER_CONCURRENT_RUN = 400;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ??
    NaN;
}

/**
 * Runs the bench and returns its result lines.
 *
 * @returns lines like `relay latency: median 0.41 ms, p99 1.20 ms (goal ≤ 5 ms)`
 * @example Run it
 * ```ts ignore
 * import { runSkillsBench } from "./skills_bench.ts";
 * for (const line of await runSkillsBench()) console.log(line);
 * ```
 */
export async function runSkillsBench(): Promise<string[]> {
  const dataDir = await Deno.makeTempDir();
  const skillsDir = await Deno.makeTempDir();
  await Deno.mkdir(join(skillsDir, "relay"));
  await Deno.writeTextFile(
    join(skillsDir, "relay", "SKILL.md"),
    "---\nname: relay\ndescription: Answers in one turn\nmax_turns: 1\n---\nAnswer the user.\n",
  );
  const script = (tokens: number) =>
    Array.from({ length: tokens }, (_, i) => `t${i} `);
  let tokensPerRun = TOKENS_PER_RUN;
  const mock = startMockOpenAI(() => ({ tokens: script(tokensPerRun) }));
  const stack = await startStack({
    llm: { provider: "openai", url: mock.url },
    dataDir,
    skillDirs: [skillsDir],
  });
  const call = {
    type: "skill/call/req",
    name: "relay",
    arguments: {},
    streaming: true,
  };
  try {
    // Latency: one run at a time; tokens paired with their write by order.
    const agent = await connectA2e(stack.wsUrl);
    const latencies: number[] = [];
    for (let run = 0; run < LATENCY_RUNS; run++) {
      const received: number[] = [];
      const resp = await agent.request(call, (r) => {
        if (r.message.kind === "llm.token") received.push(r.at);
      });
      const result = resp.message.data as { success: boolean; error: string };
      if (!result.success) throw new Error(result.error);
      if (run === 0) continue; // warm-up: JIT, connection setup
      const written = mock.tokens.filter((t) => t.index === run);
      if (written.length !== received.length) {
        throw new Error(
          `Run ${run}: ${written.length} tokens written, ${received.length} received`,
        );
      }
      written.forEach((w, i) => latencies.push(received[i]! - w.at));
    }
    await agent.close();
    latencies.sort((a, b) => a - b);
    const median = percentile(latencies, 0.5);
    const p99 = percentile(latencies, 0.99);

    // Throughput: 16 runs at once, each on its own session.
    tokensPerRun = TOKENS_PER_CONCURRENT_RUN;
    const agents = await Promise.all(
      Array.from({ length: CONCURRENT }, () => connectA2e(stack.wsUrl)),
    );
    let relayed = 0;
    const t0 = performance.now();
    await Promise.all(agents.map(async (a) => {
      const resp = await a.request(call, (r) => {
        if (r.message.kind === "llm.token") relayed++;
      });
      const result = resp.message.data as { success: boolean; error: string };
      if (!result.success) throw new Error(result.error);
    }));
    const seconds = (performance.now() - t0) / 1000;
    await Promise.all(agents.map((a) => a.close()));
    const expected = CONCURRENT * TOKENS_PER_CONCURRENT_RUN;
    if (relayed !== expected) {
      throw new Error(`${relayed} of ${expected} tokens relayed`);
    }
    return [
      `relay latency (provider write → agent llm.token over WS): median ${
        median.toFixed(2)
      } ms, p99 ${
        p99.toFixed(2)
      } ms over ${latencies.length} tokens (goal p99 ≤ 5 ms: ${
        p99 <= 5 ? "met" : "MISSED"
      })`,
      `throughput: ${
        Math.round(relayed / seconds)
      } tokens/s relayed with ${CONCURRENT} concurrent skill runs (${relayed} tokens in ${
        seconds.toFixed(2)
      } s)`,
    ];
  } finally {
    await stack.close();
    await mock.close();
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(skillsDir, { recursive: true });
  }
}

/** The bench as `bench/main.ts` lists benches. */
export const skillsBench: { name: string; run(): Promise<string[]> } = {
  name: "skills: token relay to the agent",
  run: runSkillsBench,
};

if (import.meta.main) {
  for (const line of await runSkillsBench()) console.log(line);
}
