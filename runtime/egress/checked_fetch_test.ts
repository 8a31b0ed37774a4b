import assert from "node:assert/strict";
import { EgressBroker } from "./broker.ts";
import { checkedFetch } from "./checked_fetch.ts";

// A loopback server: /mcp streams two SSE events, /hop redirects within the
// origin, /away redirects to another origin. It records the headers seen.
async function withServer(
  body: (port: number, seen: Headers[]) => Promise<void>,
) {
  const seen: Headers[] = [];
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req): Promise<Response> => {
      seen.push(req.headers);
      const path = new URL(req.url).pathname;
      if (path === "/hop") {
        return Response.redirect(new URL("/mcp", req.url), 307);
      }
      if (path === "/away") {
        return Response.redirect(
          `http://127.0.0.2:${server.addr.port}/mcp`,
          307,
        );
      }
      const text = await req.text();
      return new Response(
        `data: ${
          JSON.stringify({ method: req.method, text })
        }\n\ndata: end\n\n`,
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  try {
    await body(server.addr.port, seen);
  } finally {
    await server.shutdown();
  }
}

// Maps the made-up name to loopback, as a hostile DNS answer would.
const resolve = () => Promise.resolve(["127.0.0.1"]);

Deno.test("checkedFetch() refuses a name that resolves to loopback unless the operator allows it by name", async () => {
  await withServer(async (port, seen) => {
    const url = new URL(`http://mcp.example:${port}/mcp`);
    const refused = checkedFetch(new EgressBroker({ resolve }), {
      origin: url,
    });
    await assert.rejects(
      refused(url, { method: "POST", body: "{}" }),
      /resolves to 127\.0\.0\.1, which is not a public address/,
    );
    // Allowing the address does not allow the name.
    const byAddress = checkedFetch(
      new EgressBroker({ resolve, privateHosts: ["127.0.0.1"] }),
      { origin: url },
    );
    await assert.rejects(byAddress(url), /not a public address/);
    assert.equal(seen.length, 0);

    const allowed = checkedFetch(
      new EgressBroker({ resolve, privateHosts: ["mcp.example"] }),
      { origin: url },
    );
    const res = await allowed(url, {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: '{"a":1}',
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const text = await res.text();
    assert.match(text, /"method":"POST"/);
    assert.match(text, /data: end/);
    assert.equal(seen[0]?.get("x-api-key"), "k");
    assert.equal(seen[0]?.get("host"), `mcp.example:${port}`);
  });
});

Deno.test("checkedFetch() follows redirects within the server's origin only, and never sends its headers elsewhere", async () => {
  await withServer(async (port, seen) => {
    const broker = new EgressBroker({
      privateHosts: ["127.0.0.1", "127.0.0.2"],
    });
    const base = new URL(`http://127.0.0.1:${port}/mcp`);
    const fetch = checkedFetch(broker, { origin: base });
    const hop = await fetch(new URL("/hop", base), {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: "{}",
    });
    assert.match(await hop.text(), /"method":"POST","text":"{}"/);
    assert.equal(seen.length, 2);
    await assert.rejects(
      fetch(new URL("/away", base), { headers: { "x-api-key": "k" } }),
      /Refusing to send a request to "http:\/\/127\.0\.0\.2/,
    );
    assert.equal(seen.length, 3);
    await assert.rejects(
      fetch(new URL(`http://127.0.0.2:${port}/mcp`)),
      /Refusing/,
    );
    assert.equal(seen.length, 3);
  });
});

Deno.test("checkedFetch() refuses link-local and metadata addresses whatever the name", async () => {
  const url = new URL("http://metadata.example/latest");
  const fetch = checkedFetch(
    new EgressBroker({ resolve: () => Promise.resolve(["169.254.169.254"]) }),
    { origin: url },
  );
  await assert.rejects(fetch(url), /169\.254\.169\.254, which is not a public/);
});

Deno.test("checkedFetch() refuses a host outside its allow-lists before any connection", async () => {
  await withServer(async (port, seen) => {
    const url = new URL(`http://mcp.example:${port}/mcp`);
    const broker = new EgressBroker({ resolve, privateHosts: ["mcp.example"] });
    const fetch = checkedFetch(broker, {
      origin: url,
      allow: [["other.example"]],
    });
    await assert.rejects(fetch(url), /Host "mcp\.example:\d+" is not allowed/);
    assert.equal(seen.length, 0);
    const allowed = checkedFetch(broker, {
      origin: url,
      allow: [["mcp.example"]],
    });
    assert.equal((await allowed(url)).status, 200);
  });
});
