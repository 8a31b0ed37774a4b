import assert from "node:assert/strict";
import { Hono } from "hono";
import { httpApp, listener, mcpFirst } from "./host_http.ts";
import { createMcpHttp } from "./mcp/http.ts";
import { Dispatcher } from "./dispatcher.ts";
import { defaultConfig } from "./config.ts";
import { Session } from "./session.ts";
import type { OpenSessionOptions } from "./transports/transport_context.ts";
import { initializeRequest } from "../tests/support/mcp_fixtures.ts";

Deno.test("httpApp answers 500 and logs when a route throws", async () => {
  const operator = new Hono();
  operator.get("/boom", () => {
    throw new Error("kaput");
  });
  const lines: string[] = [];
  const app = httpApp({
    context: {} as never,
    sse: { app: new Hono() } as never,
    mcp: {} as never,
    operator: { app: operator },
    sessions: new Set(),
    startedAt: performance.now(),
    log: (line) => lines.push(line),
  });
  const response = await app.fetch(new Request("http://x/boom"));
  assert.equal(response.status, 500);
  assert.deepEqual(await response.json(), { error: "Internal error" });
  assert.deepEqual(lines, ["Cannot handle GET /boom: kaput"]);
});

Deno.test("listener listens once, on the port it was told, and shuts down", async () => {
  const server = listener(
    { hostname: "127.0.0.1", port: 1 },
    () => new Response("ok"),
  );
  const address = await server.listen({ port: 0 });
  assert.equal(address.hostname, "127.0.0.1");
  assert.ok(address.port > 0);
  assert.equal(address.url, `http://127.0.0.1:${address.port}`);
  assert.equal(await (await fetch(address.url)).text(), "ok");
  await assert.rejects(server.listen(), /already listening/);
  await server.shutdown();
  await assert.rejects(fetch(address.url));
});

Deno.test("listener shuts down cleanly when it never listened", async () => {
  const server = listener(
    { hostname: "127.0.0.1", port: 0 },
    () => new Response(),
  );
  assert.equal(await server.shutdown(), undefined);
});

// The host's app around an MCP endpoint.
function hostApp(mcp: { handle(request: Request): Promise<Response> }) {
  const lines: string[] = [];
  const app = httpApp({
    context: {} as never,
    sse: { app: new Hono() } as never,
    mcp: mcp as never,
    operator: { app: new Hono() },
    sessions: new Set(),
    startedAt: performance.now(),
    log: (line) => lines.push(line),
  });
  const log = (line: string) => lines.push(line);
  return { app, handle: mcpFirst(app, { mcp, log }), lines };
}

async function seen(response: Response) {
  return {
    status: response.status,
    headers: [...response.headers],
    body: await response.text(),
  };
}

Deno.test("mcpFirst answers every request to /mcp as the Hono route does", async () => {
  const open = (o: OpenSessionOptions) =>
    new Session({ send: o.send, transport: o.transport });
  const mcp = createMcpHttp({
    dispatcher: new Dispatcher({ maxMessageBytes: 256 }),
    limits: defaultConfig().limits,
    admitSession: open,
    log() {},
  }, { tokens: ["t"] });
  const { app, handle } = hostApp(mcp);
  const json = { "content-type": "application/json" };
  const accept = "application/json, text/event-stream";
  const token = { ...json, accept, authorization: "Bearer t" };
  const session: Record<string, string> = {};
  const initialize = JSON.stringify(initializeRequest("c"));
  // A session opened each way: alike but for its id.
  const opened = [];
  for (const fetch of [app.fetch, handle]) {
    const response = await fetch(
      new Request("http://x/mcp", {
        method: "POST",
        headers: token,
        body: initialize,
      }),
    );
    const id = response.headers.get("mcp-session-id");
    assert.ok(id);
    const answer = await seen(response);
    answer.headers = answer.headers.filter(([name]) =>
      name !== "mcp-session-id"
    );
    opened.push(answer);
    if (fetch === handle) {
      await (await handle(
        new Request("http://x/mcp", {
          method: "POST",
          headers: { ...token, "mcp-session-id": id },
          body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        }),
      )).body?.cancel();
      Object.assign(session, token, { "mcp-session-id": id });
    }
  }
  assert.equal(opened[0]?.status, 200);
  assert.deepEqual(opened[1], opened[0]);
  const requests: [string, string, RequestInit][] = [
    ["no token", "/mcp", { method: "POST", headers: json, body: "{}" }],
    ["a wrong token", "/mcp", {
      method: "POST",
      headers: { ...json, authorization: "Bearer nope" },
      body: "{}",
    }],
    ["a body over the cap", "/mcp", {
      method: "POST",
      headers: session,
      body: JSON.stringify({ pad: "x".repeat(300) }),
    }],
    ["malformed JSON", "/mcp", { method: "POST", headers: session, body: "{" }],
    ["a ping", "/mcp", {
      method: "POST",
      headers: session,
      body: '{"jsonrpc":"2.0","id":2,"method":"ping"}',
    }],
    ["a batch", "/mcp", {
      method: "POST",
      headers: session,
      body: '[{"jsonrpc":"2.0","id":3,"method":"ping"}]',
    }],
    ["an unknown method", "/mcp", {
      method: "POST",
      headers: session,
      body: '{"jsonrpc":"2.0","id":4,"method":"nope"}',
    }],
    ["PUT to the session", "/mcp", {
      method: "PUT",
      headers: session,
      body: "{}",
    }],
    ["the session without its token", "/mcp", {
      method: "POST",
      headers: { ...session, authorization: "Bearer nope" },
      body: '{"jsonrpc":"2.0","id":6,"method":"ping"}',
    }],
    ["a query string", "/mcp?x=1", { method: "POST", headers: json }],
    ["GET without a session", "/mcp", { headers: token }],
    ["HEAD", "/mcp", { method: "HEAD", headers: token }],
    ["PUT", "/mcp", { method: "PUT", headers: token, body: "{}" }],
    ["DELETE of an unknown session", "/mcp", {
      method: "DELETE",
      headers: { ...token, "mcp-session-id": "nope" },
    }],
    ["a session of no one", "/mcp", {
      method: "POST",
      headers: { ...token, "mcp-session-id": "nope" },
      body: initialize,
    }],
    ["a trailing slash", "/mcp/", { method: "POST", headers: json }],
    ["an encoded path", "/%6Dcp", { method: "POST", headers: json }],
    ["another path", "/mcpx", { method: "POST", headers: json }],
  ];
  for (const [what, path, init] of requests) {
    const url = `http://x${path}`;
    const viaHono = await seen(await app.fetch(new Request(url, init)));
    const direct = await seen(await handle(new Request(url, init)));
    assert.deepEqual(direct, viaHono, what);
  }
  await mcp.close();
});

Deno.test("mcpFirst answers 500 and logs when the MCP endpoint fails, as the Hono route does", async () => {
  for (const fails of ["rejects", "throws"]) {
    const mcp = {
      handle(): Promise<Response> {
        if (fails === "throws") throw new Error("kaput");
        return Promise.reject(new Error("kaput"));
      },
    };
    for (const method of ["POST", "DELETE"]) {
      const { app, handle, lines } = hostApp(mcp);
      const request = () => new Request("http://x/mcp", { method });
      const viaHono = await seen(await app.fetch(request()));
      const direct = await seen(await handle(request()));
      assert.equal(direct.status, 500);
      assert.deepEqual(direct, viaHono);
      assert.deepEqual(lines, [
        `Cannot handle ${method} /mcp: kaput`,
        `Cannot handle ${method} /mcp: kaput`,
      ]);
    }
  }
});
