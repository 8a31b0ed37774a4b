import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolResultSchema,
  EmptyResultSchema,
  ErrorCode,
  type McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { OutgoingMessage } from "../capability.ts";
import type { A2eLink } from "./a2e_link.ts";
import { createMcpServer } from "./server.ts";

const ENVELOPE = { id: "m", version: "1", ts: 0, req_id: "r" };

// A host with one tool, `echo`, answering each A2E request it is sent.
function fakeLink() {
  const calls: Record<string, unknown>[] = [];
  const answer = (message: Record<string, unknown>): OutgoingMessage => {
    switch (message.type) {
      case "tool/list/req":
        return {
          ...ENVELOPE,
          type: "tool/list/resp",
          tools: [{ name: "echo", description: "Echo", input_parameters: [] }],
        };
      case "skill/discover/req":
        return { ...ENVELOPE, type: "skill/discover/resp", skills: [] };
      case "toolkit/configure/req":
        return { ...ENVELOPE, type: "toolkit/configure/resp", status: "ok" };
      case "tool/call/req": {
        calls.push(message);
        const args = message.arguments as Record<string, unknown>;
        return args.fail
          ? {
            ...ENVELOPE,
            type: "tool/call/resp",
            data: { success: false, error: "Boom", error_code: "tool_error" },
          }
          : {
            ...ENVELOPE,
            type: "tool/call/resp",
            data: { success: true, data: args },
          };
      }
      default:
        return { ...ENVELOPE, type: "error", code: "bad", message: "?" };
    }
  };
  const link: A2eLink = {
    sessionId: "s",
    inFlight: 0,
    close() {},
    request: (message) => Promise.resolve(answer(message)),
  };
  return { link, calls };
}

async function connected() {
  const { link, calls } = fakeLink();
  const { server } = createMcpServer(link);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(clientSide);
  return { client, calls, close: () => client.close() };
}

Deno.test("tools/call results of every kind pass the SDK's CallToolResultSchema (the SDK Client checks each)", async () => {
  const { client, calls, close } = await connected();
  try {
    const ok = await client.callTool({ name: "echo", arguments: { n: 2 } });
    assert.deepEqual(ok.structuredContent, { n: 2 });
    assert.deepEqual(calls[0]?.arguments, { n: 2 });
    const none = await client.callTool({ name: "echo" });
    assert.deepEqual(calls[1]?.arguments, {});
    assert.equal(none.isError, undefined);
    const failed = await client.callTool({
      name: "echo",
      arguments: { fail: true },
    });
    assert.equal(failed.isError, true);
    for (
      const result of [
        await client.callTool({ name: "search_tools", arguments: {} }),
        await client.callTool({
          name: "search_tools",
          arguments: { query: "echo" },
        }),
        await client.callTool({
          name: "configure_toolkit",
          arguments: { toolkit: "k", config: { secret: "s" } },
        }),
      ]
    ) {
      assert.equal(CallToolResultSchema.safeParse(result).success, true);
      assert.doesNotMatch(JSON.stringify(result), /"s"/);
    }
  } finally {
    await close();
  }
});

Deno.test("a tools/call with bad params gets InvalidParams, and a method nobody serves gets MethodNotFound, as from the SDK", async () => {
  const { client, calls, close } = await connected();
  try {
    for (
      const params of [
        { name: 3 },
        { name: "echo", arguments: [1] },
        { name: "echo", arguments: "x" },
      ]
    ) {
      await assert.rejects(
        client.request(
          { method: "tools/call", params } as never,
          CallToolResultSchema,
        ),
        (error: McpError) => {
          assert.equal(error.code, ErrorCode.InvalidParams);
          assert.match(error.message, /Invalid tools\/call request/);
          return true;
        },
      );
    }
    assert.equal(calls.length, 0);
    await assert.rejects(
      client.request(
        { method: "nothing/here" } as never,
        EmptyResultSchema,
      ),
      (error: McpError) => {
        assert.equal(error.code, ErrorCode.MethodNotFound);
        assert.match(error.message, /Method not found/);
        return true;
      },
    );
    // The session goes on.
    await client.callTool({ name: "echo", arguments: {} });
    assert.equal(calls.length, 1);
  } finally {
    await close();
  }
});

Deno.test("errors an MCP client reads name MCP methods and tools, never A2E message types", async () => {
  // Every A2E request fails the way the dispatcher says it cannot serve one.
  const link: A2eLink = {
    sessionId: "s",
    inFlight: 0,
    close() {},
    request: (message) =>
      Promise.resolve({
        ...ENVELOPE,
        type: "error",
        code: "invalid_message",
        message:
          `Cannot handle "${message.type}": the skills folders failed to load: boom`,
      }),
  };
  const { server } = createMcpServer(link);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(clientSide);
  try {
    const results = [
      await client.callTool({ name: "echo", arguments: {} }),
      await client.callTool({
        name: "search_tools",
        arguments: { query: "x" },
      }),
      await client.callTool({
        name: "configure_toolkit",
        arguments: { toolkit: "k", config: {} },
      }),
    ];
    const texts = results.map((r) => JSON.stringify(r.content));
    for (const text of texts) {
      assert.match(text, /failed to load: boom/);
      assert.doesNotMatch(text, /\/req|\/resp|toolkit\/|skill\/|tool\//);
    }
    assert.match(texts[0]!, /Cannot handle \\"tools\/call\\"/);
    assert.match(texts[1]!, /Cannot handle \\"search_tools\\"/);
    assert.match(texts[2]!, /Cannot handle \\"configure_toolkit\\"/);
  } finally {
    await client.close();
  }
});
