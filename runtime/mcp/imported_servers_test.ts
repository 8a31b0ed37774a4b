import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  createImportedServers,
  DEFAULT_BACKOFF,
  MCP_PATH_PREFIX,
  serverModule,
  ServerSlot,
} from "./imported_servers.ts";
import { createToolCaller, ToolCallHooks } from "../tools/call.ts";
import { createToolkitConfigs } from "../toolkits/configs.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import { MAX_MESSAGE_CHARS } from "../../protocol/sandbox/pipe.ts";
import { settlesWithin } from "../deadline.ts";
import { rawServer } from "../../tests/support/raw_mcp_server.ts";

// Only its identity matters to the slot.
const clientA = {} as Client;
const clientB = {} as Client;
const exact = { random: () => 0 };

Deno.test("ServerSlot backs off failed starts from 1 s, doubling up to 5 min, and never past the cap", () => {
  const slot = new ServerSlot("s", { command: "x" }, exact);
  assert.equal(slot.reason, "starting");
  assert.ok(slot.waitMs(0) <= 0, "the first start is not delayed");
  const waits: number[] = [];
  for (let i = 0; i < 12; i++) {
    slot.failed("boom", 1_000);
    waits.push(slot.waitMs(1_000));
  }
  assert.deepEqual(waits, [
    1_000,
    2_000,
    4_000,
    8_000,
    16_000,
    32_000,
    64_000,
    128_000,
    256_000,
    300_000,
    300_000,
    300_000,
  ]);
  // Down: neither running nor starting.
  assert.equal(slot.client, null);
  assert.equal(slot.starting, null);
});

Deno.test("ServerSlot's jitter only shortens a wait, by at most a fifth", () => {
  for (const r of [0, 0.5, 0.999]) {
    const slot = new ServerSlot("s", { command: "x" }, { random: () => r });
    for (let i = 0; i < 20; i++) slot.failed("boom", 0);
    const wait = slot.waitMs(0);
    assert.ok(wait <= DEFAULT_BACKOFF.maxMs, `${wait}`);
    assert.ok(wait >= DEFAULT_BACKOFF.maxMs * 0.8, `${wait}`);
  }
});

Deno.test("ServerSlot.exited() restarts a crashed server at once, but backs off a second early crash", () => {
  const backoff = { initialMs: 100, maxMs: 1_000, stableMs: 10_000 };
  const slot = new ServerSlot("s", { url: "http://x" }, { ...exact, backoff });
  slot.started(clientB, 0);
  assert.equal(slot.exited(clientA, "old one", 5), false);
  assert.equal(slot.client, clientB);
  assert.equal(slot.reason, "");
  assert.equal(slot.exited(clientB, "the server exited", 5), true);
  assert.equal(slot.client, null);
  assert.equal(slot.reason, "the server exited");
  assert.ok(slot.waitMs(5) <= 0, "the first crash restarts at once");
  slot.started(clientA, 10);
  slot.exited(clientA, "again", 20);
  assert.equal(slot.waitMs(20), 200, "an early second crash backs off");
  slot.started(clientB, 300);
  slot.exited(clientB, "after a long run", 300 + 10_000);
  assert.ok(slot.waitMs(10_300) <= 0, "a stable run forgets the failures");
});

Deno.test("ServerSlot scrubs its entry's env and header values from every reason it keeps", () => {
  const stdio = new ServerSlot("s", {
    command: "x",
    env: { TOKEN: "env-secret-1" },
  });
  stdio.failed("exited (stderr: TOKEN=env-secret-1)", 0);
  assert.equal(stdio.reason, "exited (stderr: TOKEN=[redacted])");
  stdio.started(clientA, 0);
  stdio.exited(clientA, "the server exited (stderr: env-secret-1)", 0);
  assert.equal(stdio.reason, "the server exited (stderr: [redacted])");
  const url = new ServerSlot("u", {
    url: "https://x.test/mcp",
    headers: { authorization: "Bearer hdr-secret-2" },
  });
  url.failed("HTTP 401: bad token hdr-secret-2", 0);
  assert.equal(url.reason, "HTTP 401: bad token [redacted]");
});

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

