/**
 * Skill token relay, end to end: time from the mock provider writing a
 * token to the agent receiving its `llm.token` event over the WebSocket
 * (through the official `openai` SDK, the provider, the skills capability's
 * event log, the session and the socket), and tokens per second relayed with
 * 16 skill runs at once, each on its own connection.
 *
 * The host runs in this process; the mock provider (`_relay_mock.ts`) and
 * the agent (`_relay_agent.ts`) each run in their own, as they do in
 * production, so their event loops and garbage collectors do not inflate
 * the host's figures. Write and receive times are epoch milliseconds taken
 * in different processes on one machine, which share the wall clock.
 *
 * Modes, reported separately:
 * - paced: the provider writes a token every `intervalMs` (real models take
 *   tens of ms), so each figure is one token's own trip; this is what the
 *   goal (p99 ≤ 5 ms) is about. Once with one run at a time, once with 16.
 * - burst: the provider writes a run's 50 tokens at once (before even its
 *   response headers leave), so later tokens wait behind earlier ones at
 *   every hop: that measures throughput as much as latency.
 * - throughput: 16 runs at once, 400 burst tokens each.
 *
 * The machine's load average is printed too: the bench shares its CPUs with
 * whatever else runs, and a busy machine shows up in p99 and max.
 *
 * Run alone: `deno run -A --unstable-worker-options bench/skills_bench.ts`
 * (`SKILLBOX_BENCH_INTERVAL_MS` sets the pacing, default 3).
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import type { TokenWrite } from "../tests/support/mock_openai.ts";
import { startStack } from "../tests/support/skills_host.ts";
import { formatLatency, latencyStats } from "./_stats.ts";
import { type RelayAsk, spawnRelayMock } from "./_relay_mock.ts";
import {
  type AgentPlan,
  type AgentReport,
  runRelayAgent,
} from "./_relay_agent.ts";

const TOKENS_PER_RUN = 50;
const PACED_RUNS = 30;
const BURST_RUNS = 40;
const CONCURRENT = 16;
const PACED_CONCURRENT_RUNS = 2;
const TOKENS_PER_THROUGHPUT_RUN = 400;
const LATENCY_GOAL_MS = 5;

/** Options of {@link runSkillsBench}. */
export interface SkillsBenchOptions {
  /** Milliseconds between tokens in the paced modes. @default 3 */
  intervalMs?: number;
}

/** One measured mode. */
interface Mode {
  report: AgentReport;
  /** How many tokens the agent must have received. */
  expected: number;
}

/** Pairs each received token with its write (by its unique text). */
function latencies(
  report: AgentReport,
  writes: Map<string, TokenWrite>,
  expected: number,
): number[] {
  if (report.tokens.length !== expected) {
    throw new Error(
      `${expected} tokens expected, ${report.tokens.length} received`,
    );
  }
  return report.tokens.map((token) => {
    const write = writes.get(token.text);
    if (!write) throw new Error(`Token "${token.text}" was never written`);
    return token.at - write.at;
  });
}

/**
 * Runs the bench and returns its result lines.
 *
 * @param options the pacing
 * @returns one line per mode, plus the machine's load
 * @example Run it
 * ```ts ignore
 * import { runSkillsBench } from "./skills_bench.ts";
 * for (const line of await runSkillsBench()) console.log(line);
 * ```
 */
