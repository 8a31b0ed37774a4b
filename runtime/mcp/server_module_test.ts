import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { MCP_PATH_PREFIX, serverModule } from "./server_module.ts";
import { ServerSlot } from "./server_slot.ts";

Deno.test("serverModule() lists a running server's tools under safe names, and its hash follows the listing", () => {
  const slot = new ServerSlot("my files", { command: "x" });
  const down = serverModule(slot);
  slot.started({} as Client, 0);
  slot.tools = [
    {
      name: "read/file",
      description: "Reads",
      inputSchema: { type: "object" },
      annotations: { idempotentHint: true },
    },
    {
      name: "x".repeat(80),
      inputSchema: { type: "object" },
      outputSchema: { type: "object" },
    },
  ];
  const up = serverModule(slot);
  assert.equal(up.origin, "mcp");
  assert.equal(up.module.path, `${MCP_PATH_PREFIX}my files`);
  assert.notEqual(up.module.hash, down.module.hash);
  const [kit, read, long] = up.module.definitions;
  assert.deepEqual(kit!.fields.tags, ["mcp"]);
  assert.equal(read!.name, "my_files__read_file");
  assert.equal(read!.export, "read/file");
  assert.equal(read!.fields.idempotent, true);
  assert.equal("output" in read!.fields, false);
  assert.equal(long!.name.length, 64);
  assert.deepEqual(long!.fields.output, { type: "object" });
  assert.equal(long!.fields.description, "x".repeat(80));
  assert.equal(serverModule(slot).module.hash, up.module.hash);
});

Deno.test("serverModule() says why a server is unavailable", () => {
  const slot = new ServerSlot("s", { url: "http://x" });
  slot.failed("connection refused", 0);
  const kit = serverModule(slot).module.definitions[0]!;
  assert.equal(
    kit.fields.description,
    'Tools of the MCP server "s" (unavailable: connection refused)',
  );
  assert.deepEqual(kit.fields.tags, ["mcp", "unavailable"]);
});
