/**
 * An imported server's non-text content, end to end through a real host
 * (the server confined as configured by default): image, audio, a text and
 * a blob resource and a resource link reach an MCP SDK client as content of
 * the same type, and an A2E client as `artifact` events; an image over the
 * host's result limit is left out, said in the text, the result marked
 * truncated.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { connectClient } from "../support/tools_harness.ts";
import { denoServer, withHost } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";
import { PNG, WAV } from "./_late_server.ts";

const SERVER = fileURLToPath(new URL("./_late_server.ts", import.meta.url));
const LIMIT = 1 << 20;

// The server alone, in a host whose results hold LIMIT bytes (its default).
const IMPORTING = { fixtures: false, mcpServers: { kit: denoServer(SERVER) } };

Deno.test("an imported tool's image, audio and resources reach MCP clients typed and A2E clients as artifact events", async () => {
  await withHost(IMPORTING, async ({ url }) => {
    const mcp = await connectMcp(url);
    const result = await mcp.callTool({ name: "kit__content", arguments: {} });
    assert.deepEqual((result as CallToolResult).content, [
      { type: "text", text: "all kinds" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "audio", data: WAV, mimeType: "audio/wav" },
      {
        type: "resource",
        resource: {
          uri: "test://notes.txt",
          mimeType: "text/plain",
          text: "some notes",
        },
      },
      {
        type: "resource",
        resource: { uri: "test://pixel.png", mimeType: "image/png", blob: PNG },
      },
      {
        type: "resource_link",
        uri: "test://big.bin",
        name: "big.bin",
        mimeType: "application/octet-stream",
        description: "Too big to send",
      },
    ]);
    await mcp.close();

    const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
    const called = await a2e.request("tool/call/req", {
      tool_name: "kit__content",
      arguments: {},
      streaming: true,
    });
    const data = called.final.data as { success: boolean; data: unknown };
    assert.equal(data.success, true);
    assert.equal(data.data, "all kinds");
    const artifacts = called.events
      .filter((e) => e.kind === "artifact")
      .map((e) => e.data as Record<string, unknown>);
    assert.deepEqual(artifacts, [
      { name: "image-2.png", mime: "image/png", chunk: PNG, final: true },
      { name: "audio-3.wav", mime: "audio/wav", chunk: WAV, final: true },
      {
        name: "notes.txt",
        mime: "text/plain",
        chunk: btoa("some notes"),
        final: true,
        uri: "test://notes.txt",
        text: true,
      },
      {
        name: "pixel.png",
        mime: "image/png",
        chunk: PNG,
        final: true,
        uri: "test://pixel.png",
      },
      {
        name: "big.bin",
        mime: "application/octet-stream",
        chunk: "",
        final: true,
        uri: "test://big.bin",
        link: true,
        description: "Too big to send",
      },
    ]);
    await a2e.close();
  });
});

Deno.test("hostile: an imported image over the result limit is left out, said in the text, and the result marked truncated", async () => {
  await withHost(IMPORTING, async ({ url }) => {
    const bytes = 3 * LIMIT;
    const mcp = await connectMcp(url);
    const result = await mcp.callTool({
      name: "kit__huge_image",
      arguments: { bytes },
    }) as CallToolResult;
    const sizes = result.content.map((c: CallToolResult["content"][number]) =>
      c.type === "image" ? c.data.length : c.type === "text" ? -1 : -2
    );
    assert.deepEqual(sizes, [-1, PNG.length], JSON.stringify(sizes));
    const first = result.content[0];
    assert.match(
      first?.type === "text" ? first.text : "",
      /huge\n\[image "image-2\.png" \(image\/png, \d+ bytes of base64\) left out: over the 1048576-byte result limit\]/,
    );
    await mcp.close();

    const a2e = await connectClient(url.replace("http", "ws") + "/a2e");
    const called = await a2e.request("tool/call/req", {
      tool_name: "kit__huge_image",
      arguments: { bytes },
      streaming: true,
    });
    const data = called.final.data as { success: boolean; truncated: boolean };
    assert.equal(data.success, true);
    assert.equal(data.truncated, true);
    const kept = called.events.filter((e) => e.kind === "artifact");
    assert.equal(kept.length, 1);
    assert.ok(JSON.stringify(called.final).length < LIMIT);
    await a2e.close();
  });
});