export async function runSkillsBench(
  options: SkillsBenchOptions = {},
): Promise<string[]> {
  const intervalMs = options.intervalMs ?? 3;
  const dataDir = await Deno.makeTempDir();
  const skillsDir = await Deno.makeTempDir();
  await Deno.mkdir(join(skillsDir, "relay"));
  await Deno.writeTextFile(
    join(skillsDir, "relay", "SKILL.md"),
    "---\nname: relay\ndescription: Answers in one turn\nmax_turns: 1\n---\nAnswer the user.\n",
  );
  const mock = await spawnRelayMock("openai");
  let stopped = false;
  try {
    const stack = await startStack({
      llm: { provider: "openai", url: mock.url },
      dataDir,
      skillDirs: [skillsDir],
    });
    const load = Deno.loadavg()[0]!;
    const plan = (
      ask: RelayAsk,
      connections: number,
      runs: number,
    ): AgentPlan => ({
      url: stack.wsUrl,
      skill: "relay",
      arguments: { ...ask },
      connections,
      runs,
      warmup: 1,
      // Paced streams spread over one interval, not all in step.
      stagger_ms: (ask.interval_ms ?? 0) / connections,
    });
    const paced: RelayAsk = {
      tokens: TOKENS_PER_RUN,
      interval_ms: intervalMs,
    };
    const burst: RelayAsk = { tokens: TOKENS_PER_RUN };
    // Each mode: the agent's report and how many tokens it must have seen.
    const modes: Mode[] = [];
    const run = async (agentPlan: AgentPlan, expected: number) => {
      modes.push({ report: await runRelayAgent(agentPlan), expected });
    };
    try {
      await run(plan(paced, 1, PACED_RUNS), PACED_RUNS * TOKENS_PER_RUN);
      await run(
        plan(paced, CONCURRENT, PACED_CONCURRENT_RUNS),
        CONCURRENT * PACED_CONCURRENT_RUNS * TOKENS_PER_RUN,
      );
      await run(plan(burst, 1, BURST_RUNS), BURST_RUNS * TOKENS_PER_RUN);
      await run(
        plan({ tokens: TOKENS_PER_THROUGHPUT_RUN }, CONCURRENT, 1),
        CONCURRENT * TOKENS_PER_THROUGHPUT_RUN,
      );
    } finally {
      await stack.close();
    }
    stopped = true;
    const writes = await mock.stop();
    const [pacedOne, pacedMany, burstOne, throughput] = modes.map((mode) => ({
      ...mode,
      latency: latencyStats(latencies(mode.report, writes, mode.expected)),
    }));
    const rate = (r: AgentReport) => Math.round(r.tokens.length / r.seconds);
    return [
      `paced (a token every ${intervalMs} ms), 1 run at a time: ${
        formatLatency(pacedOne!.latency)
      } (goal p99 ≤ ${LATENCY_GOAL_MS} ms: ${
        pacedOne!.latency.p99 <= LATENCY_GOAL_MS ? "met" : "MISSED"
      })`,
      `paced, ${CONCURRENT} runs at once: ${
        formatLatency(pacedMany!.latency)
      }, ${rate(pacedMany!.report)} tokens/s offered by the pacing`,
      `burst (${TOKENS_PER_RUN} tokens written at once; later tokens queue behind earlier ones), 1 run at a time: ${
        formatLatency(burstOne!.latency)
      }`,
      `throughput: ${
        rate(throughput!.report)
      } tokens/s relayed with ${CONCURRENT} concurrent skill runs (${
        throughput!.report.tokens.length
      } burst tokens in ${throughput!.report.seconds.toFixed(2)} s)`,
      `(mock provider and agent in their own processes; 1-min load average ${
        load.toFixed(2)
      } at start, ${
        Deno.loadavg()[0]!.toFixed(2)
      } at end, on ${navigator.hardwareConcurrency} CPUs)`,
    ];
  } finally {
    if (!stopped) await mock.stop().catch(() => undefined);
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(skillsDir, { recursive: true });
  }
}

/** The bench as `bench/main.ts` lists benches. */
export const skillsBench: { name: string; run(): Promise<string[]> } = {
  name: "skills: token relay to the agent",
  run: () => {
    const interval = Deno.env.get("SKILLBOX_BENCH_INTERVAL_MS");
    return runSkillsBench({
      intervalMs: interval === undefined ? undefined : Number(interval),
    });
  },
};

if (import.meta.main) {
  for (const line of await skillsBench.run()) console.log(line);
}
