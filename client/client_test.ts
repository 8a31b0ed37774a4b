import assert from "node:assert/strict";
import { SkillboxError } from "../protocol/errors.ts";
import type { CallEvent } from "../protocol/tool.ts";
import { type Client, connect, type WebSocketConstructor } from "./client.ts";
import { ConnectionClosedError } from "./errors.ts";
import { KEPT_CHARS } from "./_event_stream.ts";
import { TimeoutError } from "../protocol/errors.ts";
import { type FakeHost, type Raw, startFakeHost } from "./_fake_host_test.ts";
import type { WireMessage } from "./types.ts";

const HEX_ID = /^[0-9a-f]{32}$/;

/** Connects a client to a fresh fake host; `dispose` closes both. */
async function setup(
  options: Parameters<typeof connect>[1] = {},
): Promise<{ host: FakeHost; client: Client; dispose: () => Promise<void> }> {
  const host = startFakeHost();
  const client = await connect(host.url, options);
  return {
    host,
    client,
    dispose: async () => {
      await client.close();
      await host.shutdown();
    },
  };
}

function assertEnvelope(msg: Raw, type: string): void {
  assert.equal(msg.type, type);
  assert.match(msg.id, HEX_ID);
  assert.equal(msg.version, "1.0");
  assert.equal(typeof msg.ts, "number");
}

