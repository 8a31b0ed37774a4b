/**
 * A real host serving one instruction skill, `plain`, whose turns go to
 * one LLM endpoint the test serves: the set-up of the tests that put a
 * hostile or redirecting provider behind a skill. Stopped with
 * `await using`.
 *
 * @module
 */

import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { type A2eSocket, connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

/** A running host with its skills folder. */
export interface LlmHost extends AsyncDisposable {
  /** Opens an A2E session, closed with the host. */
  connect(): Promise<A2eSocket>;
}

/**
 * Starts a host whose one provider (the default) is `provider` at
 * `baseUrl`, with the operator's key `operator-key`.
 *
 * @param provider the provider's dialect
 * @param options its `baseUrl`; `llm`, more of the host's `llm` rules
 *   (`max_response_bytes`, ...)
 * @returns the host, listening and loaded
 */
export async function startLlmHost(
  provider: "openai" | "anthropic",
  options: { baseUrl: string; llm?: Record<string, unknown> },
): Promise<LlmHost> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox-llm-" });
  await Deno.mkdir(join(dir, "plain"));
  await Deno.writeTextFile(
    join(dir, "plain", "SKILL.md"),
    "---\nname: plain\ndescription: Answers with the model's words (tests only).\n---\n\nSay ok.\n",
  );
  const config = parseConfig(JSON.stringify({
    skills: [dir],
    builtin_skills: false,
    sandbox: { cache_dir: null },
    llm: {
      providers: [{
        provider_name: provider,
        provider_credentials: { api_key: "operator-key" },
        provider_config: { base_url: options.baseUrl, model: "m" },
        is_default: true,
      }],
      ...options.llm,
    },
  }));
  const host = createHost({ config });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  await host.ready;
  const sockets: A2eSocket[] = [];
  return {
    async connect() {
      const socket = await connectA2e(url.replace("http", "ws") + "/a2e");
      sockets.push(socket);
      return socket;
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(sockets.map((s) => s.close()));
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * Calls the `plain` skill with a task.
 *
 * @param agent the session
 * @param task the skill's task @default "go"
 * @returns the skill's result
 */
export async function callPlain(
  agent: A2eSocket,
  task = "go",
): Promise<SkillResult> {
  const resp = await agent.request({
    type: "skill/call/req",
    name: "plain",
    arguments: { task },
    timeout: 60,
  });
  return resp.message.data as SkillResult;
}
