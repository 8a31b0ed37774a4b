/**
 * End-to-end: the real host over a WebSocket, the real sandbox pool and
 * registry running the shipped skills, the filesystem toolkit through the
 * tools capability's call path, and the LLM through the official `openai`
 * and `@anthropic-ai/sdk` clients against local mock servers speaking each
 * provider's streaming format.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { startMockAnthropic } from "../support/mock_anthropic.ts";
import type { MockLlmServer, MockScript } from "../support/mock_openai.ts";
import {
  connectA2e,
  type Received,
  type Stack,
  startStack,
} from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function withStack(
  provider: "openai" | "anthropic",
  script: MockScript,
  body: (
    ctx: {
      stack: Stack;
      mock: MockLlmServer;
      dataDir: string;
      skillsDir: string;
    },
  ) => Promise<void>,
) {
  const dataDir = await Deno.realPath(await Deno.makeTempDir());
  const skillsDir = await Deno.realPath(await Deno.makeTempDir());
  const mock = provider === "openai"
    ? await startMockOpenAI(script)
    : await startMockAnthropic(script);
  await prepare(dataDir, skillsDir);
  const stack = await startStack({
    llm: { provider, url: mock.url },
    dataDir,
    skillDirs: [skillsDir],
  });
  try {
    await body({ stack, mock, dataDir, skillsDir });
  } finally {
    await stack.close();
    await mock.close();
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(skillsDir, { recursive: true });
  }
}

async function prepare(dataDir: string, skillsDir: string) {
  await Deno.mkdir(join(dataDir, "src"));
  await Deno.writeTextFile(
    join(dataDir, "src", "server.ts"),
    'import { auth } from "./auth.ts";\n// TODO: add rate limiting\nexport const serve = () => auth();\n',
  );
  await Deno.writeTextFile(
    join(dataDir, "src", "auth.ts"),
    "// FIXME: tokens never expire\nexport const auth = () => true;\n",
  );
  const rows = ["id,amount,region"];
  for (let i = 1; i <= 500; i++) {
    rows.push(
      `${i},${i % 7 === 0 ? "" : i * 1.5},${["north", "south"][i % 2]}`,
    );
  }
  await Deno.writeTextFile(join(dataDir, "sales.csv"), rows.join("\n") + "\n");
  await Deno.mkdir(join(skillsDir, "looper"));
  await Deno.writeTextFile(
    join(skillsDir, "looper", "SKILL.md"),
    "---\nname: looper\ndescription: Lists folders forever\ntools: [list_dir]\nmax_turns: 2\n---\nList the root.\n",
  );
}

const call = (
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  type: "skill/call/req",
  name,
  arguments: args,
  streaming: true,
  ...extra,
});

/** Waits for `promise`, failing the test after `ms` instead of hanging it. */
async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Timed out waiting for ${what}`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const kindsOf = (events: { kind: string }[]) => events.map((e) => e.kind);

Deno.test(
  "csv_profile runs in the sandbox and reads through the filesystem toolkit",
  opts,
  async () => {
    await withStack("openai", [], async ({ stack }) => {
      const agent = await connectA2e(stack.wsUrl);
      const live: Received[] = [];
      const resp = await agent.request(
        call("csv_profile", { path: "sales.csv" }),
        (r) => live.push(r),
      );
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      const data = result.data as {
        rows: number;
        columns: { name: string; type: string; nulls: number }[];
      };
      assert.equal(data.rows, 500);
      assert.deepEqual(data.columns.map((c) => [c.name, c.type, c.nulls]), [
        ["id", "integer", 0],
        ["amount", "number", 71],
        ["region", "string", 0],
      ]);
      const kinds = kindsOf(result.events);
      assert.equal(kinds[0], "skill.started");
      assert.ok(
        kinds.includes("tool.started") && kinds.includes("tool.completed"),
      );
      assert.ok(kinds.includes("progress"));
      assert.equal(kinds.at(-1), "skill.completed");
      assert.deepEqual(
        live.map((r) => r.message.seq),
        result.events.map((e) => e.seq),
      );
      await agent.close();
    });
  },
);

Deno.test(
  "explain_file: a two-turn tool-calling run through the OpenAI SDK, tokens live before the answer",
  opts,
  async () => {
    const release = Promise.withResolvers<void>();
    await withStack("openai", [
      {
        tool_calls: [{ name: "read_file", arguments: { path: "src/auth.ts" } }],
      },
      {
        tokens: ["`server.ts` ", "serves ", "requests ", "after auth."],
        pause: release.promise,
      },
    ], async ({ stack, mock }) => {
      const agent = await connectA2e(stack.wsUrl);
      let tokens = 0;
      const pending = agent.request(
        // The timeout only bounds a cold sandbox start on a loaded machine.
        call("explain_file", { path: "src/server.ts" }, { timeout: 30 }),
        (r) => {
          if (r.message.kind === "llm.token") {
            tokens++;
            // Every token arrived while the provider is still paused mid-turn.
            if (tokens === 4) release.resolve();
          }
        },
      );
      const resp = await within(pending, 20_000, "the skill's answer");
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      assert.equal(tokens, 4);
      const data = result.data as { explanation: string; files_read: string[] };
      assert.equal(data.explanation, "`server.ts` serves requests after auth.");
      assert.deepEqual(data.files_read, ["src/server.ts", "src/auth.ts"]);
      // The second turn fed the related file back as a tool result.
      const second = mock.requests[1]!.body.messages as {
        role: string;
        content: string;
      }[];
      assert.match(second.at(-1)!.content, /tokens never expire/);
      const kinds = kindsOf(result.events);
      assert.deepEqual(
        kinds.filter((k) => k.startsWith("llm.") && k !== "llm.token"),
        [
          "llm.started",
          "llm.completed",
          "llm.started",
          "llm.completed",
        ],
      );
      const done = result.events.filter((e) => e.kind === "llm.completed");
      assert.equal(done[0]!.data.stop_reason, "tool_use");
      assert.equal(done[1]!.data.stop_reason, "end_turn");
      assert.equal(
        result.events.filter((e) => e.kind === "tool.completed").length,
        3,
      );
      await agent.close();
    });
  },
);

Deno.test(
  "find-todos (SKILL.md) runs the agent loop through the Anthropic SDK with intentions and the linked guide",
  opts,
  async () => {
    const answer = {
      total: 2,
      by_marker: { TODO: 1, FIXME: 1 },
      items: [
        {
          file: "src/auth.ts",
          line: 1,
          marker: "FIXME",
          text: "tokens never expire",
          priority: "high",
          next_step: "Expire tokens in `auth()`",
        },
        {
          file: "src/server.ts",
          line: 2,
          marker: "TODO",
          text: "add rate limiting",
          priority: "low",
        },
      ],
    };
    await withStack("anthropic", [
      {
        tool_calls: [{
          name: "grep",
          arguments: {
            pattern: "\\b(TODO|FIXME)\\b",
            path: "src",
            intention: "Find every marker",
          },
        }],
      },
      {
        tool_calls: [{
          name: "read_skill_file",
          arguments: {
            path: "reference/triage.md",
            intention: "Learn the priorities",
          },
        }],
      },
      { tokens: ["```json\n", JSON.stringify(answer), "\n```"] },
    ], async ({ stack, mock }) => {
      const agent = await connectA2e(stack.wsUrl);
      const resp = await agent.request(call("find-todos", { path: "src" }));
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      assert.deepEqual(result.data, answer);
      const started = result.events.filter((e) => e.kind === "tool.started");
      assert.deepEqual(started.map((e) => [e.data.tool, e.data.intention]), [
        ["grep", "Find every marker"],
        ["read_skill_file", "Learn the priorities"],
      ]);
      // The intention never reached the tool: grep validated its arguments.
      assert.ok(!String(started[0]!.data.arguments).includes("intention"));
      const turn2 = mock.requests[1]!.body.messages as {
        role: string;
        content: unknown;
      }[];
      assert.match(JSON.stringify(turn2.at(-1)), /auth\.ts/);
      const turn3 = mock.requests[2]!.body.messages as {
        role: string;
        content: unknown;
      }[];
      assert.match(JSON.stringify(turn3.at(-1)), /Triage guide/);
      const offered = mock.requests[0]!.body.tools as {
        name: string;
        input_schema: { properties: object };
      }[];
      assert.ok(
        offered.some((t) =>
          t.name === "grep" && "intention" in t.input_schema.properties
        ),
      );
      assert.match(
        String(
          mock.requests[0]!.body.system ??
            JSON.stringify(mock.requests[0]!.body),
        ),
        /Find TODOs/,
      );
      await agent.close();
    });
  },
);

Deno.test(
  "an instruction skill that keeps calling tools stops at max_turns",
  opts,
  async () => {
    const again = {
      tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
    };
    await withStack(
      "openai",
      [again, again, again],
      async ({ stack, mock }) => {
        const agent = await connectA2e(stack.wsUrl);
        const resp = await agent.request(call("looper", {}));
        const result = resp.message.data as SkillResult;
        assert.equal(result.success, false);
        assert.equal(result.error_code, "max_turns_exceeded");
        assert.equal(mock.requests.length, 2);
        assert.equal(result.events.at(-1)?.kind, "skill.failed");
        await agent.close();
      },
    );
  },
);

Deno.test(
  "provider HTTP 429 and 500 surface as a clear skill.failed",
  opts,
  async (t) => {
    for (const provider of ["openai", "anthropic"] as const) {
      for (const status of [429, 500]) {
        await t.step(`${provider} ${status}`, async () => {
          await withStack(
            provider,
            [{ status, error_message: "Slow down" }],
            async ({ stack }) => {
              const agent = await connectA2e(stack.wsUrl);
              // The provider answers at once; the timeout only bounds a
              // cold sandbox start on a loaded machine.
              const resp = await agent.request(
                call("explain_file", { path: "src/server.ts" }, {
                  timeout: 30,
                }),
              );
              const result = resp.message.data as SkillResult;
              assert.equal(result.success, false);
              assert.match(
                result.error ?? "",
                new RegExp(
                  `LLM provider "${provider}" answered HTTP ${status}: Slow down`,
                ),
              );
              const failed = result.events.at(-1)!;
              assert.equal(failed.kind, "skill.failed");
              assert.match(
                String(failed.data.error),
                new RegExp(`HTTP ${status}`),
              );
              await agent.close();
            },
          );
        });
      }
    }
  },
);

Deno.test(
  "closing the WebSocket mid-stream aborts the skill and its LLM stream",
  opts,
  async () => {
    await withStack(
      "openai",
      [{ tokens: ["partial ", "answer"], hang: true }],
      async ({ stack, mock }) => {
        const agent = await connectA2e(stack.wsUrl);
        const twoTokens = Promise.withResolvers<void>();
        let tokens = 0;
        void agent.request(
          call("explain_file", { path: "src/server.ts", max_related: 0 }),
          (r) => {
            if (r.message.kind === "llm.token" && ++tokens === 2) {
              twoTokens.resolve();
            }
          },
        ).catch(() => {});
        await within(twoTokens.promise, 10_000, "two tokens");
        await within(agent.close(), 5_000, "the socket to close");
        // The host closed the provider connection: the mock saw the client go.
        await within(
          mock.disconnected(0),
          10_000,
          "the provider stream to close",
        );
        assert.equal(mock.requests.length, 1);
      },
    );
  },
);