async function collect(events: AsyncIterable<CallEvent>): Promise<CallEvent[]> {
  const seen: CallEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const okToolResult = (toolName: string, data: unknown) => ({
  success: true,
  tool_name: toolName,
  data,
  duration_ms: 3,
});

Deno.test("connect() sends a complete handshake and reads the session", async () => {
  const host = startFakeHost();
  const client = await connect(host.url, {
    token: "t0k",
    agentId: "agent-7",
    caps: ["tools"],
  });
  const handshake = await host.handshake;
  assertEnvelope(handshake, "handshake/req");
  assert.equal(handshake.agent_id, "agent-7");
  assert.deepEqual(handshake.agent_caps, ["tools"]);
  assert.equal(handshake.auth_token, "t0k");
  assert.equal(client.sessionId, "5e55105e55105e55105e55105e55105e");
  assert.deepEqual(client.acceptedCaps, ["tools", "skill"]);
  assert.equal(client.maxParallel, 8);
  await client.close();
  await host.shutdown();
});

Deno.test("connect() asks for tools, toolkits and skill by default", async () => {
  const { host, dispose } = await setup();
  const handshake = await host.handshake;
  assert.deepEqual(handshake.agent_caps, ["tools", "toolkits", "skill"]);
  assert.equal(handshake.auth_token, "");
  assert.equal(handshake.agent_id, "");
  await dispose();
});

Deno.test("connect() fails with unauthorized and the host's reason when refused", async () => {
  const host = startFakeHost({ refuse: "unknown token" });
  const error = await connect(host.url, { token: "wrong" }).then(
    () => assert.fail("connect() resolved"),
    (error: unknown) => error,
  );
  assert.ok(error instanceof SkillboxError);
  assert.equal(error.code, "unauthorized");
  assert.match(error.message, /unknown token/);
  assert.equal(error.detail.reason, "unknown token");
  // The refused socket is closed, not left open.
  await host.socketClosed;
  await host.shutdown();
});

Deno.test("connect() fails with the host's error when it answers the handshake with one", async () => {
  const host = startFakeHost({
    handshake: { type: "error", code: "schema_violation", message: "bad" },
  });
  await assert.rejects(
    connect(host.url),
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "schema_violation" &&
      error.message === "bad",
  );
  await host.shutdown();
});

Deno.test("connect() fails with ConnectionClosedError when nothing listens", async () => {
  const server = Deno.serve({ port: 0, onListen() {} }, () => new Response());
  const port = server.addr.port;
  await server.shutdown();
  await assert.rejects(
    connect(`ws://127.0.0.1:${port}/a2e`),
    ConnectionClosedError,
  );
});

/** A WebSocket server that accepts and then says nothing. */
function startSilentHost(): { url: string; shutdown: () => Promise<void> } {
  const server = Deno.serve({ port: 0, onListen() {} }, (request) => {
    const { response } = Deno.upgradeWebSocket(request);
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}/a2e`,
    shutdown: () => server.shutdown(),
  };
}

Deno.test("connect() times out when the handshake gets no answer", async () => {
  const host = startSilentHost();
  await assert.rejects(
    connect(host.url, { timeout: 50 }),
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "timeout" &&
      /Cannot connect to "ws:.*": timed out after 50 ms/.test(error.message),
  );
  await host.shutdown();
});

/**
 * A stand-in WebSocket that opens `delay` ms after it is made and answers
 * the handshake `delay` ms after it is sent: each step alone is quicker
 * than a `timeout` of `delay * 4 / 3`, both together are not.
 */
function slowSocketClass(delay: number): WebSocketConstructor {
  return class extends EventTarget {
    readyState = 0;
    constructor() {
      super();
      setTimeout(() => {
        if (this.readyState !== 0) return;
        this.readyState = 1;
        this.dispatchEvent(new Event("open"));
      }, delay);
    }
    send(frame: string): void {
      const { id } = JSON.parse(frame);
      const answer = JSON.stringify({
        type: "handshake/resp",
        id: "f".repeat(32),
        version: "1.0",
        ts: Date.now() / 1000,
        req_id: id,
        session_id: "s1",
        accepted_caps: [],
        max_parallel: 1,
        ok: true,
        reason: "",
      });
      setTimeout(() => {
        if (this.readyState !== 1) return;
        this.dispatchEvent(new MessageEvent("message", { data: answer }));
      }, delay);
    }
    close(code = 1000, reason = ""): void {
      if (this.readyState >= 2) return;
      this.readyState = 3;
      this.dispatchEvent(new CloseEvent("close", { code, reason }));
    }
  } as unknown as WebSocketConstructor;
}

Deno.test("connect()'s timeout bounds the socket and the handshake together", async () => {
  // Decided by the order the timers fall due (deadline at 200 ms, answer
  // at 300 ms), not by measuring time.
  await assert.rejects(
    connect("ws://127.0.0.1:1/a2e", {
      timeout: 200,
      WebSocket: slowSocketClass(150),
    }),
    (error: unknown) =>
      error instanceof TimeoutError &&
      /Cannot connect to "ws:.*": timed out after 200 ms/.test(error.message),
  );
});

Deno.test("connect() stops when its signal aborts", async (t) => {
  const host = startSilentHost();
  await t.step("during the handshake", async () => {
    const controller = new AbortController();
    const connecting = connect(host.url, { signal: controller.signal });
    const reason = new Error("changed my mind");
    controller.abort(reason);
    await assert.rejects(connecting, (error: unknown) => error === reason);
  });
  await t.step("before it starts", async () => {
    await assert.rejects(
      connect(host.url, { signal: AbortSignal.abort() }),
      (error: unknown) =>
        error instanceof DOMException && error.name === "AbortError",
    );
  });
  await host.shutdown();
});

Deno.test("connect() rejects a URL that is not ws, wss, http or https", async () => {
  await assert.rejects(connect("ftp://example.com/a2e"), TypeError);
});

Deno.test("connect() refuses a timeout setTimeout cannot hold", async (t) => {
  // Past 2^31-1 ms (or NaN, or below 0) setTimeout fires at once: every
  // call would time out the moment it is sent.
  const host = startFakeHost();
  for (
    const [name, options] of [
      ["timeout over 2^31-1 ms", { timeout: 2 ** 31 }],
      ["timeout NaN", { timeout: NaN }],
      ["timeout below 0", { timeout: -1 }],
      ["timeoutGrace over 2^31-1 ms", { timeoutGrace: 2 ** 31 }],
      ["timeoutGrace Infinity", { timeoutGrace: Infinity }],
    ] as const
  ) {
    await t.step(name, async () => {
      const error = await connect(host.url, options).then(
        async (client) => await client.close(),
        (error: unknown) => error,
      );
      assert.ok(error instanceof RangeError, String(error));
      assert.match(
        error.message,
        /^Cannot connect to "ws:.*": timeout(Grace)? must be 0 to 2147483647 ms: got /,
      );
    });
  }
  await host.shutdown();
});

Deno.test("a call whose timeout and grace add up past 2^31-1 ms waits for its answer", async (t) => {
  const { host, client, dispose } = await setup({
    timeout: 2 ** 31 - 1,
    timeoutGrace: 2 ** 31 - 1,
  });
  await t.step("a tool call with the longest timeout", async () => {
    const call = client.tools.call("slow", {}, { timeout: 2 ** 31 - 1 });
    const req = await host.next();
    // Frames are handled in order: the pong arriving means the call's
    // timer had its chance to fire first.
    const pong = client.ping();
    const ping = await host.next();
    host.send("pong", { req_id: ping.id, uptime_seconds: 1 });
    await pong;
    host.send("tool/call/resp", {
      req_id: req.id,
      data: okToolResult("slow", 7),
    });
    assert.equal((await call).data, 7);
  });
  await t.step("a call's own timeout below 0 is a RangeError", async () => {
    await assert.rejects(
      client.tools.call("slow", {}, { timeout: -1 }),
      (error: unknown) =>
        error instanceof RangeError &&
        /^Cannot call tool "slow": timeout must be 0 to 2147483647 ms: got -1$/
          .test(error.message),
    );
  });
  await dispose();
});

Deno.test("connect() opens its socket with the WebSocket class it is given", async () => {
  const host = startFakeHost();
  const urls: string[] = [];
  const sent: string[] = [];
  class RecordingWebSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      urls.push(String(url));
    }
    override send(
      data: string | ArrayBufferLike | Blob | ArrayBufferView,
    ): void {
      if (typeof data === "string") sent.push(data);
      super.send(data);
    }
  }
  const client = await connect(host.url, { WebSocket: RecordingWebSocket });
  const pong = client.ping();
  const ping = await host.next();
  host.send("pong", { req_id: ping.id, uptime_seconds: 0 });
  await pong;
  assert.deepEqual(urls, [host.url]);
  assert.deepEqual(sent.map((frame) => JSON.parse(frame).type), [
    "handshake/req",
    "ping",
  ]);
  await client.close();
  await host.shutdown();
});

Deno.test("ping() sends a complete ping and reads the pong", async () => {
  const { host, client, dispose } = await setup();
  const pong = client.ping();
  const ping = await host.next();
  assertEnvelope(ping, "ping");
  host.send("pong", { req_id: ping.id, uptime_seconds: 42.5 });
  const result = await pong;
  assert.equal(result.uptimeSeconds, 42.5);
  assert.ok(result.roundTripMs >= 0);
  await dispose();
});

Deno.test("tools.call() sends a complete tool/call/req", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step("with defaults", async () => {
    const call = client.tools.call("add", { a: 1, b: 2 });
    const req = await host.next();
    assertEnvelope(req, "tool/call/req");
    assert.equal(req.id, call.id);
    assert.deepEqual(
      {
        session_id: req.session_id,
        tool_name: req.tool_name,
        arguments: req.arguments,
        correlation_id: req.correlation_id,
        streaming: req.streaming,
        timeout: req.timeout,
      },
      {
        session_id: client.sessionId,
        tool_name: "add",
        arguments: { a: 1, b: 2 },
        correlation_id: "",
        streaming: true,
        timeout: 30,
      },
    );
    host.send("tool/call/resp", {
      req_id: req.id,
      data: okToolResult("add", 3),
      created_at: 1,
    });
    const result = await call;
    assert.equal(result.data, 3);
    // Missing optional fields come back with A2E's defaults.
    assert.equal(result.truncated, false);
    assert.deepEqual(result.events, []);
  });
  await t.step(
    "with options, timeout rounded up to whole seconds",
    async () => {
      const call = client.tools.call("slow", {}, {
        timeout: 1500,
        streaming: false,
        correlationId: "c-1",
      });
      const req = await host.next();
      assert.equal(req.timeout, 2);
      assert.equal(req.streaming, false);
      assert.equal(req.correlation_id, "c-1");
      host.send("tool/call/resp", {
        req_id: req.id,
        data: okToolResult("slow", null),
      });
      await call;
    },
  );
  await dispose();
});

Deno.test("calls are correlated by req_id, whatever order the answers come in", async () => {
  const { host, client, dispose } = await setup();
  const first = client.tools.call("echo", { n: 1 });
  const second = client.tools.call("echo", { n: 2 });
  const reqA = await host.next();
  const reqB = await host.next();
  assert.notEqual(reqA.id, reqB.id);
  host.send("tool/event", {
    req_id: reqB.id,
    kind: "status",
    data: { message: "b" },
    seq: 0,
  });
  host.send("tool/event", {
    req_id: reqA.id,
    kind: "status",
    data: { message: "a" },
    seq: 0,
  });
  host.send("tool/call/resp", {
    req_id: reqB.id,
    data: okToolResult("echo", 2),
  });
  host.send("tool/call/resp", {
    req_id: reqA.id,
    data: okToolResult("echo", 1),
  });
  assert.equal((await first).data, 1);
  assert.equal((await second).data, 2);
  assert.deepEqual((await collect(first.events)).map((e) => e.data.message), [
    "a",
  ]);
  assert.deepEqual((await collect(second.events)).map((e) => e.data.message), [
    "b",
  ]);
  await dispose();
});

Deno.test("events stream to onEvent and to for await, in order, until the answer", async () => {
  const { host, client, dispose } = await setup();
  const viaCallback: CallEvent[] = [];
  const call = client.tools.call("work", {}, {
    onEvent: (event) => viaCallback.push(event),
  });
  const req = await host.next();
  const iterated: CallEvent[] = [];
  const iterating = (async () => {
    for await (const event of call.events) {
      iterated.push(event);
      // Answer only once the first event has been seen, so this loop is
      // proven to receive events while the call is still running.
      if (event.seq === 0) {
        host.send("invoke/event", { req_id: req.id, kind: "log", seq: 2 });
        host.send("tool/call/resp", {
          req_id: req.id,
          data: okToolResult("work", "done"),
        });
      }
    }
  })();
  host.send("tool/event", {
    req_id: req.id,
    kind: "progress",
    data: { pct: 50, message: "half" },
    seq: 0,
  });
  host.send("tool/event", {
    req_id: req.id,
    kind: "progress",
    data: { pct: 100, message: "all" },
    seq: 1,
  });
  await iterating;
  assert.equal((await call).data, "done");
  const expected = [
    { kind: "progress", data: { pct: 50, message: "half" }, seq: 0 },
    { kind: "progress", data: { pct: 100, message: "all" }, seq: 1 },
    // Missing event fields get A2E's defaults.
    { kind: "log", data: {}, seq: 2 },
  ];
  assert.deepEqual(iterated, expected);
  assert.deepEqual(viaCallback, expected);
  // Iterating after the end replays every event.
  assert.deepEqual(await collect(call.events), expected);
  await dispose();
});

Deno.test("an error answer rejects with a SkillboxError carrying its fields", async () => {
  const { host, client, dispose } = await setup();
  const call = client.tools.call("nope", {});
  const req = await host.next();
  host.send("tool/event", { req_id: req.id, kind: "status", seq: 0 });
  host.send("error", {
    req_id: req.id,
    code: "unknown_tool",
    message: 'Unknown tool "nope"',
    detail: { tool: "nope" },
    retryable: true,
    capability_name: "tools",
  });
  const error = await call.then(
    () => assert.fail("call resolved"),
    (error: unknown) => error,
  );
  assert.ok(error instanceof SkillboxError);
  assert.equal(error.code, "unknown_tool");
  assert.equal(error.message, 'Unknown tool "nope"');
  assert.equal(error.retryable, true);
  assert.deepEqual(error.detail, { tool: "nope" });
  // The event stream yields what came, then throws the same error.
  const seen: CallEvent[] = [];
  await assert.rejects(async () => {
    for await (const event of call.events) seen.push(event);
  }, (thrown: unknown) => thrown === error);
  assert.equal(seen.length, 1);
  await dispose();
});

Deno.test("a call that is only iterated, never awaited, fails through the iterator", async () => {
  const { host, client, dispose } = await setup();
  const call = client.tools.call("nope", {});
  const req = await host.next();
  host.send("error", { req_id: req.id, code: "tool_denied", message: "no" });
  await assert.rejects(
    () => collect(call.events),
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "tool_denied",
  );
  await dispose();
});

Deno.test("a call times out locally and its late answer is dropped", async () => {
  const { host, client, dispose } = await setup({ timeoutGrace: 0 });
  const pushed: WireMessage[] = [];
  client.onPush((msg) => pushed.push(msg));
  const call = client.tools.call("slow", {}, { timeout: 30 });
  const req = await host.next();
  await assert.rejects(
    call,
    (error: unknown) =>
      error instanceof SkillboxError && error.name === "TimeoutError" &&
      error.code === "timeout" && /call tool "slow"/.test(error.message),
  );
  host.send("tool/event", { req_id: req.id, kind: "status", seq: 0 });
  host.send("tool/call/resp", {
    req_id: req.id,
    data: okToolResult("slow", 1),
  });
  // Frames are handled in order: once the pong is in, the late ones were too.
  const pong = client.ping();
  const ping = await host.next();
  host.send("pong", { req_id: ping.id, uptime_seconds: 1 });
  await pong;
  assert.deepEqual(pushed, []);
  await dispose();
});

Deno.test("a request without an answer times out after the connection's timeout", async () => {
  const { host, client, dispose } = await setup({ timeout: 40 });
  const listing = client.tools.list();
  await host.next();
  await assert.rejects(
    listing,
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "timeout" &&
      /list tools: timed out after 40 ms/.test(error.message),
  );
  await dispose();
});

Deno.test("a request that runs no code honours its own timeout and signal", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step(
    "timeout: a TimeoutError, not the connection's 10 s",
    async () => {
      const pinging = client.ping({ timeout: 40 });
      await host.next();
      await assert.rejects(
        pinging,
        (error: unknown) =>
          error instanceof TimeoutError &&
          /ping: timed out after 40 ms/.test(error.message),
      );
    },
  );
  await t.step("signal: rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const listing = client.tools.list({ signal: controller.signal });
    await host.next();
    const reason = new Error("the user left");
    controller.abort(reason);
    await assert.rejects(listing, (error: unknown) => error === reason);
  });
  await dispose();
});

Deno.test("aborting a call's signal rejects it with the signal's reason", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step("while it runs", async () => {
    const controller = new AbortController();
    const call = client.skills.call("long", {}, { signal: controller.signal });
    await host.next();
    const reason = new Error("user gave up");
    controller.abort(reason);
    await assert.rejects(call, (error: unknown) => error === reason);
  });
  await t.step("before it is sent: nothing goes on the wire", async () => {
    const call = client.tools.call("x", {}, { signal: AbortSignal.abort() });
    await assert.rejects(
      call,
      (error: unknown) =>
        error instanceof DOMException && error.name === "AbortError",
    );
    // The next message the host sees is this ping, not the aborted call.
    const pong = client.ping();
    const next = await host.next();
    assert.equal(next.type, "ping");
    host.send("pong", { req_id: next.id, uptime_seconds: 0 });
    await pong;
  });
  await dispose();
});

Deno.test("a socket closed by the host rejects every pending call", async () => {
  const { host, client, dispose } = await setup();
  const call = client.tools.call("a", {});
  const listing = client.skills.discover();
  await host.next();
  await host.next();
  host.closeSocket(4000, "going away");
  for (const pending of [call, listing]) {
    await assert.rejects(
      Promise.resolve(pending),
      (error: unknown) =>
        error instanceof ConnectionClosedError && error.closeCode === 4000 &&
        error.retryable &&
        /connection closed \(code 4000\): going away/.test(error.message),
    );
  }
  assert.deepEqual(await client.closed, { code: 4000, reason: "going away" });
  // A call made after the close fails at once.
  await assert.rejects(client.ping(), ConnectionClosedError);
  await dispose();
});

Deno.test("close() closes the socket and fails calls still pending", async () => {
  const host = startFakeHost();
  const client = await connect(host.url);
  const call = client.tools.call("a", {});
  await host.next();
  const info = await client.close();
  assert.equal(info.code, 1000);
  await assert.rejects(call, ConnectionClosedError);
  await host.socketClosed;
  await host.shutdown();
});

Deno.test("onPush() receives messages that answer no request, until unsubscribed", async () => {
  const { host, client, dispose } = await setup();
  const pushed: WireMessage[] = [];
  const unsubscribe = client.onPush((msg) => pushed.push(msg));
  host.send("invoke/event", {
    req_id: "",
    kind: "tools.changed",
    data: { added: ["x"] },
    seq: 0,
  });
  host.send("error", { req_id: "ffff", code: "parse_error", message: "bad" });
  // Frames that are not A2E messages are ignored, not pushed.
  host.sendRaw("not json");
  host.sendRaw("[1,2]");
  const pong = client.ping();
  const ping = await host.next();
  host.send("pong", { req_id: ping.id, uptime_seconds: 0 });
  await pong;
  assert.deepEqual(pushed.map((msg) => [msg.type, msg.kind ?? msg.code]), [
    ["invoke/event", "tools.changed"],
    ["error", "parse_error"],
  ]);
  unsubscribe();
  host.send("invoke/event", { kind: "tools.changed", seq: 1 });
  const pong2 = client.ping();
  const ping2 = await host.next();
  host.send("pong", { req_id: ping2.id, uptime_seconds: 0 });
  await pong2;
  assert.equal(pushed.length, 2);
  await dispose();
});

Deno.test("an onEvent handler that throws fails its call with that error", async () => {
  const { host, client, dispose } = await setup();
  const bug = new Error("handler bug");
  const call = client.tools.call("a", {}, {
    onEvent: () => {
      throw bug;
    },
  });
  const req = await host.next();
  host.send("tool/event", { req_id: req.id, kind: "status", seq: 0 });
  await assert.rejects(call, (error: unknown) => error === bug);
  await dispose();
});

Deno.test("an answer of the wrong type fails the call with invalid_message", async () => {
  const { host, client, dispose } = await setup();
  const listing = client.tools.list();
  const req = await host.next();
  host.send("pong", { req_id: req.id, uptime_seconds: 0 });
  await assert.rejects(
    listing,
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "invalid_message" &&
      /list tools: expected "tool\/list\/resp", got "pong"/.test(
        error.message,
      ),
  );
  await dispose();
});

Deno.test("a hostile host's answer of another type fails the call with invalid_message", async (t) => {
  const { host, client, dispose } = await setup();
  const invalid = (error: unknown) =>
    error instanceof SkillboxError && error.code === "invalid_message" &&
    error.message.startsWith('Cannot list tools: expected "tool/list/resp"');
  await t.step("a type that String() refuses", async () => {
    const listing = client.tools.list();
    const req = await host.next();
    host.send("tool/list/resp", { req_id: req.id, type: { toString: 1 } });
    await assert.rejects(listing, invalid);
  });
  await t.step("a type holding a terminal escape sequence", async () => {
    const listing = client.tools.list();
    const req = await host.next();
    host.send("tool/list/resp", { req_id: req.id, type: "x\u001b[2J" });
    await assert.rejects(
      listing,
      (error: unknown) =>
        invalid(error) && !(error as Error).message.includes("\u001b"),
    );
  });
  await dispose();
});

Deno.test("a hostile host's words reach the client's errors only as printable text", async (t) => {
  // C1 controls (U+009B starts a terminal escape sequence), bidi overrides
  // and line separators, as a host may put them in any text it sends.
  const hostile = "\u009b2J\u202eevil\u2028x\u001b[0m\n";
  const printable = (error: unknown) =>
    error instanceof Error &&
    /\\u009b2J\\u202eevil\\u2028x\\u001b\[0m\\u000a/.test(error.message) &&
    // deno-lint-ignore no-control-regex
    !/[\u0000-\u0008\u000a-\u001f\u0080-\u009f\u2028\u202e]/.test(
      error.message,
    );
  await t.step("an error answer's message and code", async () => {
    const { host, client, dispose } = await setup();
    const call = client.tools.call("a", {});
    const req = await host.next();
    host.send("error", { req_id: req.id, code: "x", message: hostile });
    await assert.rejects(Promise.resolve(call), printable);
    const listing = client.tools.list();
    const next = await host.next();
    host.send("error", { req_id: next.id, code: hostile, message: "" });
    await assert.rejects(listing, printable);
    await dispose();
  });
  await t.step("a refused handshake's reason", async () => {
    const host = startFakeHost({ refuse: hostile });
    await assert.rejects(connect(host.url), printable);
    await host.shutdown();
  });
  await t.step("a failed configure's status and message", async () => {
    const { host, client, dispose } = await setup();
    const configuring = client.toolkits.configure("gh", {});
    const req = await host.next();
    host.send("toolkit/configure/resp", {
      req_id: req.id,
      status: hostile,
      message: hostile,
    });
    await assert.rejects(configuring, printable);
    await dispose();
  });
  await t.step("the reason a host closed with", async () => {
    const { host, client, dispose } = await setup();
    const call = client.tools.call("a", {});
    await host.next();
    host.closeSocket(4000, hostile);
    await assert.rejects(Promise.resolve(call), printable);
    await dispose();
  });
});

Deno.test("tools.list() reads parameters nested deeper than the stack", async () => {
  const { host, client, dispose } = await setup();
  // Written as text: JSON.stringify cannot nest this deep either.
  const levels = 20_000;
  const parameter =
    '{"name":"n","type":"object","properties":{"n":'.repeat(levels) +
    '{"name":"leaf","type":"string"}' + "}}".repeat(levels);
  const listing = client.tools.list();
  const req = await host.next();
  host.sendRaw(
    `{"type":"tool/list/resp","id":"a1","version":"1.0","ts":1,` +
      `"req_id":${JSON.stringify(req.id)},` +
      `"tools":[{"name":"deep","input_parameters":[${parameter}]}]}`,
  );
  const [deep] = await listing;
  assert.equal(deep?.name, "deep");
  assert.ok(deep?.inputSchema.properties);
  await dispose();
});

Deno.test("tools.list() and tools.search() send their filters", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step("list", async () => {
    const listing = client.tools.list({ tags: ["fs"], kind: "local" });
    const req = await host.next();
    assertEnvelope(req, "tool/list/req");
    assert.deepEqual(
      [req.filter_kind, req.filter_tags, req.query, req.include_deferred],
      ["local", ["fs"], "", false],
    );
    host.send("tool/list/resp", {
      req_id: req.id,
      tools: [{ name: "read", description: "Read a file" }],
    });
    const tools = await listing;
    assert.equal(tools.length, 1);
    assert.equal(tools[0]?.name, "read");
    assert.equal(tools[0]?.deferLoading, false);
  });
  await t.step("search", async () => {
    const found = client.tools.search("weather", { includeDeferred: true });
    const req = await host.next();
    assert.equal(req.query, "weather");
    assert.equal(req.include_deferred, true);
    host.send("tool/list/resp", { req_id: req.id, tools: [] });
    assert.deepEqual(await found, []);
  });
  await t.step("search with an empty query is a caller mistake", async () => {
    await assert.rejects(client.tools.search(""), TypeError);
  });
  await dispose();
});

Deno.test("toolkits.list() sends its filters", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step("none by default", async () => {
    const listing = client.toolkits.list();
    const req = await host.next();
    assertEnvelope(req, "toolkit/list/req");
    assert.deepEqual([req.filter_kind, req.filter_tags], ["", []]);
    host.send("toolkit/list/resp", { req_id: req.id, toolkits: [] });
    assert.deepEqual(await listing, []);
  });
  await t.step("kind and tags", async () => {
    const listing = client.toolkits.list({ kind: "network", tags: ["http"] });
    const req = await host.next();
    assert.deepEqual([req.filter_kind, req.filter_tags], ["network", [
      "http",
    ]]);
    host.send("toolkit/list/resp", {
      req_id: req.id,
      toolkits: [{ name: "http", tools: [] }],
    });
    assert.deepEqual((await listing).map((kit) => kit.name), ["http"]);
  });
  await dispose();
});

Deno.test("toolkits.ensure() configures only a toolkit that is not configured", async (t) => {
  const { host, client, dispose } = await setup();
  const kit = (configured: boolean) => ({
    name: "gh",
    tools: ["gh_issue"],
    configured,
  });
  await t.step("not configured: configure, then read back", async () => {
    const ensured = client.toolkits.ensure("gh", { token: "x" });
    const list1 = await host.next();
    assertEnvelope(list1, "toolkit/list/req");
    host.send("toolkit/list/resp", {
      req_id: list1.id,
      toolkits: [kit(false)],
    });
    const configure = await host.next();
    assertEnvelope(configure, "toolkit/configure/req");
    assert.deepEqual(
      [configure.session_id, configure.toolkit_name, configure.config],
      [client.sessionId, "gh", { token: "x" }],
    );
    host.send("toolkit/configure/resp", {
      req_id: configure.id,
      toolkit_name: "gh",
      status: "ok",
      message: null,
    });
    const list2 = await host.next();
    host.send("toolkit/list/resp", { req_id: list2.id, toolkits: [kit(true)] });
    assert.equal((await ensured)?.configured, true);
  });
  await t.step("already configured: no configure request", async () => {
    const ensured = client.toolkits.ensure("gh", { token: "x" });
    const list = await host.next();
    host.send("toolkit/list/resp", { req_id: list.id, toolkits: [kit(true)] });
    assert.equal((await ensured)?.name, "gh");
    // The next message is the ping, so no configure went out.
    const pong = client.ping();
    assert.equal((await host.next()).type, "ping");
    pong.catch(() => {});
  });
  await dispose();
});

Deno.test("toolkits.configure() throws when the status is not ok", async () => {
  const { host, client, dispose } = await setup();
  const configuring = client.toolkits.configure("gh", {});
  const req = await host.next();
  host.send("toolkit/configure/resp", {
    req_id: req.id,
    status: "invalid",
    message: "token: required",
  });
  await assert.rejects(
    configuring,
    (error: unknown) =>
      error instanceof SkillboxError && error.code === "runtime_error" &&
      /status "invalid": token: required/.test(error.message),
  );
  await dispose();
});

Deno.test("toolkits.get() returns undefined for a toolkit the host does not list", async () => {
  const { host, client, dispose } = await setup();
  const got = client.toolkits.get("missing");
  const req = await host.next();
  host.send("toolkit/list/resp", {
    req_id: req.id,
    toolkits: [{ name: "gh", tools: [] }],
  });
  assert.equal(await got, undefined);
  await dispose();
});

Deno.test("skills.discover() and skills.call() speak the skill messages", async (t) => {
  const { host, client, dispose } = await setup();
  await t.step("discover", async () => {
    const found = client.skills.discover({ tags: ["a"], categories: ["b"] });
    const req = await host.next();
    assertEnvelope(req, "skill/discover/req");
    assert.deepEqual([req.filter_tags, req.filter_categories], [["a"], ["b"]]);
    host.send("skill/discover/resp", {
      req_id: req.id,
      skills: [{ name: "sum", description: "Summarize" }],
    });
    const skills = await found;
    assert.equal(skills[0]?.name, "sum");
    assert.deepEqual(skills[0]?.inputSchema, {});
  });
  await t.step("call sends every field, no session_id", async () => {
    const call = client.skills.call("sum", { text: "hi" }, {
      timeout: 5000,
      llmOverride: { provider_name: "openai", provider_credentials: {} },
      metadata: { trace: "t1" },
    });
    const req = await host.next();
    assertEnvelope(req, "skill/call/req");
    assert.equal("session_id" in req, false);
    assert.deepEqual(
      [req.name, req.arguments, req.timeout, req.streaming, req.metadata],
      ["sum", { text: "hi" }, 5, true, { trace: "t1" }],
    );
    assert.deepEqual(req.llm_override, {
      provider_name: "openai",
      provider_credentials: {},
      provider_config: false,
      is_default: false,
    });
    host.send("skill/event", {
      req_id: req.id,
      kind: "llm.token",
      data: { text: "h" },
      seq: 0,
    });
    host.send("skill/call/resp", {
      req_id: req.id,
      name: "sum",
      data: { success: true, data: "short", duration_ms: 9 },
      error: null,
    });
    assert.equal((await call).data, "short");
    assert.deepEqual((await collect(call.events)).map((e) => e.kind), [
      "llm.token",
    ]);
  });
  await t.step(
    "call sends its correlation id and the override's own config",
    async () => {
      const call = client.skills.call("sum", {}, {
        timeout: 1200,
        correlationId: "triage-1",
        llmOverride: {
          provider_name: "anthropic",
          provider_credentials: { api_key: "k" },
          provider_config: { model: "m", max_tokens: 2048 },
        },
      });
      const req = await host.next();
      assert.equal(req.correlation_id, "triage-1");
      assert.equal(req.timeout, 2);
      assert.deepEqual(req.llm_override, {
        provider_name: "anthropic",
        provider_credentials: { api_key: "k" },
        provider_config: { model: "m", max_tokens: 2048 },
        is_default: false,
      });
      host.send("skill/call/resp", {
        req_id: req.id,
        name: "sum",
        data: { success: true, data: null },
      });
      await call;
    },
  );
  await t.step(
    "a response with data null becomes a failed result",
    async () => {
      const call = client.skills.call("sum", {});
      const req = await host.next();
      assert.equal(req.llm_override, null);
      assert.equal(req.timeout, 60);
      host.send("skill/call/resp", {
        req_id: req.id,
        name: "sum",
        data: null,
        error: { code: "max_turns_exceeded", message: "Too many turns" },
      });
      const result = await call;
      assert.equal(result.success, false);
      assert.equal(result.errorCode, "max_turns_exceeded");
      assert.equal(result.error, "Too many turns");
    },
  );
  await dispose();
});

Deno.test("request() sends any message type and returns the raw answer", async () => {
  const { host, client, dispose } = await setup();
  const call = client.request("planning/plan/req", { goal: "x" });
  const req = await host.next();
  assertEnvelope(req, "planning/plan/req");
  assert.equal(req.goal, "x");
  host.send("planning/plan/resp", { req_id: req.id, steps: [1] });
  const answer = await call;
  assert.equal(answer.type, "planning/plan/resp");
  assert.deepEqual(answer.steps, [1]);
  await dispose();
});

Deno.test("a host that floods a call with events costs the client a bounded replay", async () => {
  const { host, client, dispose } = await setup();
  const call = client.tools.call("flood", {});
  const req = await host.next();
  // 48 events of 1 MiB: a host that never stops would take it all.
  const big = "e".repeat(1024 * 1024);
  for (let seq = 0; seq < 48; seq++) {
    host.send("tool/event", {
      req_id: req.id,
      kind: "log",
      data: { message: big },
      seq,
    });
  }
  host.send("tool/call/resp", {
    req_id: req.id,
    data: okToolResult("flood", null),
  });
  await call;
  const kept = await collect(call.events);
  assert.ok(
    kept.length * big.length <= KEPT_CHARS,
    `${kept.length} events of 1 MiB kept`,
  );
  // The newest are the ones kept, in order.
  assert.equal(kept.at(-1)?.seq, 47);
  assert.ok(kept.every((e, i) => i === 0 || e.seq === kept[i - 1]!.seq + 1));
  await dispose();
});

/**
 * A host that accepts the WebSocket upgrade, answers the handshake when
 * `answer` is set, then goes silent: it never answers the close handshake
 * nor closes the TCP connection.
 */
function startDeafHost(answer: boolean) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const text = new TextEncoder();
  const serve = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    const n = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]!;
    const digest = await crypto.subtle.digest(
      "SHA-1",
      text.encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await conn.write(text.encode(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
        `Connection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    ));
    // The client's first frame is its handshake: masked, under 64 KiB.
    const got = await conn.read(buf);
    if (answer && got !== null) {
      const short = buf[1]! & 0x7f;
      const at = short === 126 ? 4 : 2;
      const length = short === 126 ? (buf[2]! << 8) | buf[3]! : short;
      const mask = buf.subarray(at, at + 4);
      const payload = buf.slice(at + 4, at + 4 + length)
        .map((b, i) => b ^ mask[i % 4]!);
      const request = JSON.parse(new TextDecoder().decode(payload));
      const reply = text.encode(JSON.stringify({
        type: "handshake/resp",
        id: "5e55105e55105e55105e55105e55105f",
        version: "1.0",
        ts: Date.now() / 1000,
        req_id: request.id,
        session_id: "5e55105e55105e55105e55105e55105e",
        accepted_caps: [{ capability: "tools", enabled: true, metadata: {} }],
        max_parallel: 4,
        ok: true,
        reason: "",
      }));
      await conn.write(
        new Uint8Array([0x81, 126, reply.length >> 8, reply.length & 0xff]),
      );
      await conn.write(reply);
    }
    // Reads and drops whatever comes, the close frame included.
    while (await conn.read(buf) !== null) { /* silent */ }
  };
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      serve(conn).catch(() => {});
    }
  })().catch(() => {});
  return {
    url: `ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/a2e`,
    close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

// Rejects after `ms`: a bound on a wait for an event, not a timing assertion.
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still pending`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("a host that goes silent holds connect() and close() no longer than the timeout", async (t) => {
  await t.step("connect() whose handshake gets no answer", async () => {
    const host = startDeafHost(false);
    try {
      await within(
        assert.rejects(
          connect(host.url, { timeout: 200 }),
          (error: unknown) => error instanceof TimeoutError,
        ),
        10_000,
        "connect()",
      );
    } finally {
      host.close();
    }
  });
  await t.step(
    "a call made while the close goes unanswered fails at once",
    async () => {
      const host = startDeafHost(true);
      const client = await connect(host.url, { timeout: 60_000 });
      const closing = client.close();
      let error: unknown;
      try {
        // The socket is closing, not closed: the call must not wait for it.
        error = await within(
          client.ping().then(() => undefined, (error: unknown) => error),
          10_000,
          "ping() after close()",
        );
      } finally {
        host.close(); // drops the connection, which ends the close
        await closing;
      }
      assert.ok(error instanceof ConnectionClosedError, String(error));
      assert.equal(error.closeCode, 1000);
      assert.match(
        error.message,
        /^Cannot ping: connection closed .*client closed$/,
      );
    },
  );
  await t.step("close() the host never answers", async () => {
    const host = startDeafHost(true);
    try {
      const client = await connect(host.url, { timeout: 200 });
      const pending = client.tools.call("x", {}, { timeout: 60 });
      const info = await within(client.close(), 10_000, "close()");
      assert.equal(info.code, 1006);
      await assert.rejects(pending, ConnectionClosedError);
    } finally {
      host.close();
    }
  });
});