Deno.test("the imported servers run a call on the server its path names, and fail one naming no server", async () => {
  const servers = createImportedServers({ servers: {} });
  const call = {
    path: `${MCP_PATH_PREFIX}none`,
    export: "t",
    version: "",
    args: {},
    grant: {},
    timeoutMs: 100,
    sessionId: "s",
    callId: "c",
    config: {},
    metadata: {},
    isolation: "warm" as const,
  };
  const request = {
    name: "none__t",
    args: {},
    signal: new AbortController().signal,
    onEvent() {},
    session: {
      id: "s",
      token: "",
      state: new Map(),
      send() {},
      signal: new AbortController().signal,
    },
  };
  const sandbox = {
    call: () => Promise.reject(new Error("not the sandbox")),
    resolvePermissions: () => Promise.resolve({}),
  };
  const caller = createToolCaller({
    registry: { snapshot: buildSnapshot([]) },
    configs: createToolkitConfigs(),
    sandbox,
  });
  const outcome = await servers.run({
    call,
    hooks: new ToolCallHooks(request, [], 10),
    request,
    caller,
    sandbox,
  });
  assert.equal(outcome.ok, false);
  assert.match(
    (outcome as { message: string }).message,
    /Unknown MCP server "none"/,
  );
  await servers.close();
});

Deno.test("a call aborted while its server is still starting fails at once, without waiting for the start", async () => {
  // A "server" that never answers initialize: its start waits out the bound.
  const servers = createImportedServers({
    servers: { slow: { command: "sleep", args: ["600"] } },
    startTimeoutMs: 600_000,
    confinement: () =>
      Promise.resolve({
        mode: "off" as const,
        active: false,
        reason: "off",
        layout: null,
      }),
  });
  const controller = new AbortController();
  const answer = servers.call("slow", "t", {}, {
    timeoutMs: 600_000,
    signal: controller.signal,
    onEvent() {},
  });
  controller.abort();
  const outcome = await answer;
  assert.deepEqual(
    servers.starting(),
    ["slow"],
    "the start is still under way",
  );
  assert.equal(outcome.ok, false);
  assert.match(
    (outcome as { message: string }).message,
    /MCP server "slow" is still starting/,
  );
  await servers.close();
});

Deno.test("a server that fails to start is logged as failed only once the registry lists it down", async () => {
  // Clients that act on the log line (or a test waiting for it) must find
  // the reason in the toolkit list, as "ready" waits for its tools.
  let reloaded = 0;
  const lines: string[] = [];
  let release!: () => void;
  const reloading = new Promise<void>((resolve) => release = resolve);
  const asked = Promise.withResolvers<void>();
  const servers = createImportedServers({
    servers: { ghost: { command: "/nonexistent/ghost" } },
    log: (line) => lines.push(line),
    onChange: async () => {
      asked.resolve();
      await reloading;
      reloaded++;
    },
    confinement: () =>
      Promise.resolve({
        mode: "off" as const,
        active: false,
        reason: "off",
        layout: null,
      }),
  });
  const started = servers.start();
  // The registry is reloading: no line says it failed yet.
  await asked.promise;
  assert.deepEqual(
    lines.filter((l) => l.includes('"ghost" failed')),
    [],
    "logged before the registry listed it down",
  );
  release();
  await started;
  assert.equal(reloaded, 1);
  assert.equal(lines.filter((l) => l.includes('"ghost" failed')).length, 1);
  await servers.close();
});

// The raw server's one tool, "t".
const TOOL_T = { name: "t", inputSchema: { type: "object" } };

const SECRET = "env-secret-5e1f0a";
const UNCONFINED = () =>
  Promise.resolve({
    mode: "off" as const,
    active: false,
    reason: "off in this test",
    layout: null,
  });

Deno.test("a server's secret in a text resource it answers is scrubbed before the resource is encoded", async () => {
  await using raw = await rawServer({
    listings: [[TOOL_T]],
    result: {
      content: [{
        type: "resource",
        resource: { uri: "test://dump.txt", text: `key=${SECRET}` },
      }],
    },
  }, { SECRET });
  const servers = createImportedServers({
    servers: { kit: raw.spec },
    confinement: UNCONFINED,
  });
  try {
    const events: Record<string, unknown>[] = [];
    const outcome = await servers.call("kit", "t", {}, {
      timeoutMs: 30_000,
      onEvent: (_kind, data) => events.push(data),
    });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(events.length, 1);
    // Before: the text was made base64 first, and the scrub saw no secret.
    const text = new TextDecoder().decode(
      Uint8Array.fromBase64(String(events[0]!.chunk)),
    );
    assert.equal(text, "key=[redacted]");
  } finally {
    await servers.close();
  }
});

