/**
 * What MCP clients see of the registry, end to end: every change (a tool,
 * a code skill, a `SKILL.md` skill) reaches them as
 * `notifications/tools/list_changed`, and a skill named like a tool is
 * served as `<name>_skill`, which runs the skill.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { text, withHost, within } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

// Resolves on the client's next tools/list_changed.
function nextListChanged(client: Client): Promise<void> {
  const changed = Promise.withResolvers<void>();
  client.setNotificationHandler(
    ToolListChangedNotificationSchema,
    () => changed.resolve(),
  );
  return changed.promise;
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t: Tool) => t.name);
}

Deno.test("hot reload of a code skill and of a SKILL.md skill sends tools/list_changed", async () => {
  await withHost({}, async ({ url, skills }) => {
    const client = await connectMcp(url);
    assert.ok(!(await names(client)).includes("shout_twice"));

    let changed = nextListChanged(client);
    await Deno.writeTextFile(
      join(skills, "shout_twice.ts"),
      `export default { kind: "skill", name: "shout_twice",
        description: "Shouts its input twice",
        input: { type: "object", properties: { text: { type: "string" } } },
        run: (a) => ({ said: String(a.text).toUpperCase().repeat(2) }) };`,
    );
    await within(changed, 10_000, "no list_changed for a new code skill");
    assert.ok((await names(client)).includes("shout_twice"));

    changed = nextListChanged(client);
    await Deno.mkdir(join(skills, "farewell"));
    await Deno.writeTextFile(
      join(skills, "farewell", "SKILL.md"),
      "---\nname: farewell\ndescription: Says goodbye.\n---\nSay goodbye.\n",
    );
    await within(changed, 10_000, "no list_changed for a new SKILL.md skill");
    assert.ok((await names(client)).includes("farewell"));
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p: { name: string }) => p.name === "farewell"));

    // Its instructions edited: the prompt changes, so clients hear of it.
    changed = nextListChanged(client);
    await Deno.writeTextFile(
      join(skills, "farewell", "SKILL.md"),
      "---\nname: farewell\ndescription: Says goodbye.\n---\nSay farewell.\n",
    );
    await within(changed, 10_000, "no list_changed for an edited SKILL.md");
    const prompt = await client.getPrompt({ name: "farewell" });
    const content = prompt.messages[0]!.content;
    assert.match(content.type === "text" ? content.text : "", /farewell/);

    changed = nextListChanged(client);
    await Deno.remove(join(skills, "shout_twice.ts"));
    await within(changed, 10_000, "no list_changed for a removed skill");
    assert.ok(!(await names(client)).includes("shout_twice"));
    await client.close();
  });
});

Deno.test("a skill named like a tool is served as <name>_skill, and calling that runs the skill", async () => {
  await withHost({
    files: {
      "echo_skill.ts": `export default { kind: "skill", name: "echo",
        description: "Echoes, but as a skill",
        input: { type: "object", properties: { text: { type: "string" } } },
        run: (a) => ({ from: "skill", text: a.text }) };`,
    },
  }, async ({ url }) => {
    const client = await connectMcp(url);
    const { tools } = await client.listTools();
    const listed: string[] = tools.map((t: Tool) => t.name);
    assert.equal(listed.filter((n) => n === "echo").length, 1);
    const skill = tools.find((t: Tool) => t.name === "echo_skill");
    assert.ok(skill, listed.join(", "));
    assert.match(skill.description ?? "", /^Skill: Echoes, but as a skill/);

    const asSkill = await client.callTool({
      name: "echo_skill",
      arguments: { text: "hi" },
    }) as CallToolResult;
    assert.equal(asSkill.isError, undefined, text(asSkill));
    assert.match(JSON.stringify(asSkill.structuredContent), /"from":"skill"/);

    const asTool = await client.callTool({
      name: "echo",
      arguments: { text: "hi" },
    }) as CallToolResult;
    assert.deepEqual(asTool.structuredContent, { text: "hi" });
    await client.close();
  });
});
