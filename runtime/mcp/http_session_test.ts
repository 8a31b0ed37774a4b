import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  JSONRPCRequestSchema,
  LATEST_PROTOCOL_VERSION,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CallAnswer,
  LazyRequestInfo,
  McpHttpSession,
  plainJsonRequest,
  SSE_STRATEGY,
  SseBacklog,
  watchAnswer,
} from "./http_session.ts";
import { Deadlines } from "../deadline.ts";
import { initializeRequest } from "../../tests/support/mcp_fixtures.ts";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  backlogAction,
  EVENT_BACKLOG_BYTES,
  MAX_BACKLOG_BYTES,
} from "../transports/client_bounds.ts";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Tool = (
  args: Record<string, unknown>,
  extra: Extra,
) => Promise<CallToolResult>;

// An initialized session whose server runs `tool` for every tools/call.
async function open(
  tool: Tool,
  jsonGraceMs = 1000,
  hooks: { onStalled?: (reason: string) => void; log?: (l: string) => void } =
    {},
) {
  const session = new McpHttpSession({
    onsessioninitialized() {},
    maxRequestBodySize: 1 << 20,
    jsonGraceMs,
    ...hooks,
  });
  const server = new Server({ name: "s", version: "1" }, {
    capabilities: { tools: {}, logging: {} },
  });
  server.setRequestHandler(
    CallToolRequestSchema,
    (request: CallToolRequest, extra: Extra) =>
      tool(request.params.arguments ?? {}, extra),
  );
  await server.connect(session);
  const init = await session.post(
    new Request("http://x/mcp", { method: "POST", headers: HEADERS }),
    initializeRequest("c", 0),
  );
  await init.body?.cancel();
  const headers = {
    ...HEADERS,
    "mcp-session-id": session.sessionId!,
    "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
  };
  const call = (id: number, meta?: Record<string, unknown>) =>
    session.post(new Request("http://x/mcp", { method: "POST", headers }), {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "t", arguments: {}, ...(meta ? { _meta: meta } : {}) },
    });
  return { session, server, call };
}

const result = (text: string): CallToolResult => ({
  content: [{ type: "text", text }],
});

// The JSON-RPC messages of an SSE body, in order.
async function events(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text.split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
    JSON.parse(l.slice(6))
  );
}

Deno.test("a quick call without a progress token is answered as one JSON body", async () => {
  const { server, call, session } = await open(() =>
    Promise.resolve(result("hi"))
  );
  const res = await call(1);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), {
    jsonrpc: "2.0",
    id: 1,
    result: result("hi"),
  });
  // The same id again, once answered, is a new call.
  assert.deepEqual((await (await call(1)).json()).result, result("hi"));
  assert.ok(session.sessionId);
  await server.close();
});

Deno.test("a call whose log message comes before its answer streams both, in order, as SSE", async () => {
  const { server, call } = await open(async (_args, extra) => {
    await extra.sendNotification({
      method: "notifications/message",
      params: { level: "info", data: "working" },
    });
    return result("done");
  });
  const res = await call(2);
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  assert.deepEqual(await events(res), [
    {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "working" },
    },
    { jsonrpc: "2.0", id: 2, result: result("done") },
  ]);
  await server.close();
});

Deno.test("a call slower than the grace time streams, and cancelling its stream cancels the call", async () => {
  const aborted = Promise.withResolvers<void>();
  const { server, call } = await open(async (_args, extra) => {
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener("abort", () => resolve())
    );
    aborted.resolve();
    return result("cancelled");
  }, 10);
  const res = await call(3);
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  await res.body!.cancel();
  await aborted.promise;
  await server.close();
});

Deno.test("a call with a progress token is answered by the session's SSE stream, and a vanished reader cancels it", async () => {
  const aborted = Promise.withResolvers<void>();
  const { server, call } = await open(async (_args, extra) => {
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener("abort", () => resolve())
    );
    aborted.resolve();
    return result("cancelled");
  });
  const res = await call(4, { progressToken: "p" });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  await res.body!.cancel();
  await aborted.promise;
  await server.close();
});

Deno.test("closing the session answers a call still waiting for JSON with a connection-closed error", async () => {
  const started = Promise.withResolvers<void>();
  const { server, call } = await open(async (_args, extra) => {
    started.resolve();
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener("abort", () => resolve())
    );
    return result("late");
  });
  const pending = call(5);
  await started.promise;
  await server.close();
  const res = await pending;
  assert.equal(res.headers.get("content-type"), "application/json");
  const body = await res.json();
  assert.equal(body.id, 5);
  assert.equal(body.error.code, ErrorCode.ConnectionClosed);
});