Deno.test("an HTTP server's flood of pings holds at most 16 of the host's connections", async () => {
  // Each ping's answer is a POST of its own; the server holds every one.
  let held = 0;
  const waiting: (() => void)[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const message = await request.json();
      const json = (result: unknown) =>
        Response.json({ jsonrpc: "2.0", id: message.id, result }, {
          headers: { "mcp-session-id": "s" },
        });
      if (message.method === undefined) {
        held++;
        return await new Promise<Response>((resolve) =>
          waiting.push(() => resolve(new Response(null, { status: 202 })))
        );
      }
      if (message.id === undefined) return new Response(null, { status: 202 });
      switch (message.method) {
        case "initialize":
          return json({
            protocolVersion: message.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "pings", version: "1" },
          });
        case "tools/list": {
          const event = (m: unknown) =>
            `event: message\ndata: ${JSON.stringify(m)}\n\n`;
          const pings = Array.from(
            { length: 500 },
            (_, i) => event({ jsonrpc: "2.0", id: `p${i}`, method: "ping" }),
          );
          const tools = [{ name: "t", inputSchema: { type: "object" } }];
          return new Response(
            pings.join("") +
              event({ jsonrpc: "2.0", id: message.id, result: { tools } }),
            { headers: { "content-type": "text/event-stream" } },
          );
        }
      }
      return json({ content: [{ type: "text", text: "done" }] });
    },
  );
  const servers = createImportedServers({
    servers: { pings: { url: `http://127.0.0.1:${server.addr.port}/mcp` } },
    egress: { checkTarget: () => Promise.resolve("127.0.0.1") },
  });
  try {
    await servers.start();
    // The pings came before the listing's result: their answers were all
    // sent, or refused, before this call.
    for (let i = 0; i < 3; i++) {
      const outcome = await servers.call("pings", "t", {}, {
        timeoutMs: 30_000,
        onEvent() {},
      });
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
    }
    // Before: all 500 POSTs, and as many sockets, held for 10 minutes.
    assert.ok(held <= 16, `${held} answers held`);
  } finally {
    for (const release of waiting) release();
    await servers.close();
    await server.shutdown();
  }
});

Deno.test("a server's error messages are cut as a sandbox tool's are, after its secrets are scrubbed", async (t) => {
  // The secret straddles the cut: scrubbed first, no part of it is left.
  const said = `${"x".repeat(MAX_MESSAGE_CHARS - 60)} ${SECRET} ${
    "y".repeat(1 << 20)
  }`;
  await t.step("a call's JSON-RPC error", async () => {
    await using raw = await rawServer({
      listings: [[TOOL_T]],
      errors: { "tools/call": said },
    }, { SECRET });
    const servers = createImportedServers({
      servers: { kit: raw.spec },
      confinement: UNCONFINED,
    });
    try {
      const outcome = await servers.call("kit", "t", {}, {
        timeoutMs: 30_000,
        onEvent() {},
      });
      assert.equal(outcome.ok, false);
      const { message } = outcome as { message: string };
      // Before: all 1 MiB of it.
      assert.ok(message.length <= MAX_MESSAGE_CHARS, `${message.length}`);
      assert.match(message, /\[redacted\]/);
    } finally {
      await servers.close();
    }
  });
  await t.step(
    "a start's error, kept as why the server is unavailable",
    async () => {
      await using raw = await rawServer({ errors: { initialize: said } }, {
        SECRET,
      });
      const servers = createImportedServers({
        servers: { kit: raw.spec },
        confinement: UNCONFINED,
      });
      try {
        await servers.start();
        const kit = servers.modules()[0]!.module.definitions[0]!;
        const description = String(kit.fields.description);
        // Before: listed to every client, 1 MiB long.
        assert.ok(
          description.length <= MAX_MESSAGE_CHARS + 100,
          `${description.length}`,
        );
        assert.match(description, /\[redacted\]/);
      } finally {
        await servers.close();
      }
    },
  );
});

Deno.test("a server's tools are listed again within its entry's start timeout, not the host's", async () => {
  await using raw = await rawServer({
    // Listed again (after a call, with a tool more), it answers late.
    listings: [[TOOL_T], [TOOL_T, { ...TOOL_T, name: "u" }]],
    relistDelayMs: 1000,
    notifyAfter: ["call"],
  });
  const changed = Promise.withResolvers<void>();
  let started = false;
  const servers = createImportedServers({
    servers: { kit: { ...raw.spec, startTimeoutMs: 30_000 } },
    // The host's default is shorter than the second listing takes.
    startTimeoutMs: 200,
    confinement: UNCONFINED,
    onChange: () => {
      if (started) changed.resolve();
    },
  });
  try {
    await servers.start();
    started = true;
    const outcome = await servers.call("kit", "t", {}, {
      timeoutMs: 30_000,
      onEvent() {},
    });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    // Before: the listing timed out after 200 ms, and "u" never came.
    assert.ok(await settlesWithin(changed.promise, 10_000), "not listed again");
    const names = servers.modules()[0]!.module.definitions.map((d) => d.name);
    assert.deepEqual(names, ["kit", "kit__t", "kit__u"]);
  } finally {
    await servers.close();
  }
});

