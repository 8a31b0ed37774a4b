import assert from "node:assert/strict";
import { toCallToolResult, toMcpTool } from "./tool_mapping.ts";
import { toolDefinition } from "../../protocol/tool.ts";

Deno.test("toCallToolResult() turns artifacts into image and embedded resource content", () => {
  const png = btoa("\x89PNG-bytes");
  const result = toCallToolResult({
    success: true,
    data: [1, 2],
    summary: "two numbers",
    events: [
      {
        kind: "artifact",
        data: { name: "a.png", mime: "image/png", chunk: png, final: true },
        seq: 0,
      },
      {
        kind: "artifact",
        data: {
          name: "r.csv",
          mime: "text/csv",
          chunk: btoa("a,"),
          final: false,
        },
        seq: 1,
      },
      {
        kind: "artifact",
        data: {
          name: "r.csv",
          mime: "text/csv",
          chunk: btoa("b"),
          final: true,
        },
        seq: 2,
      },
    ],
  });
  assert.equal(result.structuredContent, undefined);
  assert.deepEqual(result.content[0], { type: "text", text: "two numbers" });
  assert.deepEqual(result.content[1], {
    type: "image",
    data: png,
    mimeType: "image/png",
  });
  const resource = result.content[2];
  assert.equal(resource?.type, "resource");
  if (resource?.type === "resource") {
    assert.equal(atob((resource.resource as { blob: string }).blob), "a,b");
    assert.equal(resource.resource.mimeType, "text/csv");
  }
});

Deno.test("toMcpTool() marks network and mcp tools open-world and writers destructive", () => {
  const def = toolDefinition({ name: "fetch_page", description: "Fetch" });
  const net = toMcpTool(def, {
    inputSchema: { type: "object" },
    outputSchema: {},
    permissions: [{ net: ["example.com"] }, { write: ["/tmp/x"] }],
    origin: "file",
  });
  assert.equal(net.annotations?.openWorldHint, true);
  assert.equal(net.annotations?.destructiveHint, true);
  assert.equal(net.annotations?.readOnlyHint, false);
  const imported = toMcpTool(def, {
    inputSchema: { type: "object" },
    outputSchema: {},
    permissions: [{}],
    origin: "mcp",
  });
  assert.equal(imported.annotations?.openWorldHint, true);
  assert.equal(imported.annotations?.readOnlyHint, false);
});