Deno.test("a malformed request is refused by the SDK as before", async () => {
  const { server, session } = await open(() => Promise.resolve(result("x")));
  const res = await session.post(
    new Request("http://x/mcp", {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session.sessionId! },
    }),
    { jsonrpc: "1.0", id: 6, method: "tools/call" },
  );
  assert.equal(res.status, 400);
  await res.body?.cancel();
  await server.close();
});

Deno.test("a request with headers the SDK refuses gets the SDK's refusal, not the JSON fast path", async () => {
  const { server, session } = await open(() => Promise.resolve(result("x")));
  const body = {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "t", arguments: {} },
  };
  const refused = async (headers: Record<string, string>) => {
    const res = await session.post(
      new Request("http://x/mcp", {
        method: "POST",
        headers: {
          ...HEADERS,
          "mcp-session-id": session.sessionId!,
          ...headers,
        },
      }),
      body,
    );
    const answer = await res.json();
    return [res.status, answer.error?.code];
  };
  assert.deepEqual(await refused({ accept: "application/json" }), [
    406,
    -32000,
  ]);
  assert.deepEqual(await refused({ "content-type": "text/plain" }), [
    415,
    -32000,
  ]);
  assert.deepEqual(
    await refused({ "mcp-protocol-version": "1999-01-01" }),
    [400, -32000],
  );
  await server.close();
});

Deno.test("a request the session does not take itself is answered by its SDK transport, as SSE", async () => {
  const { server, session } = await open(() => Promise.resolve(result("x")));
  // A task link is for the SDK to check: the fast path leaves it alone.
  const meta = { "io.modelcontextprotocol/related-task": { taskId: "t" } };
  const res = await session.post(
    new Request("http://x/mcp", {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session.sessionId! },
    }),
    {
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "t", _meta: meta },
    },
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  assert.deepEqual(await events(res), [{
    jsonrpc: "2.0",
    id: 8,
    result: result("x"),
  }]);
  await server.close();
});

Deno.test("a client that does not read its SSE answers loses notifications past 8 MiB, then its session past 64 MiB", async () => {
  const MiB = 1024 * 1024;
  const lines: string[] = [];
  const stalled: string[] = [];
  const chunk = "n".repeat(MiB);
  let notified = Promise.withResolvers<void>();
  const { session, call } = await open(
    async (args, extra) => {
      // Notifications first (dropped past 8 MiB), then the answer.
      for (let i = 0; i < 40; i++) {
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", data: chunk },
        });
      }
      notified.resolve();
      return result("r".repeat(Number(args.bytes ?? 0)));
    },
    1000,
    {
      onStalled: (reason) => stalled.push(reason),
      log: (line) => lines.push(line),
    },
  );
  const post = (id: number) =>
    session.post(
      new Request("http://x/mcp", {
        method: "POST",
        headers: {
          ...HEADERS,
          "mcp-session-id": session.sessionId!,
          "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
        },
      }),
      {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: {
          name: "t",
          arguments: { bytes: 8 * MiB },
          _meta: { progressToken: id },
        },
      },
    );
  // Never read: the bodies stay queued in the host.
  const first = await call(1, { progressToken: 1 });
  assert.equal(first.headers.get("content-type"), "text/event-stream");
  await notified.promise;
  assert.ok(session.backlogBytes <= 9 * MiB, `${session.backlogBytes} bytes`);
  assert.ok(lines.some((l) => /not keeping up/.test(l)), lines.join("\n"));
  assert.deepEqual(stalled, []);
  // Final answers (8 MiB each) always go out, until 64 MiB wait.
  for (let id = 2; stalled.length === 0 && id < 20; id++) {
    notified = Promise.withResolvers<void>();
    await post(id);
    await notified.promise;
    // The answer is sent once the handler has returned.
    await new Promise((r) => setTimeout(r, 0));
  }
  assert.equal(stalled.length, 1);
  assert.match(stalled[0]!, /The MCP client stopped reading: \d+ bytes/);
  assert.equal(session.backlogBytes, 0, "the cut-off bodies were let go");
  await assert.rejects(first.body!.getReader().read(), /stopped reading/);
});

Deno.test("the GET stream's unread bytes count too: its notifications are dropped past 8 MiB", async () => {
  const MiB = 1024 * 1024;
  const lines: string[] = [];
  const { session, server } = await open(
    () => Promise.resolve(result("")),
    1000,
    { log: (line) => lines.push(line) },
  );
  const stream = await session.handleRequest(
    new Request("http://x/mcp", {
      method: "GET",
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session.sessionId!,
        "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
      },
    }),
  );
  assert.equal(stream.headers.get("content-type"), "text/event-stream");
  // Messages about no request go on the GET stream, which nobody reads.
  const chunk = "g".repeat(MiB);
  for (let i = 0; i < 40; i++) {
    await server.sendLoggingMessage({ level: "info", data: chunk });
  }
  assert.ok(session.backlogBytes > 8 * MiB, `${session.backlogBytes} bytes`);
  assert.ok(session.backlogBytes <= 10 * MiB, `${session.backlogBytes} bytes`);
  assert.ok(lines.some((l) => /not keeping up/.test(l)), lines.join("\n"));
  await stream.body?.cancel();
  await server.close();
});

