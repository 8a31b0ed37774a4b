import assert from "node:assert/strict";
import { isOutput } from "../../protocol/output.ts";
import { toolOutcome } from "../../protocol/tool.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import type { ToolCallRequest } from "../tools/call.ts";
import { registryToolHost } from "./tool_host.ts";

const GREP: ToolEntry = {
  kind: "tool",
  name: "grep",
  description: "Search files",
  version: "1.0.0",
  tags: [],
  inputSchema: { type: "object", properties: { q: { type: "string" } } },
  outputSchema: {},
  streaming: true,
  idempotent: true,
  deferLoading: false,
  toolkit: "filesystem",
  prompt: "Use a regex.",
  permissions: {},
  isolation: "warm",
  path: "/s/grep.ts",
  export: "default",
  hash: "h",
  origin: "builtin",
};

const SNAPSHOT = {
  generation: 1,
  tools: new Map([["grep", GREP]]),
  toolkits: new Map(),
  skills: new Map(),
  blocked: new Map(),
  agentSkills: [],
  errors: [],
} as unknown as RegistrySnapshot;

const session = {
  id: "s",
  token: "",
  state: new Map(),
  send() {},
  signal: new AbortController().signal,
};

Deno.test("registryToolHost() hands out the registry's tool as the domain tool, guidance included", () => {
  const host = registryToolHost({
    registry: { snapshot: SNAPSHOT },
    caller: { call: () => Promise.reject(new Error("unused")) },
  });
  const tool = host.tool("grep");
  assert.equal(tool?.inputSchema, GREP.inputSchema);
  assert.equal(tool?.prompt, "Use a regex.");
  assert.equal(host.tool("nope"), undefined);
});

Deno.test("registryToolHost() turns a failed outcome into a failure with its code, and a break_loop into an output", async () => {
  const seen: ToolCallRequest[] = [];
  const outcomes = [
    {
      result: toolOutcome({
        success: false,
        toolName: "grep",
        durationMs: 1,
        errorCode: "timeout",
        error: "Timed out",
      }),
      breakLoop: false,
    },
    {
      result: toolOutcome({
        success: true,
        toolName: "grep",
        durationMs: 1,
        data: { hits: 1 },
      }),
      breakLoop: true,
    },
  ];
  const host = registryToolHost({
    registry: { snapshot: SNAPSHOT },
    caller: {
      call: (request) => {
        seen.push(request);
        return Promise.resolve({ ...outcomes.shift()!, entry: GREP });
      },
    },
  });
  const failed = await host.call("grep", { q: "x" }, {
    session,
    signal: session.signal,
    timeoutMs: 1500,
  });
  assert.deepEqual(failed, {
    ok: false,
    code: "timeout",
    message: "Timed out",
  });
  assert.equal(seen[0]?.timeoutSeconds, 1.5);
  const stopped = await host.call("grep", {}, {
    session,
    signal: session.signal,
    timeoutMs: 1000,
  });
  assert.ok(stopped.ok && isOutput(stopped.value));
  assert.equal(
    stopped.ok && isOutput(stopped.value) && stopped.value.break_loop,
    true,
  );
});
