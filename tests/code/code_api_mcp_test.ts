/**
 * `code_api` over MCP with the official SDK client: the tool's text is
 * the declarations, the same declarations are the resource
 * `skillbox://code/api.d.ts`, listed only to a session that may call the
 * tool, and a subscribed client is told when they change (a tool dropped
 * into a watched folder, a toolkit configured).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type Resource,
  ResourceListChangedNotificationSchema,
  type ResourceUpdatedNotification,
  ResourceUpdatedNotificationSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type Declared,
  startCodeApiHost,
  TOKEN_A,
  TOKEN_C,
  tool,
} from "./_code_api_host.ts";
import { within } from "../mcp/_host.ts";
import { CODE_API_URI } from "../../runtime/mcp/server.ts";

async function mcpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "code-api-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

async function readApi(client: Client): Promise<string> {
  const read = await client.readResource({ uri: CODE_API_URI });
  const content = read.contents[0];
  assert.equal(content?.mimeType, "text/typescript");
  assert.ok(content && "text" in content);
  return content.text as string;
}

Deno.test("code_api over MCP: the tool, the resource, and their updates", async () => {
  await using fixture = await startCodeApiHost();
  const client = await mcpClient(fixture.url, TOKEN_A);
  try {
    const listed = await client.listTools();
    assert.ok(listed.tools.some((t: Tool) => t.name === "code_api"));

    const called = await client.callTool({ name: "code_api", arguments: {} });
    assert.notEqual(called.isError, true, text(called as CallToolResult));
    const declarations = text(called as CallToolResult);
    assert.match(declarations, /^declare const tools: \{$/m);
    const data = called.structuredContent as unknown as Declared;
    assert.equal(data.declarations, declarations);
    assert.ok(data.tools.includes("eval_typescript"));
    assert.ok(!data.tools.includes("secret_tool"));

    const resources = await client.listResources();
    const api = resources.resources.find((r: Resource) =>
      r.uri === CODE_API_URI
    );
    assert.equal(api?.mimeType, "text/typescript");
    assert.equal(await readApi(client), declarations);

    const updated: string[] = [];
    let listChanged = 0;
    let wake = () => {};
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n: ResourceUpdatedNotification) => {
        updated.push(n.params.uri);
        wake();
      },
    );
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => {
        listChanged++;
      },
    );
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    await client.subscribeResource({ uri: CODE_API_URI });

    // A tool dropped into the watched folder.
    let notified = next();
    await Deno.writeTextFile(
      join(fixture.skills, "fresh.ts"),
      tool("fresh_tool", "Appeared after the start"),
    );
    await within(notified, 20_000, "resources/updated after a reload");
    assert.deepEqual(updated, [CODE_API_URI]);
    assert.ok(listChanged >= 1);
    assert.match(await readApi(client), /fresh_tool: \(args: \{/);

    // The session's own toolkit configuration.
    assert.ok(!(await readApi(client)).includes("read_file: (args"));
    notified = next();
    const configured = await client.callTool({
      name: "configure_toolkit",
      arguments: { toolkit: "filesystem", config: { root: fixture.data } },
    });
    assert.notEqual(configured.isError, true);
    await within(notified, 5_000, "resources/updated after configuring");
    assert.match(await readApi(client), /read_file: \(args: \{/);

    await client.unsubscribeResource({ uri: CODE_API_URI });
    await assert.rejects(
      () => client.subscribeResource({ uri: "skill://nope/SKILL.md" }),
      /offers no subscription/,
    );
  } finally {
    await client.close();
  }
});

Deno.test("code_api's resource is not served to a session that may not call it", async () => {
  await using fixture = await startCodeApiHost();
  const client = await mcpClient(fixture.url, TOKEN_C);
  try {
    const resources = await client.listResources();
    assert.ok(
      !resources.resources.some((r: Resource) => r.uri === CODE_API_URI),
    );
    await assert.rejects(
      () => client.readResource({ uri: CODE_API_URI }),
      /denied by the host policy/,
    );
    const called = await client.callTool({ name: "code_api", arguments: {} });
    assert.equal(called.isError, true);
    assert.match(text(called as CallToolResult), /tool_denied/);
  } finally {
    await client.close();
  }
});
