import assert from "node:assert/strict";
import { rawHttp, thinStdio } from "./_mcp_clients.ts";

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

Deno.test("the thin stdio client skips notifications and reads answers longer than its buffer", async () => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/server.ts`;
  // Answers each request after a notification; the "big" tool's answer is
  // 200 KB of non-ASCII text, split over many reads.
  await Deno.writeTextFile(
    script,
    `const decoder = new TextDecoder();
     const encoder = new TextEncoder();
     let pending = "";
     const buf = new Uint8Array(65536);
     const out = (m) => { const b = encoder.encode(JSON.stringify(m) + "\\n");
       for (let at = 0; at < b.length;) at += Deno.stdout.writeSync(b.subarray(at)); };
     for (let n; (n = await Deno.stdin.read(buf)) !== null;) {
       pending += decoder.decode(buf.subarray(0, n), { stream: true });
       let end;
       while ((end = pending.indexOf("\\n")) >= 0) {
         const m = JSON.parse(pending.slice(0, end));
         pending = pending.slice(end + 1);
         if (m.id === undefined) continue;
         out({ jsonrpc: "2.0", method: "notifications/message", params: {} });
         const big = m.params?.name === "big";
         out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text",
           text: big ? "é".repeat(100000) : "ok" }] } });
       }
     }`,
  );
  const client = await thinStdio({
    command: Deno.execPath(),
    args: ["run", "--quiet", script],
  });
  try {
    await client.call("echo", {});
    await client.call("big", {});
    for (let i = 0; i < 10; i++) await client.call("echo", { i });
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
