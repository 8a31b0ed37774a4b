import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolResultSchema,
  EmptyResultSchema,
  ErrorCode,
  type McpError,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import type { OutgoingMessage } from "../capability.ts";
import type { A2eLink } from "./a2e_link.ts";
import {
  CodeApiResource,
  createMcpServer,
  EventRelay,
  SessionCatalog,
} from "./server.ts";

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
    inFlight: 0,
    close() {},
    request: (message) => Promise.resolve(answer(message)),
  };
  return { link, calls };
}

async function connected() {
  const { link, calls } = fakeLink();
  const server = createMcpServer(link);
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
  const server = createMcpServer(link);
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

// A host whose skills can be changed between loads, counting its requests.
function catalogLink(skills: { name: string; status: string }[]) {
  const seen: string[] = [];
  const link: A2eLink = {
    inFlight: 0,
    close() {},
    request(message): Promise<OutgoingMessage> {
      seen.push(message.type);
      return Promise.resolve(
        message.type === "tool/list/req"
          ? { ...ENVELOPE, type: "tool/list/resp", tools: [{ name: "echo" }] }
          : { ...ENVELOPE, type: "skill/discover/resp", skills: [...skills] },
      );
    },
  };
  return { link, seen };
}

Deno.test("SessionCatalog loads once, reloads after reset(), and lists only published skills", async () => {
  const { link, seen } = catalogLink([
    { name: "echo", status: "Published" },
    { name: "search_tools", status: "Published" },
    { name: "plan", status: "Published" },
    { name: "draft", status: "Draft" },
  ]);
  const catalog = new SessionCatalog(link);
  const first = await catalog.get();
  assert.equal(await catalog.get(), first);
  assert.deepEqual(seen, ["tool/list/req", "skill/discover/req"]);
  assert.deepEqual([...first.tools.keys()], ["echo"]);
  assert.deepEqual([...first.skills.keys()], [
    "echo_skill",
    "search_tools_skill",
    "plan",
  ]);
  catalog.reset();
  assert.notEqual(await catalog.get(), first);
  assert.equal(seen.length, 4);
});

Deno.test("SessionCatalog.lookAgain() reloads once per unlisted name until the next reset()", async () => {
  const skills = [{ name: "plan", status: "Published" }];
  const { link, seen } = catalogLink(skills);
  const catalog = new SessionCatalog(link);
  await catalog.get();
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 4);
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 4, "an unlisted name is not looked up again");
  skills.push({ name: "fresh", status: "Published" });
  assert.equal((await catalog.lookAgain("fresh"))?.name, "fresh");
  assert.equal(seen.length, 6);
  catalog.reset();
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 8, "reset() forgets the unlisted names");
});

function relay(progressToken?: number) {
  const sent: ServerNotification[] = [];
  const r = new EventRelay({
    progressToken,
    logger: "t",
    coalesceMs: 10_000,
    send: (n) => {
      sent.push(n);
      return Promise.resolve();
    },
  });
  return { r, sent };
}

Deno.test("EventRelay joins llm tokens into one progress message and keeps progress increasing", async () => {
  const { r, sent } = relay(1);
  r.onEvent({ kind: "progress", data: { pct: 40, message: "a" }, seq: 0 });
  r.onEvent({ kind: "llm.token", data: { text: "Hel" }, seq: 1 });
  r.onEvent({ kind: "llm.token", data: { text: "lo" }, seq: 2 });
  r.onEvent({ kind: "progress", data: { pct: 10, message: "b" }, seq: 3 });
  await r.flush();
  const progress = sent.map((n) =>
    n.params as { progress: number; message?: string }
  );
  assert.deepEqual(progress.map((p) => p.message), ["a", "Hello", "b"]);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
  }
});

Deno.test("EventRelay maps log levels and sends no progress without a token", async () => {
  const { r, sent } = relay();
  r.onEvent({ kind: "progress", data: { pct: 40 }, seq: 0 });
  r.onEvent({
    kind: "log",
    data: { level: "warn", message: "careful" },
    seq: 1,
  });
  r.onEvent({ kind: "status", data: { message: "busy" }, seq: 2 });
  r.onEvent({ kind: "tool.started", data: { tool: "x" }, seq: 3 });
  // A name of Object's prototype is no level: it was sent as a function,
  // which JSON drops, leaving a notification without its level.
  r.onEvent({
    kind: "log",
    data: { level: "constructor", message: "odd" },
    seq: 4,
  });
  await r.flush();
  assert.deepEqual(sent.map((n) => n.method), [
    "notifications/message",
    "notifications/message",
    "notifications/message",
    "notifications/message",
  ]);
  assert.deepEqual(sent.map((n) => (n.params as { level: string }).level), [
    "warning",
    "info",
    "debug",
    "info",
  ]);
});

Deno.test("EventRelay sends joined llm tokens on its own once the coalescing delay passes", async () => {
  const { promise: arrived, resolve } = Promise.withResolvers<
    ServerNotification
  >();
  const r = new EventRelay({
    progressToken: "p",
    logger: "t",
    coalesceMs: 1,
    send: (n) => {
      resolve(n);
      return Promise.resolve();
    },
  });
  r.onEvent({ kind: "llm.token", data: { text: "a" }, seq: 0 });
  r.onEvent({ kind: "llm.token", data: { text: "b" }, seq: 1 });
  // Bounded: a relay that never sends fails here rather than hanging.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sent = await Promise.race([
    arrived,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("No notification")), 2_000);
    }),
  ]).finally(() => clearTimeout(timer));
  assert.deepEqual(sent, {
    method: "notifications/progress",
    params: { progressToken: "p", progress: 0.001, message: "ab" },
  });
});

