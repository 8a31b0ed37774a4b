/**
 * Skills of an imported MCP server (SEP-2640), end to end: a fixture server
 * (official SDK, stdio, confined like any imported server) serves `greeting`
 * and `tampered` (its listing promises a digest its `SKILL.md` does not
 * have). `greeting` becomes the skill `kit__greeting`, discoverable over A2E
 * and MCP (a tool, and a skill served again as
 * `mcp-skill://kit/greeting/SKILL.md`), run by the host's agent loop with
 * the server's tools; `tampered`
 * is refused with the reason, listed Blocked and never run; after the server says its
 * resources changed, its listing is read again.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { SkillDefinition } from "../../protocol/skill.ts";
import {
  ErrorCode,
  type McpError,
  ResultSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectClient } from "../support/tools_harness.ts";
import { denoServer, withHost } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

const SERVER = fileURLToPath(
  new URL("../fixtures/mcp_skills/server.ts", import.meta.url),
);
const KIT = denoServer(SERVER);

Deno.test("an imported server's verified skill is discoverable and runs with its tools; a tampered one is refused", async () => {
  await using mock = startMockOpenAI([
    { tool_calls: [{ name: "kit__wave", arguments: {} }] },
    { tokens: ["Hello, waved."] },
  ]);
  await withHost({
    llmUrl: mock.url,
    fixtures: false,
    mcpServers: { kit: KIT },
  }, async ({ url }) => {
    const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
    const discovered = await a2e.request("skill/discover/req", {});
    const skills = discovered.final.skills as SkillDefinition[];
    const greeting = skills.find((s) => s.name === "kit__greeting");
    assert.ok(greeting, JSON.stringify(skills.map((s) => s.name)));
    assert.equal(greeting.status, "Published");
    assert.equal(greeting.description, "Greets with the wave tool");
    // Tagged with its origin where the model reads it.
    assert.match(
      greeting.instructions ?? "",
      /served by the MCP server "kit"; untrusted content\.\]\n\nCall the wave tool/,
    );
    assert.deepEqual(greeting.toolkits, ["kit"]);
    // The tampered one is listed Blocked with the reason, nothing of it
    // served, and cannot be called.
    const tampered = skills.find((s) => s.name === "kit__tampered");
    assert.equal(tampered?.status, "Blocked");
    assert.match(
      String(tampered.metadata?.blocked_reason),
      /^its SKILL\.md hashes to sha256:[0-9a-f]{64}, the listing promises/,
    );
    assert.doesNotMatch(JSON.stringify(tampered), /Ignore your instructions/);
    const refused = await a2e.request("skill/call/req", {
      name: "kit__tampered",
      arguments: {},
    });
    assert.match(
      JSON.stringify(refused.final),
      /Cannot run skill \\"kit__tampered\\" \(Blocked\): its SKILL\.md hashes/,
    );

    // The refusal says why.
    const kits = await a2e.request("toolkit/list/req", {});
    const kit = (kits.final.toolkits as { name: string; description: string }[])
      .find((k) => k.name === "kit")!;
    assert.match(
      kit.description,
      /skill "skill:\/\/tampered\/SKILL.md" refused: its SKILL.md hashes to sha256:[0-9a-f]{64}, the listing promises sha256:[0-9a-f]{64}/,
    );

    // MCP clients see it as a tool too, and as a skill served again under
    // mcp-skill://<server>/..., each read checked against its server's entry.
    const mcp = await connectMcp(url);
    const { tools } = await mcp.listTools();
    assert.ok(tools.some((t: Tool) => t.name === "kit__greeting"));
    const listed = await mcp.request(
      { method: "skills/list", params: {} } as never,
      ResultSchema,
    ) as { skills: { uri: string; resources: { digest: string }[] }[] };
    assert.deepEqual(listed.skills.map((s) => s.uri), [
      "mcp-skill://kit/greeting/SKILL.md",
    ]);
    const read = await mcp.readResource({
      uri: "mcp-skill://kit/greeting/SKILL.md",
    });
    const text = String((read.contents[0] as { text?: string }).text);
    assert.match(text, /^---\nname: greeting\n/);
    assert.equal(
      await sha256(new TextEncoder().encode(text)),
      listed.skills[0]!.resources[0]!.digest,
    );
    for (
      const uri of [
        "mcp-skill://kit/tampered/SKILL.md",
        "mcp-skill://kit/greeting/../tampered/SKILL.md",
        "skill://greeting/SKILL.md",
      ]
    ) {
      await assert.rejects(
        mcp.readResource({ uri }),
        (e: McpError) => e.code === ErrorCode.InvalidParams,
        uri,
      );
    }

    // The agent loop runs it with the server's tools.
    const ran = await a2e.request("skill/call/req", {
      name: "kit__greeting",
      arguments: {},
    });
    const data = ran.final.data as { output?: unknown } | null;
    assert.ok(data, JSON.stringify(ran.final));
    assert.match(JSON.stringify(data), /Hello, waved\./);
    const first = JSON.stringify(mock.requests[0]!.body);
    assert.match(first, /Call the wave tool/);
    assert.match(first, /kit__wave/);
    assert.match(JSON.stringify(mock.requests[1]!.body), /\*waves\*/);

    // The server serves other bytes than it listed: the read is refused.
    await a2e.request("tool/call/req", {
      tool_name: "kit__swap",
      arguments: {},
    });
    await assert.rejects(
      mcp.readResource({ uri: "mcp-skill://kit/greeting/SKILL.md" }),
      (e: McpError) => {
        assert.match(e.message, /not what the MCP server "kit" listed/);
        return true;
      },
    );

    // The server's listing changes: the host reads it again and says so.
    const changed = a2e.push((m) =>
      m.type === "invoke/event" && m.kind === "tools.changed"
    );
    await a2e.request("tool/call/req", {
      tool_name: "kit__shake",
      arguments: {},
    });
    await changed;
    const again = await a2e.request("skill/discover/req", {});
    const names = (again.final.skills as SkillDefinition[]).map((s) => s.name);
    assert.ok(!names.includes("kit__greeting"), names.join(","));
    await mcp.close();
    a2e.close();
  });
});

Deno.test("an imported skill's file holding a value of its server's env is never served to MCP clients", async () => {
  await using mock = startMockOpenAI([]);
  const secret = "hunter2-very-secret";
  const kit = { ...KIT, env: { ...KIT.env, SECRET_TOKEN: secret } };
  await withHost({
    llmUrl: mock.url,
    fixtures: false,
    mcpServers: { kit },
  }, async ({ url }) => {
    const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
    const discovered = await a2e.request("skill/discover/req", {});
    const leaky = (discovered.final.skills as SkillDefinition[]).find((s) =>
      s.name === "kit__leaky"
    );
    assert.ok(leaky);
    assert.doesNotMatch(JSON.stringify(leaky), /hunter2/);
    const mcp = await connectMcp(url);
    await assert.rejects(
      mcp.readResource({ uri: "mcp-skill://kit/leaky/SKILL.md" }),
      (e: McpError) => {
        assert.match(
          e.message,
          /holds one of its secrets \(a value of its env or headers/,
        );
        assert.doesNotMatch(e.message, /hunter2/);
        return true;
      },
    );
    await mcp.close();
    a2e.close();
  });
});

async function sha256(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  return "sha256:" +
    Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}