const GOOD_HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
};

const post = (headers: Record<string, string> = GOOD_HEADERS) =>
  new Request("http://x/mcp", { method: "POST", headers });

const call = { jsonrpc: "2.0", id: 1, method: "tools/call" };

// Bodies the SDK takes and bodies it refuses: the fast path must take a
// body only when the SDK's own schema does (and it asks for no progress).
const BODIES: unknown[] = [
  call,
  { ...call, id: "a" },
  { ...call, id: 1.5 },
  { ...call, id: 2 ** 60 },
  { ...call, id: null },
  { ...call, id: true },
  { ...call, jsonrpc: "1.0" },
  { id: 1, method: "tools/call" },
  { ...call, method: 5 },
  { ...call, method: "initialize" },
  { ...call, params: { name: "echo", arguments: { a: 1 } } },
  { ...call, params: [] },
  { ...call, params: null },
  { ...call, params: "x" },
  { ...call, params: { _meta: {} } },
  { ...call, params: { _meta: { other: 1 } } },
  { ...call, params: { _meta: null } },
  { ...call, params: { _meta: [] } },
  { ...call, params: { _meta: { progressToken: 1 } } },
  { ...call, params: { _meta: { progressToken: null } } },
  {
    ...call,
    params: {
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } },
    },
  },
  {
    ...call,
    params: { _meta: { "io.modelcontextprotocol/related-task": 5 } },
  },
  { ...call, extra: 1 },
  { ...call, result: {} },
  [call],
  null,
  "x",
];

Deno.test("plainJsonRequest takes a body only when the SDK's schema does, and no progress is asked for", () => {
  for (const body of BODIES) {
    const sdk = JSONRPCRequestSchema.safeParse(body);
    const plain = sdk.success && sdk.data.method !== "initialize" &&
      sdk.data.params?._meta?.progressToken === undefined &&
      sdk.data.params?._meta?.["io.modelcontextprotocol/related-task"] ===
        undefined;
    const taken = plainJsonRequest(post(), body) !== undefined;
    // Never take what the SDK refuses; a body the SDK takes may still go
    // the SDK's way (e.g. a progress token of null), never the other way.
    if (taken) {
      assert.ok(plain, `taken but the SDK refuses: ${JSON.stringify(body)}`);
    }
    if (plain) assert.ok(taken, `plain but not taken: ${JSON.stringify(body)}`);
  }
});

Deno.test("plainJsonRequest leaves to the SDK every header the SDK would refuse", () => {
  const variants: [Record<string, string>, boolean][] = [
    [GOOD_HEADERS, true],
    [{ ...GOOD_HEADERS, accept: "application/json" }, false],
    [{ ...GOOD_HEADERS, accept: "text/event-stream" }, false],
    [{ ...GOOD_HEADERS, accept: "*/*" }, false],
    [{ ...GOOD_HEADERS, "content-type": "text/plain" }, false],
    [
      { ...GOOD_HEADERS, "content-type": "application/json; charset=utf-8" },
      true,
    ],
    [{ ...GOOD_HEADERS, "mcp-protocol-version": "1999-01-01" }, false],
    [{
      accept: GOOD_HEADERS.accept,
      "content-type": GOOD_HEADERS["content-type"],
    }, true],
  ];
  for (const [headers, expected] of variants) {
    assert.equal(
      plainJsonRequest(post(headers), call) !== undefined,
      expected,
      JSON.stringify(headers),
    );
    // The same rule the SDK applies to the content type.
    if (!expected && headers["content-type"] !== GOOD_HEADERS["content-type"]) {
      assert.equal(isJsonContentType(headers["content-type"]!), false);
    }
  }
});

Deno.test("CallAnswer sends a JSON answer as the SDK's JSON response mode does", async () => {
  const deadlines = new Deadlines({ unref: false });
  const answer = new CallAnswer({
    id: "a",
    sessionId: "s-1",
    graceMs: 60_000,
    onCancel() {},
    deadlines,
  });
  await answer.send({
    jsonrpc: "2.0",
    id: "a",
    error: { code: -32601, message: "Method not found" },
  });
  const response = await answer.response;
  deadlines.close();
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.equal(response.headers.get("mcp-session-id"), "s-1");
  assert.deepEqual(await response.json(), {
    jsonrpc: "2.0",
    id: "a",
    error: { code: -32601, message: "Method not found" },
  });
});

