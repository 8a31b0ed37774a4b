import assert from "node:assert/strict";
import { Hono } from "hono";
import { httpApp, listener } from "./host_http.ts";

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
