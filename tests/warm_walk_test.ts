/**
 * What a plain warm tool call must not enter: the layers that serve other
 * features. Measured with `bench/warm_walk.ts` (V8 coverage counts of two
 * real host runs diffed), so wiring that routes every call through another
 * feature's module shows here even when no code reads as doing so.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { hostWalk } from "../bench/warm_walk.ts";

// Folders a drop-in tool's warm call has no business in: code mode, the
// console, skills, LLM providers, imported MCP servers, discovery and
// confinement (a warm process is already confined and its module known).
const ELSEWHERE = [
  "runtime/code/",
  "runtime/console/",
  "runtime/skills/",
  "runtime/llm/",
  "runtime/mcp/",
  "runtime/discovery/",
  "runtime/confine/",
];

// A stdio MCP server the host imports (its tools are never called here).
const MCP_SERVER = fileURLToPath(
  new URL("./mcp/_test_server.ts", import.meta.url),
);

async function strays(config: Record<string, unknown>): Promise<string[]> {
  const walk = await hostWalk(200, config);
  const files = walk.map((file) => file.path);
  // The walk was measured: the call's own spine is on it.
  for (
    const spine of [
      "runtime/transports/websocket.ts",
      "runtime/dispatcher.ts",
      "runtime/tools/call.ts",
      "runtime/sandbox/sandbox_process.ts",
    ]
  ) {
    assert.ok(files.includes(spine), `${spine} is not on the walk: ${files}`);
  }
  return files.filter((path) =>
    ELSEWHERE.some((folder) => path.startsWith(folder))
  );
}

Deno.test("a warm tool call enters no other feature's module", async () => {
  assert.deepEqual(await strays({}), []);
});

Deno.test("with an imported MCP server, a drop-in's call still does not enter MCP", async () => {
  const config = {
    mcp_servers: {
      t: { command: Deno.execPath(), args: ["run", "-A", MCP_SERVER] },
    },
  };
  assert.deepEqual(await strays(config), []);
});
