import assert from "node:assert/strict";
import { rawHttp } from "./_mcp_clients.ts";

// A stand-in MCP endpoint: a session id on initialize, then JSON answers
// whose text is not ASCII (a length in bytes, not characters), or an error
// result for the tool named "fail".
function fakeServer(): { url: string; seen: string[]; close(): Promise<void> } {
  const seen: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method === "DELETE") return new Response(null);
      const message = await request.json();
      seen.push(request.headers.get("mcp-session-id") ?? "");
      if (message.method === "initialize") {
        return Response.json(
          { jsonrpc: "2.0", id: message.id, result: {} },
          { headers: { "mcp-session-id": "s1" } },
        );
      }
      if (message.id === undefined) {
        return new Response(null, { status: 202 });
      }
      const failed = message.params.name === "fail";
      return Response.json({
        jsonrpc: "2.0",
        id: message.id,
        result: {
          content: [{ type: "text", text: "héllo ✓ ".repeat(50) }],
          isError: failed,
        },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    seen,
    close: () => server.shutdown(),
  };
}

Deno.test("the raw HTTP client reads answers by their byte length, call after call on one connection", async () => {
  const server = fakeServer();
  const client = await rawHttp(server.url);
  try {
    for (let i = 0; i < 20; i++) await client.call("echo", { i });
    await assert.rejects(client.call("fail", {}), /MCP call failed/);
    await client.call("echo", { after: true });
    // Every call after initialize carried the session.
    assert.ok(
      server.seen.slice(1).every((id) => id === "s1"),
      server.seen.join(),
    );
    assert.equal(server.seen.length, 2 + 22);
  } finally {
    await client.close();
    await server.close();
  }
});