Deno.test("LazyRequestInfo reads the headers and URL only when asked, once", () => {
  const request = new Request("http://h/mcp?x=1", {
    headers: { authorization: "Bearer t" },
  });
  const info = new LazyRequestInfo(request);
  assert.equal(info.headers, info.headers);
  assert.equal(info.headers.authorization, "Bearer t");
  assert.equal(info.url?.search, "?x=1");
  assert.equal(info.url, info.url);
});

const MiB = 1024 * 1024;

Deno.test("SseBacklog counts what a watched body holds until it is read, even past close()", async () => {
  const backlog = new SseBacklog();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
  }, SSE_STRATEGY);
  const watched = backlog.watch(controller);
  controller.enqueue(new Uint8Array(3 * MiB));
  controller.enqueue(new Uint8Array(MiB));
  controller.close();
  watched.end();
  assert.equal(backlog.bytes, 4 * MiB);
  const reader = body.getReader();
  await reader.read();
  assert.equal(backlog.bytes, MiB);
  await reader.read();
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog drops live messages past 8 MiB and disconnects past 64 MiB, over all bodies", () => {
  const backlog = new SseBacklog();
  const controllers: ReadableStreamDefaultController<Uint8Array>[] = [];
  for (let i = 0; i < 2; i++) {
    new ReadableStream<Uint8Array>({
      start: (c) => void controllers.push(c),
    }, SSE_STRATEGY);
    backlog.watch(controllers[i]!);
  }
  controllers[0]!.enqueue(new Uint8Array(EVENT_BACKLOG_BYTES / 2 + 1));
  assert.equal(backlogAction(backlog.bytes, true), "send");
  controllers[1]!.enqueue(new Uint8Array(EVENT_BACKLOG_BYTES / 2));
  assert.equal(backlogAction(backlog.bytes, true), "drop");
  assert.equal(backlogAction(backlog.bytes, false), "send");
  controllers[1]!.enqueue(new Uint8Array(MAX_BACKLOG_BYTES));
  assert.equal(backlogAction(backlog.bytes, false), "disconnect");
  backlog.abort("cut off");
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog.meter() counts a foreign body's unread bytes and reports a cancel once", async () => {
  const backlog = new SseBacklog();
  let inner!: ReadableStreamDefaultController<Uint8Array>;
  let gone = 0;
  const body = backlog.meter(
    new ReadableStream<Uint8Array>({ start: (c) => void (inner = c) }),
    () => gone++,
  );
  inner.enqueue(new Uint8Array(2 * MiB));
  inner.enqueue(new Uint8Array(MiB));
  // The meter moves chunks as they come: wait for it to have taken both.
  const reader = body.getReader();
  assert.equal((await reader.read()).value?.byteLength, 2 * MiB);
  for (let i = 0; i < 100 && backlog.bytes < MiB; i++) await Promise.resolve();
  assert.equal(backlog.bytes, MiB);
  await reader.cancel();
  assert.equal(gone, 1);
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog.meter() passes its source's failure on, and a client's cancel back", async () => {
  const backlog = new SseBacklog();
  let gone = 0;
  const failing = backlog.meter(
    new ReadableStream({ pull: (c) => c.error(new Error("boom")) }),
    () => gone++,
  );
  await assert.rejects(failing.getReader().read(), /boom/);
  assert.equal(gone, 1);
  const cancelled = Promise.withResolvers<unknown>();
  const body = backlog.meter(
    new ReadableStream({ cancel: (reason) => cancelled.resolve(reason) }),
    () => gone++,
  );
  await body.cancel("bye");
  assert.equal(await cancelled.promise, "bye");
  assert.equal(gone, 2);
});

Deno.test("SseBacklog.abort() fails the bodies, so their bytes are let go", async () => {
  const backlog = new SseBacklog();
  let inner!: ReadableStreamDefaultController<Uint8Array>;
  const body = backlog.meter(
    new ReadableStream<Uint8Array>({ start: (c) => void (inner = c) }),
  );
  inner.enqueue(new Uint8Array(MiB));
  await Promise.resolve();
  backlog.abort("The client stopped reading");
  await assert.rejects(body.getReader().read(), /stopped reading/);
});

Deno.test("watchAnswer keeps the SDK answer's status, status text and headers", async () => {
  const response = watchAnswer(
    new Response("event: message\ndata: {}\n\n", {
      status: 201,
      statusText: "Streaming",
      headers: { "content-type": "text/event-stream", "mcp-session-id": "s1" },
    }),
    () => {},
  );
  assert.equal(response.status, 201);
  assert.equal(response.statusText, "Streaming");
  assert.equal(response.headers.get("mcp-session-id"), "s1");
  assert.equal(await response.text(), "event: message\ndata: {}\n\n");
});