Deno.test("a request whose params the SDK's schema refuses is answered InvalidParams in one line, not InternalError with zod's issues", async () => {
  const { link } = fakeLink();
  const server = createMcpServer(link);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const answers = new Map<unknown, Record<string, unknown>>();
  let arrived = () => {};
  clientSide.onmessage = (message: unknown) => {
    const m = message as Record<string, unknown>;
    answers.set(m.id, m);
    arrived();
  };
  await clientSide.start();
  const bad = [
    { method: "prompts/get", params: { name: "x", arguments: { a: 1 } } },
    { method: "tools/list", params: { cursor: 5 } },
    { method: "logging/setLevel", params: { level: "loud" } },
    {
      method: "initialize",
      params: { protocolVersion: 1, capabilities: "x", clientInfo: {} },
    },
  ];
  for (const [id, request] of bad.entries()) {
    await clientSide.send({ jsonrpc: "2.0", id, ...request });
  }
  while (answers.size < bad.length) {
    await new Promise<void>((resolve) => arrived = resolve);
  }
  for (const [id, request] of bad.entries()) {
    const error = answers.get(id)!.error as { code: number; message: string };
    assert.ok(error, JSON.stringify(answers.get(id)));
    assert.equal(error.code, ErrorCode.InvalidParams, JSON.stringify(error));
    assert.ok(!error.message.includes("\n"), error.message);
    assert.match(
      error.message,
      new RegExp(`^Invalid ${request.method} request: params`),
    );
  }
  await clientSide.close();
});

Deno.test("a subscription to a uri that is an object is refused naming it, not with a TypeError", () => {
  const resource = new CodeApiResource({
    request: () => Promise.reject(new Error("unused")),
    listed: () => Promise.resolve(true),
  });
  // JSON.parse makes `toString` an own key: String() on it throws.
  const uri = JSON.parse('{"toString":{"polluted":"yes"}}');
  assert.throws(
    () => resource.handle("resources/subscribe", { uri }, () => undefined),
    (error: Error & { code?: number }) => {
      assert.equal(error.code, -32602, error.message);
      assert.match(
        error.message,
        /^Resource \{"toString":\{"polluted":"yes"\}\} offers no subscription/,
      );
      return true;
    },
  );
});

Deno.test("EventRelay relays a message that is no string as its JSON, never calling its toString", async () => {
  // A sandbox tool's ctx.progress() passes its message on as it is; an
  // own `toString` that is no function made String() throw, and the
  // event was lost.
  const { r, sent } = relay(1);
  const hostile = { toString: 1 };
  r.onEvent({ kind: "progress", data: { pct: 5, message: hostile }, seq: 0 });
  r.onEvent({ kind: "status", data: { message: hostile }, seq: 1 });
  r.onEvent({ kind: "log", data: { level: hostile, message: 7 }, seq: 2 });
  await r.flush();
  assert.deepEqual(sent.map((n) => n.params), [
    { progressToken: 1, progress: 5, total: 100, message: '{"toString":1}' },
    { level: "info", logger: "t", data: '{"toString":1}' },
    { level: "info", logger: "t", data: "7" },
  ]);
});

Deno.test("SessionCatalog.lookAgain() remembers many unlisted names, not just the last, and forgets the oldest past 256", async () => {
  const { link, seen } = catalogLink([]);
  const catalog = new SessionCatalog(link);
  await catalog.get();
  // A client alternating two deferred tools: each name reloads once.
  for (let i = 0; i < 10; i++) {
    assert.equal(
      await catalog.lookAgain(i % 2 ? "tool_a" : "tool_b"),
      undefined,
    );
  }
  assert.equal(seen.length, 6, "two names, two reloads");
  // Names the client makes up hold at most 256 entries.
  for (let i = 0; i < 255; i++) await catalog.lookAgain(`made_up_${i}`);
  assert.equal(seen.length, 6 + 2 * 255);
  await catalog.lookAgain("tool_a");
  assert.equal(seen.length, 6 + 2 * 255, "tool_a is still remembered");
  await catalog.lookAgain("tool_b");
  assert.equal(seen.length, 6 + 2 * 256, "tool_b was the oldest, forgotten");
});

Deno.test("the host's tools.changed push tells the client that tools, prompts and resources changed, and other pushes tell it nothing", async () => {
  const { link } = fakeLink();
  const server = createMcpServer(link);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  const methods: string[] = [];
  const three = Promise.withResolvers<void>();
  client.fallbackNotificationHandler = (notification: { method: string }) => {
    methods.push(notification.method);
    if (methods.length === 3) three.resolve();
    return Promise.resolve();
  };
  await client.connect(clientSide);
  try {
    const push = { id: "p", version: "1", ts: 0, type: "invoke/event" };
    link.onPush?.({ ...push, kind: "status" });
    link.onPush?.({ ...push, kind: "tools.changed" });
    await three.promise;
    assert.deepEqual(methods, [
      "notifications/tools/list_changed",
      "notifications/prompts/list_changed",
      "notifications/resources/list_changed",
    ]);
  } finally {
    await client.close();
  }
});
