/**
 * A skill script reaches the network only when its skill declares the
 * hosts (`net`) and the policy grants them, and then only through the
 * egress broker: a host outside the grant, a loopback address the operator
 * did not allow by name, and a direct connection are all refused.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/net/", import.meta.url),
);

Deno.test(
  "a script's network: only its granted hosts, only through the egress broker",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    const seen: string[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => {
        seen.push(req.headers.get("host") ?? "");
        return new Response("reached");
      },
    );
    const port = server.addr.port;
    let urls: string[] = [];
    let script = "scripts/fetch.py";
    const mock = await startMockOpenAI((req) => {
      const last = (req.body.messages as { role: string }[]).at(-1)!;
      return last.role === "tool" ? { tokens: ["done"] } : {
        tool_calls: [{
          name: "run_skill_script",
          arguments: { script, args: urls },
        }],
      };
    });
    const host = createHost({
      config: parseConfig(JSON.stringify({
        skills: [FIXTURES],
        builtin_skills: false,
        sandbox: { cache_dir: null },
        egress: { allow_private_hosts: ["localhost"] },
        policy: { permissions: { net: ["localhost", "127.0.0.1"] } },
        llm: [{
          provider_name: "openai",
          provider_credentials: { api_key: "test-key" },
          provider_config: { base_url: mock.url, model: "mock-model" },
          is_default: true,
        }],
      })),
    });
    try {
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      await host.ready;
      const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
      const run = async (skill: string, list: string[], file = "fetch.py") => {
        urls = list;
        script = `scripts/${file}`;
        const resp = await agent.request({
          type: "skill/call/req",
          name: skill,
          arguments: { task: "fetch" },
          timeout: 60,
        });
        const result = resp.message.data as SkillResult;
        assert.equal(result.success, true, result.error ?? "");
        const messages = mock.requests.at(-1)!.body.messages as {
          content: string;
        }[];
        const fed = JSON.parse(messages.at(-1)!.content);
        assert.equal(fed.exit_code, 0, fed.stderr_tail);
        return String(fed.stdout_tail).trim().split("\n");
      };
      const local = `http://localhost:${port}/`;
      const loopback = `http://127.0.0.1:${port}/`;

      // Granted and allowed by name: through the broker. Anything else:
      // refused by the proxy (403), and no way around it.
      assert.deepEqual(
        await run("net-fetch", [
          local,
          loopback,
          "http://example.com/",
          `direct:${loopback}`,
        ]),
        [
          `${local} 200 reached`,
          `${loopback} 403`,
          "http://example.com/ 403",
          `direct:${loopback} error`,
        ],
      );
      assert.deepEqual(seen, [`localhost:${port}`]);

      // Deno's fetch goes the same way (the sandboxed Deno interpreter);
      // a host outside the grant is refused by Deno's own --allow-net first.
      assert.deepEqual(
        await run("net-fetch", [local, loopback], "fetch.ts"),
        [`${local} 200 reached`, `${loopback} error`],
      );
      seen.length = 0;

      // Granted by the policy, but a loopback address the operator did not
      // allow by name: the broker refuses it.
      const [byAddress] = await run("net-loopback", [loopback]);
      assert.doesNotMatch(byAddress!, / 200 /);

      // No `net` declared, or hosts the policy refuses: no network at all.
      for (const skill of ["net-none", "net-refused"]) {
        assert.deepEqual(await run(skill, [local, `direct:${loopback}`]), [
          `${local} error`,
          `direct:${loopback} error`,
        ]);
      }
      assert.deepEqual(seen, []);
      await agent.close();
    } finally {
      await host.close({ timeoutSeconds: 1 });
      await mock.close();
      await server.shutdown();
    }
  },
);
