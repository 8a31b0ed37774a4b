import assert from "node:assert/strict";
import { readCallParams, toCallToolResult, toMcpTool } from "./tool_mapping.ts";
import { toolDefinition } from "../../protocol/tool.ts";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";

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

Deno.test("toCallToolResult() gives audio, an imported resource (text or blob) and a resource link back their own content types", () => {
  const wav = btoa("RIFF....WAVE");
  const artifact = (data: Record<string, unknown>, seq: number) => ({
    kind: "artifact",
    data: { final: true, ...data },
    seq,
  });
  const result = toCallToolResult({
    success: true,
    data: "",
    events: [
      artifact({ name: "audio-1.wav", mime: "audio/wav", chunk: wav }, 0),
      artifact({
        name: "notes.txt",
        mime: "text/plain",
        chunk: btoa("héllo".replace("é", "e")),
        uri: "file:///notes.txt",
        text: true,
      }, 1),
      artifact({
        name: "pic.png",
        mime: "image/png",
        chunk: btoa("png"),
        uri: "test://pic.png",
      }, 2),
      artifact({
        name: "report",
        mime: "application/pdf",
        chunk: "",
        uri: "https://example.test/report.pdf",
        link: true,
        description: "The report",
      }, 3),
    ],
  });
  assert.deepEqual(result.content, [
    { type: "audio", data: wav, mimeType: "audio/wav" },
    {
      type: "resource",
      resource: {
        uri: "file:///notes.txt",
        mimeType: "text/plain",
        text: "hello",
      },
    },
    {
      type: "resource",
      resource: {
        uri: "test://pic.png",
        mimeType: "image/png",
        blob: btoa("png"),
      },
    },
    {
      type: "resource_link",
      uri: "https://example.test/report.pdf",
      name: "report",
      mimeType: "application/pdf",
      description: "The report",
    },
  ]);
});

// Params the SDK's schema takes and refuses, JSON-decoded as on the wire.
const SAMPLES: unknown[] = [
  { name: "echo" },
  { name: "echo", arguments: {} },
  { name: "echo", arguments: { a: [1, { b: null }] } },
  { name: "", arguments: { x: 1 }, extra: true },
  { name: "echo", _meta: { progressToken: 3 } },
  { name: "echo", _meta: { progressToken: "t", other: 1 } },
  { name: "echo", _meta: {} },
  undefined,
  null,
  [],
  "echo",
  {},
  { name: 3 },
  { name: null },
  { name: ["echo"] },
  { name: "echo", arguments: null },
  { name: "echo", arguments: [1] },
  { name: "echo", arguments: "x" },
  { name: "echo", _meta: "x" },
  { name: "echo", _meta: null },
  { name: "echo", _meta: { progressToken: {} } },
  { name: "echo", _meta: { progressToken: null } },
  { name: "echo", _meta: { progressToken: [1] } },
];

Deno.test("readCallParams() takes exactly what the SDK's CallToolRequestSchema takes", () => {
  for (const params of SAMPLES) {
    const sdk = CallToolRequestSchema.safeParse({
      method: "tools/call",
      params,
    });
    let ours: ReturnType<typeof readCallParams> | undefined;
    try {
      ours = readCallParams(params);
    } catch (error) {
      assert.match(String(error), /Invalid tools\/call request/);
    }
    assert.equal(
      ours !== undefined,
      sdk.success,
      `params ${JSON.stringify(params)}`,
    );
    if (ours && sdk.success) {
      assert.equal(ours.name, sdk.data.params.name);
      assert.deepEqual(ours.arguments, sdk.data.params.arguments ?? {});
      assert.equal(ours.progressToken, sdk.data.params._meta?.progressToken);
    }
  }
});

Deno.test("toMcpTool() without registry facts rebuilds the schema from the A2E parameters", () => {
  const tool = toMcpTool({
    ...toolDefinition({ name: "find", description: "Find" }),
    input_parameters: [
      {
        name: "q",
        type: "string",
        description: "Query",
        required: true,
        enum: null,
        properties: null,
      },
      {
        name: "opts",
        type: "object",
        description: "",
        required: false,
        enum: null,
        properties: {
          limit: {
            name: "limit",
            type: "integer",
            description: "",
            required: true,
            enum: null,
            properties: null,
          },
        },
      },
    ],
  });
  assert.equal(tool.inputSchema.type, "object");
  assert.deepEqual(tool.inputSchema.required, ["q"]);
  const props = tool.inputSchema.properties as Record<string, unknown>;
  assert.deepEqual(props.q, { type: "string", description: "Query" });
  assert.deepEqual(props.opts, {
    type: "object",
    description: "",
    properties: { limit: { type: "integer", description: "" } },
    required: ["limit"],
  });
});

Deno.test("toCallToolResult() keeps two finished artifacts of one name apart", () => {
  // An imported server's two resources whose URIs end alike, and two links.
  const artifact = (uri: string, text: string, seq: number) => ({
    kind: "artifact",
    data: {
      name: "index.html",
      mime: "text/html",
      chunk: btoa(text),
      final: true,
      uri,
      text: true,
    },
    seq,
  });
  const link = (uri: string, seq: number) => ({
    kind: "artifact",
    data: {
      name: "out",
      mime: "text/plain",
      chunk: "",
      final: true,
      uri,
      link: true,
    },
    seq,
  });
  const result = toCallToolResult({
    success: true,
    data: "",
    events: [
      artifact("test://a/index.html", "A", 0),
      artifact("test://b/index.html", "B", 1),
      link("test://x/out", 2),
      link("test://y/out", 3),
    ],
  });
  // Before: one resource "AB" under the first URI, and one link.
  assert.deepEqual(result.content, [
    {
      type: "resource",
      resource: {
        uri: "test://a/index.html",
        mimeType: "text/html",
        text: "A",
      },
    },
    {
      type: "resource",
      resource: {
        uri: "test://b/index.html",
        mimeType: "text/html",
        text: "B",
      },
    },
    {
      type: "resource_link",
      uri: "test://x/out",
      name: "out",
      mimeType: "text/plain",
    },
    {
      type: "resource_link",
      uri: "test://y/out",
      name: "out",
      mimeType: "text/plain",
    },
  ]);
});
