import assert from "node:assert/strict";
import {
  admitTool,
  argumentsRefusal,
  configRefusal,
  grantDenied,
  grantRefusal,
} from "./call_checks.ts";
import { buildSnapshot } from "../registry/normalize.ts";
import { parseHostPolicy } from "./policy.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import type { ToolEntry, ToolkitEntry } from "../registry/types.ts";

const snapshot = buildSnapshot([{
  origin: "file",
  root: "/s",
  module: {
    path: "/s/add.ts",
    hash: "h",
    error: null,
    definitions: [{
      export: "default",
      kind: "tool",
      name: "add",
      permissions: {},
      runnable: true,
      fields: {
        description: "Add",
        input: {
          type: "object",
          properties: { a: { type: "number" } },
          required: ["a"],
        },
      },
    }],
  },
}]);

Deno.test("admitTool() returns the served entry the policy allows", () => {
  const { tools } = parseHostPolicy({});
  assert.equal(
    admitTool(snapshot, tools, "add", ""),
    snapshot.tools.get("add"),
  );
});

Deno.test("admitTool() throws unknown_tool, saying why a blocked name is blocked", () => {
  const { tools } = parseHostPolicy({});
  const blocked = {
    tools: snapshot.tools,
    toolkits: snapshot.toolkits,
    blocked: new Map([["dup", "two files define it"]]),
  };
  assert.throws(() => admitTool(blocked, tools, "dup", ""), {
    code: "unknown_tool",
    message: 'Unknown tool "dup": two files define it',
  });
  assert.throws(() => admitTool(blocked, tools, "nope", ""), {
    code: "unknown_tool",
    message: 'Unknown tool "nope"',
  });
});

Deno.test("admitTool() throws tool_denied when the policy refuses the tool", () => {
  const { tools } = parseHostPolicy({ tools: { deny: ["add"] } });
  assert.throws(() => admitTool(snapshot, tools, "add", ""), {
    code: "tool_denied",
  });
});

Deno.test("argumentsRefusal() is null for fitting arguments, a schema_violation otherwise", () => {
  const entry = snapshot.tools.get("add")!;
  assert.equal(argumentsRefusal(entry, { a: 1 }, performance.now()), null);
  const bad = argumentsRefusal(entry, { a: "x" }, performance.now());
  assert.equal(bad?.result.errorCode, "schema_violation");
  assert.match(bad?.result.error ?? "", /^Invalid arguments for tool "add": /);
});

Deno.test("argumentsRefusal() answers tool_error when the tool's schema does not compile", () => {
  const entry = {
    name: "odd",
    inputSchema: { type: "object", properties: { a: { $ref: "#/nowhere" } } },
  } as unknown as ToolEntry;
  const out = argumentsRefusal(entry, { a: 1 }, performance.now());
  assert.equal(out?.result.errorCode, "tool_error");
  assert.match(out?.result.error ?? "", /its input schema is invalid/);
});

Deno.test("configRefusal() tells a missing configuration from an invalid one, without its secrets", () => {
  const entry = { name: "peek" } as ToolEntry;
  const kit = { name: "kit" } as ToolkitEntry;
  const missing = configRefusal(entry, kit, {
    configured: false,
    config: {},
    problem: "root is required",
    secrets: [],
  }, performance.now());
  assert.match(missing.result.error ?? "", /is not configured/);
  const invalid = configRefusal(entry, kit, {
    configured: true,
    config: {},
    problem: "key s3cret is too short",
    secrets: ["s3cret"],
  }, performance.now());
  assert.match(
    invalid.result.error ?? "",
    /configuration of toolkit "kit" is invalid/,
  );
  assert.equal(invalid.result.error?.includes("s3cret"), false);
});

Deno.test("grantRefusal() keeps a SkillboxError's code and grantDenied() names the permission", () => {
  const entry = { name: "peek" } as ToolEntry;
  const coded = grantRefusal(
    entry,
    new SkillboxError("timeout", "late"),
    [],
    performance.now(),
  );
  assert.equal(coded.result.errorCode, "timeout");
  const denied = grantDenied("peek", {
    ok: false,
    permission: "read",
    value: "/etc/s3cret",
    reason: 'Permission "read" for "/etc/s3cret" exceeds the host policy',
  }, ["s3cret"]);
  assert.equal(denied.code, "tool_denied");
  assert.equal(denied.message.includes("s3cret"), false);
  assert.deepEqual(denied.detail, { tool_name: "peek", permission: "read" });
});

Deno.test("admitTool() says when a tool's MCP server is not up", () => {
  const { tools } = parseHostPolicy({});
  const kit = (description: string, tags: string[]) => ({
    tools: snapshot.tools,
    blocked: new Map<string, string>(),
    toolkits: new Map([["gh", { name: "gh", description, tags } as never]]),
  });
  const down = kit('Tools of the MCP server "gh" (unavailable: starting)', [
    "mcp",
    "unavailable",
  ]);
  assert.throws(() => admitTool(down, tools, "gh__search", ""), {
    code: "unknown_tool",
    message:
      'Unknown tool "gh__search": its MCP server "gh" is unavailable (starting); its tools are listed once it is up',
  });
  // Up, or not an MCP server's: only the name.
  const up = kit('Tools of the MCP server "gh"', ["mcp"]);
  assert.throws(() => admitTool(up, tools, "gh__search", ""), {
    message: 'Unknown tool "gh__search"',
  });
});
