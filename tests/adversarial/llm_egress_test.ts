/**
 * Issue 22, items 3 and 4 (LLM): the host's own outbound LLM requests go
 * through the egress rules, and a turn's stream is bounded.
 *
 * Against a real host built from a `skillbox.jsonc`, with local mock
 * providers speaking the real streaming formats: an endpoint chosen by a
 * call (`llm_override`), by a SKILL.md (`llm:`) or by a code skill
 * (`llm_config`) that points at loopback, metadata or private addresses, or
 * redirects there, is refused with the reason and the mock behind it sees
 * no request, while the operator's endpoint keeps working and an endpoint
 * the operator allowed works; a provider that streams without end (text,
 * tool arguments, or 10,000 tool calls) fails that call with a clear error
 * and closes the connection, and other sessions' calls still succeed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import {
  type MockLlmServer,
  type MockTurn,
  startMockOpenAI,
} from "../support/mock_openai.ts";
import { startMockAnthropic } from "../support/mock_anthropic.ts";
import { type A2eSocket, connectA2e } from "../support/skills_host.ts";
import { callPlain, startLlmHost } from "./_llm_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };

const portOf = (mock: MockLlmServer) => new URL(mock.url).port;

/** A skills folder: a plain instruction skill, one naming its own `llm:`, a code skill with `llm_config`. */
async function writeSkills(victimPort: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox-llm-egress-" });
  const write = async (path: string, text: string) => {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  };
  await write(
    "plain/SKILL.md",
    "---\nname: plain\ndescription: Answers with the model's words (tests only).\n---\n\nSay ok.\n",
  );
  await write(
    "own-llm/SKILL.md",
    [
      "---",
      "name: own-llm",
      "description: Names its own LLM endpoint (tests only).",
      "llm:",
      "  provider_name: openai",
      "  provider_credentials:",
      "    api_key: skill-key",
      "  provider_config:",
      `    base_url: http://localhost:${victimPort}/v1`,
      "    model: m",
      "---",
      "",
      "Say ok.",
      "",
    ].join("\n"),
  );
  await write(
    "code-llm/code_llm.ts",
    `export default {
  kind: "skill",
  name: "code_llm",
  description: "Chats with the endpoint its llm_config names (tests only).",
  input_schema: { type: "object", properties: {} },
  llm_config: {
    provider_name: "openai",
    provider_credentials: { api_key: "skill-key" },
    provider_config: { base_url: "http://[::ffff:127.0.0.1]:${victimPort}/v1", model: "m" },
  },
  async run(_args, ctx) {
    const answer = await ctx.llm.chat({ messages: [{ role: "user", content: "hi" }] });
    return { text: answer.text };
  },
};
`,
  );
  return dir;
}

interface Setup {
  host: Host;
  url: string;
  operator: MockLlmServer;
  allowed: MockLlmServer;
  victim: MockLlmServer;
  dir: string;
  close(): Promise<void>;
}