Deno.test("a server alternating two listings with list_changed is listed again once per spacing", async () => {
  await using raw = await rawServer({
    // Each listing differs from the one before, and says it changed.
    listings: [[TOOL_T], [TOOL_T, { ...TOOL_T, name: "u" }]],
    notifyAfter: ["call", "relist"],
  });
  // The pauses between listings, driven here.
  const pending = new Set<{ fn: () => void; ms: number }>();
  let paused = Promise.withResolvers<void>();
  const timers = {
    set(fn: () => void, ms: number) {
      const timer = { fn, ms };
      pending.add(timer);
      paused.resolve();
      return timer;
    },
    clear: (timer: unknown) => pending.delete(timer as never),
  };
  let changes = 0;
  const servers = createImportedServers({
    servers: { kit: raw.spec },
    confinement: UNCONFINED,
    timers,
    onChange: () => void changes++,
  });
  const tools = () =>
    servers.modules()[0]!.module.definitions.map((d) => d.name).join();
  try {
    await servers.start();
    assert.equal(changes, 1);
    await servers.call("kit", "t", {}, { timeoutMs: 30_000, onEvent() {} });
    for (
      const listed of ["kit,kit__t,kit__u", "kit,kit__t", "kit,kit__t,kit__u"]
    ) {
      // Before: no pause, and the server was listed back to back for ever.
      assert.ok(await settlesWithin(paused.promise, 10_000), "no pause");
      assert.equal(tools(), listed);
      assert.equal(pending.size, 1);
      const [timer] = pending;
      assert.equal(timer!.ms, 1000);
      paused = Promise.withResolvers<void>();
      pending.delete(timer!);
      timer!.fn();
    }
    assert.ok(await settlesWithin(paused.promise, 10_000), "no pause");
    assert.equal(changes, 5);
  } finally {
    await servers.close();
  }
});

Deno.test("a listing that changes while a server starts is not lost to the start's older one", async () => {
  await using raw = await rawServer({
    // Listed once, it says its tools changed, and answers for its skills
    // only once it has been listed again: the relist ends mid-start.
    listings: [[TOOL_T], [TOOL_T, { ...TOOL_T, name: "u" }]],
    notifyAfter: ["list"],
    skillsAfterRelist: true,
  });
  const servers = createImportedServers({
    servers: { kit: raw.spec },
    confinement: UNCONFINED,
  });
  try {
    await servers.start();
    const names = servers.modules()[0]!.module.definitions.map((d) => d.name);
    // Before: the start's first listing overwrote the relist's, and "u"
    // was never listed.
    assert.deepEqual(names, ["kit", "kit__t", "kit__u"]);
  } finally {
    await servers.close();
  }
});

Deno.test("a read of a server's skill file, cancelled, is cancelled on the server", async () => {
  const md = "---\nname: a\ndescription: A\n---\nA\n";
  const digest = async (text: string) =>
    `sha256:${
      new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
      ).toHex()
    }`;
  const skill = {
    uri: "skill://a/SKILL.md",
    frontmatter: { name: "a", description: "A" },
    resources: [
      { uri: "skill://a/SKILL.md", digest: await digest(md), size: md.length },
      { uri: "skill://a/ref.md", digest: await digest("r"), size: 1 },
    ],
  };
  // The request id of its read of ref.md, which it never answers, and the
  // one its cancellation names.
  const asked = Promise.withResolvers<unknown>();
  const cancelled = Promise.withResolvers<unknown>();
  const held: (() => void)[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const message = await request.json();
      const json = (result: unknown) =>
        Response.json({ jsonrpc: "2.0", id: message.id, result }, {
          headers: { "mcp-session-id": "s" },
        });
      if (message.method === "notifications/cancelled") {
        cancelled.resolve(message.params.requestId);
      }
      if (message.id === undefined) return new Response(null, { status: 202 });
      switch (message.method) {
        case "initialize":
          return json({
            protocolVersion: message.params.protocolVersion,
            capabilities: {
              tools: {},
              resources: {},
              extensions: { "io.modelcontextprotocol/skills": {} },
            },
            serverInfo: { name: "slow", version: "1" },
          });
        case "tools/list":
          return json({ tools: [] });
        case "skills/list":
          return json({ skills: [skill] });
        case "resources/read": {
          const uri = message.params.uri;
          if (uri === skill.uri) return json({ contents: [{ uri, text: md }] });
          asked.resolve(message.id);
          return await new Promise<Response>((resolve) =>
            held.push(() => resolve(new Response(null, { status: 202 })))
          );
        }
      }
      return json({});
    },
  );
  const servers = createImportedServers({
    servers: {
      slow: {
        url: `http://127.0.0.1:${server.addr.port}/mcp`,
        startTimeoutMs: 5_000,
      },
    },
    egress: { checkTarget: () => Promise.resolve("127.0.0.1") },
  });
  try {
    await servers.start();
    const [remote] = servers.remoteSkills();
    assert.equal(remote?.name, "slow__a");
    const cancel = new AbortController();
    const read = remote!.read("skill://a/ref.md", cancel.signal);
    read.catch(() => {});
    const id = await asked.promise;
    cancel.abort(new Error("the client gave up"));
    // Before: no signal reached the SDK; the read ran on to its timeout,
    // and the server was never told.
    await assert.rejects(read, /the client gave up/);
    assert.ok(
      await settlesWithin(cancelled.promise, 5_000),
      "the server got no notifications/cancelled",
    );
    assert.equal(await cancelled.promise, id);
  } finally {
    for (const release of held) release();
    await servers.close();
    await server.shutdown();
  }
});

