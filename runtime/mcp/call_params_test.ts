import assert from "node:assert/strict";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { readCallParams } from "./call_params.ts";

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