/** The operator's endpoint, an allowed chosen one, and a victim that must see nothing. */
async function setup(
  allowedScript: (index: number) => MockTurn,
  rules: Record<string, unknown> = {},
): Promise<Setup> {
  const operator = startMockOpenAI(() => ({ tokens: ["operator ok"] }));
  const allowed = startMockOpenAI((r) => allowedScript(r.index));
  const victim = startMockOpenAI(() => ({ tokens: ["victim reached"] }));
  const dir = await writeSkills(portOf(victim));
  const v = portOf(victim);
  const config = parseConfig(JSON.stringify({
    skills: [dir],
    builtin_skills: false,
    sandbox: { cache_dir: null },
    // The allowed mock lives on loopback: the operator allows that one
    // address and port by name, nothing else.
    egress: { allow_private_hosts: [`127.0.0.1:${portOf(allowed)}`] },
    llm: {
      providers: [{
        provider_name: "openai",
        provider_credentials: { api_key: "operator-key" },
        provider_config: { base_url: operator.url, model: "op-model" },
        is_default: true,
      }],
      // Every victim form is allow-listed, so what refuses them is the
      // address rules, not the list.
      allowed_hosts: [
        `127.0.0.1:${portOf(allowed)}`,
        `127.0.0.1:${v}`,
        `localhost:${v}`,
        `[::ffff:127.0.0.1]:${v}`,
        `[::1]:${v}`,
        "169.254.169.254",
        "10.0.0.1",
        "metadata.google.internal",
      ],
      ...rules,
    },
  }));
  const host = createHost({ config });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  await host.ready;
  return {
    host,
    url: url.replace("http", "ws") + "/a2e",
    operator,
    allowed,
    victim,
    dir,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await Promise.all([operator.close(), allowed.close(), victim.close()]);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function call(
  agent: A2eSocket,
  name: string,
  override: Record<string, unknown> | null = null,
  task = "go",
): Promise<SkillResult> {
  const resp = await agent.request({
    type: "skill/call/req",
    name,
    arguments: { task },
    timeout: 60,
    ...(override ? { llm_override: override } : {}),
  });
  return resp.message.data as SkillResult;
}

const openaiAt = (base_url: string, api_key = "client-key") => ({
  provider_name: "openai",
  provider_credentials: { api_key },
  provider_config: { base_url, model: "m" },
});

Deno.test(
  "an LLM endpoint a client, a SKILL.md or a code skill chooses is refused on loopback, private and metadata addresses, before any connection; the operator's endpoint and an allowed one keep working",
  OPTS,
  async () => {
    Deno.env.set("OPENAI_CUSTOM_HEADERS", "x-host-secret: from-host-env");
    const s = await setup((i) =>
      i === 0
        ? { tokens: ["allowed ok"] }
        // A redirect from an allowed endpoint to the victim on loopback.
        : { redirect: `${s.victim.url}/chat/completions` }
    );
    const agent = await connectA2e(s.url);
    try {
      const v = portOf(s.victim);
      const refused: [string, RegExp][] = [
        [
          `http://127.0.0.1:${v}/v1`,
          /resolves to 127\.0\.0\.1, which is not a public address/,
        ],
        [`http://localhost:${v}/v1`, /"localhost" resolves to 127\.0\.0\.1/],
        [`http://[::ffff:127.0.0.1]:${v}/v1`, /not a public address/],
        [`http://[::1]:${v}/v1`, /not a public address/],
        [
          "http://169.254.169.254/v1",
          /169\.254\.169\.254, which is not a public address/,
        ],
        ["http://10.0.0.1/v1", /10\.0\.0\.1, which is not a public address/],
        // Not on the operator's list at all.
        [`http://127.0.0.2:${v}/v1`, /its host is not in llm\.allowed_hosts/],
        ["http://evil.example/v1", /its host is not in llm\.allowed_hosts/],
      ];
      for (const [base, reason] of refused) {
        const result = await call(agent, "plain", openaiAt(base));
        assert.equal(result.success, false, base);
        assert.match(
          result.error ?? "",
          // Named as a URL spells it (`[::ffff:7f00:1]`).
          new RegExp(
            `Cannot use LLM endpoint "${escape(new URL(base).href)}": `,
          ),
        );
        assert.match(result.error ?? "", reason, base);
      }
      // The SKILL.md's own `llm:` (localhost) and the code skill's
      // `llm_config` (an IPv4-mapped IPv6 loopback).
      const own = await call(agent, "own-llm");
      assert.equal(own.success, false);
      assert.match(
        own.error ?? "",
        /Cannot use LLM endpoint "http:\/\/localhost:\d+\/v1": Host "localhost" resolves to 127\.0\.0\.1/,
      );
      const code = await call(agent, "code_llm");
      assert.equal(code.success, false);
      assert.match(
        code.error ?? "",
        /Cannot use LLM endpoint "http:\/\/\[::ffff:7f00:1\]:\d+\/v1": .*not a public address/,
      );
      assert.equal(s.victim.requests.length, 0, "the victim saw a request");

      // An allowed endpoint works, with the client's key and none of the
      // host's environment headers.
      const ok = await call(agent, "plain", openaiAt(s.allowed.url));
      assert.equal(ok.success, true, ok.error ?? "");
      const seen = s.allowed.requests[0]!.headers;
      assert.equal(seen.authorization, "Bearer client-key");
      assert.equal(seen["x-host-secret"], undefined);
      // The operator's key is not lent to it.
      const borrow = await call(agent, "plain", {
        provider_name: "openai",
        provider_config: { base_url: s.allowed.url, model: "m" },
      });
      assert.match(
        borrow.error ?? "",
        /Cannot send the host's "openai" credentials/,
      );
      // Its redirect to loopback is refused before the victim is reached.
      const hop = await call(agent, "plain", openaiAt(s.allowed.url));
      assert.equal(hop.success, false);
      assert.match(
        hop.error ?? "",
        /Cannot use LLM endpoint .*Refusing to send a request to "http:\/\/127\.0\.0\.1:\d+"/,
      );
      assert.equal(s.victim.requests.length, 0, "the redirect was followed");

      // The operator's own endpoint keeps working, with the operator's key.
      const mine = await call(agent, "plain");
      assert.equal(mine.success, true, mine.error ?? "");
      assert.equal(
        s.operator.requests.at(-1)!.headers.authorization,
        "Bearer operator-key",
      );
    } finally {
      Deno.env.delete("OPENAI_CUSTOM_HEADERS");
      await agent.close();
      await s.close();
    }
  },
);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const FLOODS: { name: string; turn: MockTurn; error: RegExp }[] = [
  {
    name: "endless text",
    turn: { flood: "text" },
    error:
      /sent more than 65536 bytes of text and tool calls in one turn: the limit is llm\.max_response_bytes \(65536\)/,
  },
  {
    name: "endless tool-call arguments",
    turn: { flood: "tool_arguments" },
    error: /sent more than 65536 bytes of text and tool calls in one turn/,
  },
  {
    name: "10,000 tool calls in a turn",
    turn: { flood: "tool_calls", flood_count: 10_000 },
    error:
      /made more than 8 tool calls in one turn: the limit is llm\.max_tool_calls \(8\)/,
  },
];

for (const dialect of ["openai", "anthropic"] as const) {
  Deno.test(
    `${dialect}: a provider that streams without end fails that call clearly, its connection closed, while another session's call succeeds`,
    OPTS,
    async (t) => {
      const start = dialect === "openai" ? startMockOpenAI : startMockAnthropic;
      const flood = start((r) => {
        const body = JSON.stringify(r.body.messages ?? "");
        // The other session's call gets a normal answer.
        if (body.includes("calm")) return { tokens: ["calm ok"] };
        return FLOODS.find((f) => body.includes(f.name))!.turn;
      });
      try {
        await using llm = await startLlmHost(dialect, {
          baseUrl: flood.url,
          llm: { max_response_bytes: 65536, max_tool_calls: 8 },
        });
        const agent = await llm.connect();
        const other = await llm.connect();
        for (const f of FLOODS) {
          await t.step(f.name, async () => {
            const index = flood.requests.length;
            const [bad, calm] = await Promise.all([
              callPlain(agent, f.name),
              callPlain(other, "calm"),
            ]);
            assert.equal(bad.success, false);
            assert.equal(bad.error_code, "skill_error");
            assert.match(bad.error ?? "", f.error);
            assert.equal(calm.success, true, calm.error ?? "");
            // The flood's connection was closed (the mock saw the client go).
            if (f.turn.flood !== "tool_calls") {
              const i = flood.requests.findIndex((r, n) =>
                n >= index && JSON.stringify(r.body.messages).includes(f.name)
              );
              await flood.disconnected(i);
            }
          });
        }
      } finally {
        await flood.close();
      }
    },
  );
}
