/**
 * What a hostile LLM stream costs the host's memory (issue 22, item 4): a
 * real host with the default `llm` rules, its provider a mock that streams
 * without end (text, tool-call arguments) or 10,000 tool calls in a turn.
 * Each flood is one skill call with a timeout of `SECONDS` (first argument,
 * default 5); the host's RSS (`Deno.memoryUsage()`, the mock runs in this
 * process too but makes its stream as it is read, holding nothing) is
 * sampled every 50 ms, and printed before, at its peak during each flood,
 * and after. Uses only the array form of `llm`, so the same script measures
 * an older host too.
 *
 * Run: `deno run -A bench/llm_flood_bench.ts [seconds]`
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { createHost } from "../runtime/host.ts";
import { parseConfig } from "../runtime/config.ts";
import {
  type MockTurn,
  startMockOpenAI,
} from "../tests/support/mock_openai.ts";
import { connectA2e } from "../tests/support/skills_host.ts";
import type { SkillResult } from "../protocol/skill.ts";

const FLOODS: Record<string, MockTurn> = {
  "endless text": { flood: "text" },
  "endless tool-call arguments": { flood: "tool_arguments" },
  "10,000 tool calls in a turn": { flood: "tool_calls", flood_count: 10_000 },
};

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

/**
 * Runs the floods and prints RSS figures in MB.
 *
 * @param seconds each flood call's timeout
 * @example
 * ```ts ignore
 * await measureFloods(5);
 * ```
 */
export async function measureFloods(seconds: number): Promise<void> {
  const mock = startMockOpenAI((r) => {
    const said = JSON.stringify(r.body.messages ?? "");
    const name = Object.keys(FLOODS).find((n) => said.includes(n));
    return name ? FLOODS[name]! : { tokens: ["calm ok"] };
  });
  const dir = await Deno.makeTempDir({ prefix: "skillbox-llm-flood-" });
  await Deno.mkdir(join(dir, "plain"));
  await Deno.writeTextFile(
    join(dir, "plain", "SKILL.md"),
    "---\nname: plain\ndescription: Does the task.\n---\n\nDo the task.\n",
  );
  const host = createHost({
    config: parseConfig(JSON.stringify({
      skills: [dir],
      builtin_skills: false,
      sandbox: { cache_dir: null },
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "k" },
        provider_config: { base_url: mock.url, model: "m" },
      }],
    })),
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
  const call = async (task: string) =>
    (await agent.request({
      type: "skill/call/req",
      name: "plain",
      arguments: { task },
      timeout: seconds,
    })).message.data as SkillResult;
  try {
    await call("calm");
    console.log(`baseline RSS: ${mb(Deno.memoryUsage().rss)} MB`);
    for (const name of Object.keys(FLOODS)) {
      let peak = Deno.memoryUsage().rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, Deno.memoryUsage().rss);
      }, 50);
      const start = performance.now();
      const result = await call(name);
      const ms = performance.now() - start;
      clearInterval(sampler);
      const calm = await call("calm");
      console.log(
        `${name}: peak RSS ${mb(peak)} MB, after ${
          mb(Deno.memoryUsage().rss)
        } MB, ${ms.toFixed(0)} ms; ${
          result.success ? "succeeded" : `failed: ${result.error}`
        }; next call ${calm.success ? "ok" : `failed: ${calm.error}`}`,
      );
    }
  } finally {
    await agent.close();
    await host.close({ timeoutSeconds: 1 });
    await mock.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await measureFloods(Number(Deno.args[0] ?? 5));