Deno.test("a list_changed owed while a relisting fails is listed after it", async () => {
  // Its second listing says its tools changed, then fails; the third
  // lists a tool more. A call's answer says they changed first.
  const event = (m: unknown) =>
    `event: message\ndata: ${JSON.stringify(m)}\n\n`;
  const changed = {
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
  };
  const tool = (name: string) => ({ name, inputSchema: { type: "object" } });
  let lists = 0;
  const third = Promise.withResolvers<void>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const message = await request.json();
      if (message.id === undefined) return new Response(null, { status: 202 });
      const sse = (...messages: unknown[]) =>
        new Response(messages.map(event).join(""), {
          headers: { "content-type": "text/event-stream" },
        });
      const result = (result: unknown) =>
        sse({ jsonrpc: "2.0", id: message.id, result });
      switch (message.method) {
        case "initialize":
          return Response.json({
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: message.params.protocolVersion,
              capabilities: { tools: { listChanged: true } },
              serverInfo: { name: "flaky", version: "1" },
            },
          }, { headers: { "mcp-session-id": "s" } });
        case "tools/list":
          lists++;
          if (lists === 1) return result({ tools: [tool("t")] });
          if (lists === 2) {
            return sse(changed, {
              jsonrpc: "2.0",
              id: message.id,
              error: { code: -32603, message: "Not now" },
            });
          }
          third.resolve();
          return result({ tools: [tool("t"), tool("u")] });
      }
      return sse(changed, {
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: "done" }] },
      });
    },
  );
  const servers = createImportedServers({
    servers: { flaky: { url: `http://127.0.0.1:${server.addr.port}/mcp` } },
    egress: { checkTarget: () => Promise.resolve("127.0.0.1") },
    // No pause between listings: the order of listings is the point.
    timers: {
      set: (fn) => setTimeout(fn, 0),
      clear: (handle) => clearTimeout(handle as number),
    },
  });
  try {
    await servers.start();
    const outcome = await servers.call("flaky", "t", {}, {
      timeoutMs: 30_000,
      onEvent() {},
    });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    // Before: the failed listing ended the relisting, and the list_changed
    // that came with it was owed nothing: "u" was never listed.
    assert.ok(await settlesWithin(third.promise, 10_000), "not listed again");
    assert.equal(lists, 3);
  } finally {
    await servers.close();
    await server.shutdown();
  }
});

Deno.test("a server's own error saying it timed out is its error, not the host's timeout", async () => {
  await using raw = await rawServer({
    listings: [[TOOL_T]],
    errors: { "tools/call": "The upstream API timed out" },
  });
  const servers = createImportedServers({
    servers: { kit: raw.spec },
    confinement: UNCONFINED,
  });
  try {
    const outcome = await servers.call("kit", "t", {}, {
      timeoutMs: 30_000,
      onEvent() {},
    });
    // Before: "timed out" anywhere made it the host's timeout, "after
    // 30000 ms", and the server's words were lost.
    assert.deepEqual(outcome, {
      ok: false,
      code: "tool_error",
      message: 'MCP server "kit": MCP error -32000: The upstream API timed out',
      retryable: true,
    });
  } finally {
    await servers.close();
  }
});
