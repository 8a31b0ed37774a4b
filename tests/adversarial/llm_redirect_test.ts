/**
 * The operator's own LLM endpoint answering with a redirect, against a real
 * host: a redirect to another origin (here a victim on loopback, standing
 * for a metadata or internal address the provider cannot reach itself) is
 * not followed, so the victim sees no request, neither the conversation
 * nor any header; the call fails saying where it was sent. A redirect on
 * the endpoint's own origin is still followed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { startMockAnthropic } from "../support/mock_anthropic.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "the operator's LLM endpoint redirecting to another origin is not followed and its key goes nowhere else; a redirect on its own origin is",
  OPTS,
  async () => {
    const victim = startMockAnthropic(() => ({ tokens: ["victim reached"] }));
    let endpoint = "";
    const operator = startMockAnthropic((r) =>
      r.index === 0 ? { redirect: `${victim.url}/v1/messages` } : r.index === 1
        // Same origin: followed, answered by the next turn.
        ? { redirect: `${endpoint}/v1/messages` }
        : { tokens: ["operator ok"] }
    );
    endpoint = operator.url;
    const dir = await Deno.makeTempDir({ prefix: "skillbox-llm-redirect-" });
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
          provider_name: "anthropic",
          provider_credentials: { api_key: "operator-key" },
          provider_config: { base_url: operator.url, model: "m" },
          is_default: true,
        }],
      },
    }));
    const host = createHost({ config });
    try {
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      await host.ready;
      const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
      try {
        const call = async () =>
          (await agent.request({
            type: "skill/call/req",
            name: "plain",
            arguments: { task: "go" },
            timeout: 60,
          })).message.data as SkillResult;
        const away = await call();
        assert.equal(
          victim.requests.length,
          0,
          "the redirect to another origin was followed",
        );
        assert.equal(away.success, false);
        assert.match(
          away.error ?? "",
          new RegExp(
            `LLM endpoint "${
              operator.url.replaceAll(".", "\\.")
            }" redirected to another origin, "${
              victim.url.replaceAll(".", "\\.")
            }": not followed`,
          ),
        );
        const home = await call();
        assert.equal(home.success, true, home.error ?? "");
        assert.equal(operator.requests.length, 3);
      } finally {
        await agent.close();
      }
    } finally {
      await host.close({ timeoutSeconds: 1 });
      await Promise.all([operator.close(), victim.close()]);
      await Deno.remove(dir, { recursive: true });
    }
  },
);
