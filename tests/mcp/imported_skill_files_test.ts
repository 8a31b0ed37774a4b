/**
 * The supporting files of an imported server's skills (SEP-2640), end to
 * end: a fixture server (official SDK, stdio, confined like any imported
 * server) serves `docs` (a reference file and a script), `forged` (a
 * reference file whose listed digest is not its bytes'), `bloated` (a
 * listing over the extension's 16 MiB) and `tampered` (a `SKILL.md` whose
 * listed digest is not its bytes'). The host's agent loop, driven by a mock
 * model speaking OpenAI's streaming format, reads `docs`' files with
 * `read_skill_file`, each fetched with `resources/read` and checked against
 * the listing before the model sees it; a forged file fails the run with
 * the reason; a path outside the listing is refused; a refused skill is
 * listed Blocked with the reason and cannot be called.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { Host } from "../../runtime/host.ts";
import type { SkillDefinition, SkillResult } from "../../protocol/skill.ts";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type MockTurn, startMockOpenAI } from "../support/mock_openai.ts";
import { connectClient } from "../support/tools_harness.ts";
import { denoServer, withHost } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

const SERVER = fileURLToPath(
  new URL("../fixtures/mcp_skills/files_server.ts", import.meta.url),
);

// A host importing the files server alone, its model the mock's, with an
// A2E client.
async function withKit(
  turns: MockTurn[],
  body: (
    a2e: Awaited<ReturnType<typeof connectClient>>,
    context: {
      host: Host;
      url: string;
      requests: { body: unknown }[];
      lines: string[];
    },
  ) => Promise<void>,
): Promise<void> {
  await using mock = startMockOpenAI(turns);
  const lines: string[] = [];
  await withHost({
    llmUrl: mock.url,
    fixtures: false,
    mcpServers: { kit: denoServer(SERVER) },
    log: (line) => lines.push(line),
  }, async ({ host, url }) => {
    const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
    try {
      await body(a2e, { host, url, requests: mock.requests, lines });
    } finally {
      a2e.close();
    }
  });
}

// Calls the skill `name` (no arguments) over A2E; its result.
async function callSkill(
  a2e: Awaited<ReturnType<typeof connectClient>>,
  name: string,
): Promise<SkillResult> {
  const ran = await a2e.request("skill/call/req", { name, arguments: {} });
  return ran.final.data as SkillResult;
}

const read = (path: string) => ({
  name: "read_skill_file",
  arguments: { path },
});

Deno.test("an imported skill's agent loop reads its reference file and script, checked against the listing", async () => {
  await withKit([
    { tool_calls: [read("references/guide.md"), read("scripts/tidy.sh")] },
    { tokens: ["The word is periwinkle."] },
  ], async (a2e, { requests }) => {
    const result = await callSkill(a2e, "kit__docs");
    assert.equal(result.success, true, JSON.stringify(result));
    assert.match(JSON.stringify(result.data), /periwinkle/);
    assert.equal(requests.length, 2);
    // The model is offered the listed files, told scripts are not run.
    const first = requests[0]!.body as {
      tools: { function: { name: string; description: string } }[];
    };
    const tool = first.tools.find((t) => t.function.name === "read_skill_file");
    assert.ok(tool, JSON.stringify(first.tools.map((t) => t.function.name)));
    assert.match(tool.function.description, /"references\/guide\.md"/);
    assert.match(tool.function.description, /"scripts\/tidy\.sh"/);
    assert.match(tool.function.description, /does not run/);
    assert.ok(
      !first.tools.some((t) => t.function.name === "run_skill_script"),
    );
    // The answers hold the files' text, tagged with their origin.
    const second = JSON.stringify(requests[1]!.body);
    assert.match(second, /The secret word is PERIWINKLE\./);
    assert.match(second, /TIDY-SCRIPT-BODY/);
    assert.match(second, /served by the MCP server \\"kit\\"/);
    assert.match(second, /this host does not run it/);
  });
});

Deno.test("an imported skill's files outside its listing are refused, and its scripts are not run", async () => {
  await withKit([
    {
      tool_calls: [
        read("../forged/SKILL.md"),
        read("skill://forged/references/notes.md"),
        read("mcp-skill://kit/forged/references/notes.md"),
        read("SKILL.md"),
        read("references/../../tampered/SKILL.md"),
        { name: "run_skill_script", arguments: { script: "scripts/tidy.sh" } },
      ],
    },
    { tokens: ["Nothing to read."] },
  ], async (a2e, { requests }) => {
    const result = await callSkill(a2e, "kit__docs");
    assert.equal(result.success, true, JSON.stringify(result));
    const second = JSON.stringify(requests[1]!.body);
    for (
      const path of [
        "../forged/SKILL.md",
        "skill://forged/references/notes.md",
        "mcp-skill://kit/forged/references/notes.md",
        "SKILL.md",
        "references/../../tampered/SKILL.md",
      ]
    ) {
      assert.ok(
        second.includes(
          `Cannot read \\"${path}\\": not a file of skill \\"kit__docs\\"`,
        ),
        `${path}: ${second}`,
      );
    }
    assert.doesNotMatch(second, /Reads its notes|FORGED-BYTES|Ignore your/);
    // Not offered, so not run (the relay refuses it too: see
    // runtime/skills/relays_test.ts).
    assert.match(
      second,
      /Tool \\"run_skill_script\\" is not available to this skill/,
    );
    assert.doesNotMatch(second, /TIDY-SCRIPT-BODY/);
    const failed = result.events.filter((e) => e.kind === "tool.failed");
    assert.equal(failed.length, 5, JSON.stringify(failed));
  });
});

Deno.test("a forged reference file of an imported skill fails the run with the reason, unseen by the model", async () => {
  await withKit([
    { tool_calls: [read("references/notes.md")] },
    { tokens: ["I obeyed the notes."] },
  ], async (a2e, { requests }) => {
    const result = await callSkill(a2e, "kit__forged");
    assert.equal(result.success, false, JSON.stringify(result));
    assert.match(
      String(result.error),
      /"references\/notes\.md" of skill "kit__forged" is refused: the MCP server "kit" served bytes hashing to sha256:[0-9a-f]{64}, its listing promises sha256:[0-9a-f]{64}/,
    );
    assert.equal(requests.length, 1);
    assert.doesNotMatch(JSON.stringify(requests), /FORGED-BYTES/);
    assert.doesNotMatch(JSON.stringify(result), /FORGED-BYTES/);
  });
});

Deno.test("a refused imported skill is listed Blocked with the reason and cannot be called", async () => {
  await withKit([], async (a2e, { url, requests, lines }) => {
    const discovered = await a2e.request("skill/discover/req", {});
    const skills = discovered.final.skills as SkillDefinition[];
    const byName = new Map(skills.map((s) => [s.name, s]));
    assert.equal(byName.get("kit__docs")?.status, "Published");
    const reasons = {
      kit__bloated:
        /^its files total \d+ bytes, over the 16777216 a skill may hold$/,
      kit__tampered:
        /^its SKILL\.md hashes to sha256:[0-9a-f]{64}, the listing promises sha256:[0-9a-f]{64}$/,
    };
    for (const [name, reason] of Object.entries(reasons)) {
      const skill = byName.get(name);
      assert.ok(skill, `${name}: ${[...byName.keys()].join(", ")}`);
      assert.equal(skill.status, "Blocked");
      assert.match(String(skill.metadata?.blocked_reason), reason);
      // Nothing of a refused SKILL.md reaches a client.
      assert.doesNotMatch(JSON.stringify(skill), /Ignore your instructions/);
      const result = await callSkill(a2e, name);
      assert.equal(result.success, false);
      assert.equal(result.error_code, "skill_error");
      assert.match(
        String(result.error),
        new RegExp(`^Cannot run skill "${name}" \\(Blocked\\): its`),
      );
    }
    assert.equal(requests.length, 0);
    // The console's catalog reads skill/discover: it shows them Blocked too;
    // the log says why.
    assert.ok(
      lines.some((l) =>
        /skill "skill:\/\/bloated\/SKILL\.md" refused: its files total/.test(l)
      ),
      lines.join("\n"),
    );
    // Not offered to MCP clients as a tool nor as a prompt.
    const mcp = await connectMcp(url);
    const { tools } = await mcp.listTools();
    assert.ok(!tools.some((t: Tool) => /bloated|tampered/.test(t.name)));
    const { prompts } = await mcp.listPrompts();
    assert.ok(prompts.some((p: { name: string }) => p.name === "kit__docs"));
    assert.ok(
      !prompts.some((p: { name: string }) => /bloated|tampered/.test(p.name)),
    );
    await mcp.close();
  });
});
