import assert from "node:assert/strict";
import { dataOf, makeCtx } from "../_test_ctx.ts";
import { isAllowedHost, isPrivateHost, isPrivateIp } from "./_net.ts";
import httpRequest from "./http_request.ts";
import toolkit from "./toolkit.ts";

const SECRET = "s3cr3t-token-value-123";

/** A local server that echoes requests, redirects, and serves big/binary bodies. */
function startServer() {
  const seen: { authorization: string | null }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const url = new URL(req.url);
      seen.push({ authorization: req.headers.get("authorization") });
      switch (url.pathname) {
        case "/echo":
          return Response.json(
            {
              method: req.method,
              headers: Object.fromEntries(req.headers),
              body: await req.text(),
            },
            {
              headers: {
                "x-echo-auth": req.headers.get("authorization") ?? "",
              },
            },
          );
        case "/big":
          return new Response("x".repeat(10_000));
        case "/bin":
          return new Response(new Uint8Array([0, 1, 2, 255]), {
            headers: { "content-type": "application/octet-stream" },
          });
        case "/redirect":
          return new Response(null, {
            status: 302,
            headers: { location: "/echo" },
          });
        case "/redirect-away":
          return new Response(null, {
            status: 302,
            headers: { location: "http://elsewhere.example/" },
          });
        default:
          return new Response("not found", { status: 404 });
      }
    },
  );
  return { server, base: `http://127.0.0.1:${server.addr.port}`, seen };
}

const local = { allowed_hosts: ["127.0.0.1"], allow_private: true };

Deno.test("http_request against a local server", async (t) => {
  const { server, base, seen } = startServer();

  await t.step("GET returns status, headers and body", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/echo` }, makeCtx(local).ctx),
    );
    assert.equal(r.status, 200);
    assert.equal(r.body_encoding, "text");
    assert.equal(JSON.parse(r.body as string).method, "GET");
    assert.match(
      (r.headers as Record<string, string>)["content-type"]!,
      /json/,
    );
    const missing = dataOf(
      await httpRequest.run({ url: `${base}/nope` }, makeCtx(local).ctx),
    );
    assert.equal(missing.status, 404);
  });

  await t.step("POST json sends a JSON body", async () => {
    const r = dataOf(
      await httpRequest.run(
        {
          url: `${base}/echo`,
          method: "POST",
          json: { a: 1 },
          headers: { "x-k": "v" },
        },
        makeCtx(local).ctx,
      ),
    );
    const echoed = JSON.parse(r.body as string);
    assert.equal(echoed.method, "POST");
    assert.equal(echoed.body, '{"a":1}');
    assert.equal(echoed.headers["content-type"], "application/json");
    assert.equal(echoed.headers["x-k"], "v");
  });

  await t.step(
    "a secret default header is sent but never returned",
    async () => {
      const before = seen.length;
      const out = await httpRequest.run(
        { url: `${base}/echo` },
        makeCtx({ ...local, headers: { Authorization: `Bearer ${SECRET}` } })
          .ctx,
      );
      assert.equal(seen[before]?.authorization, `Bearer ${SECRET}`);
      const text = JSON.stringify(out);
      assert.ok(!text.includes(SECRET), "secret leaked into the result");
      assert.match(text, /\[REDACTED\]/);
    },
  );

  await t.step("the body is capped", async () => {
    const r = dataOf(
      await httpRequest.run(
        { url: `${base}/big` },
        makeCtx({ ...local, max_body_bytes: 100 }).ctx,
      ),
    );
    assert.equal((r.body as string).length, 100);
    assert.equal(r.truncated, true);
  });

  await t.step("binary bodies come back as base64", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/bin` }, makeCtx(local).ctx),
    );
    assert.equal(r.body_encoding, "base64");
    assert.equal(r.body, btoa(String.fromCharCode(0, 1, 2, 255)));
  });

  await t.step("redirects are followed only to allowed hosts", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/redirect` }, makeCtx(local).ctx),
    );
    assert.equal(r.status, 200);
    assert.equal(r.url, `${base}/echo`);
    const manual = dataOf(
      await httpRequest.run(
        { url: `${base}/redirect`, follow_redirects: false },
        makeCtx(local).ctx,
      ),
    );
    assert.equal(manual.status, 302);
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run({ url: `${base}/redirect-away` }, makeCtx(local).ctx),
        ),
      /Host "elsewhere.example" is not allowed/,
    );
  });

  await t.step("loopback is refused by default", async () => {
    for (const url of [`${base}/echo`, "http://localhost/", "http://[::1]/"]) {
      await assert.rejects(
        () =>
          Promise.resolve(
            httpRequest.run(
              { url },
              makeCtx({ allowed_hosts: ["127.0.0.1", "localhost", "[::1]"] })
                .ctx,
            ),
          ),
        /loopback or private address/,
        url,
      );
    }
  });

  await t.step("hosts outside allowed_hosts are refused", async () => {
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: "https://example.com/" },
            makeCtx({ allowed_hosts: ["api.example.com"] }).ctx,
          ),
        ),
      /Host "example.com" is not allowed: allowed hosts are "api.example.com"/,
    );
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run({ url: "https://x.test/" }, makeCtx({}).ctx),
        ),
      /not configured/,
    );
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: "file:///etc/passwd" },
            makeCtx({ allowed_hosts: ["*"] }).ctx,
          ),
        ),
      /Only http and https/,
    );
  });

  await t.step("an aborted call stops the request", async () => {
    const ac = new AbortController();
    ac.abort(new Error("timed out"));
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: `${base}/echo` },
            makeCtx(local, ac.signal).ctx,
          ),
        ),
      /timed out/,
    );
  });

  await server.shutdown();
});

Deno.test("isPrivateHost() recognizes non-public addresses", () => {
  const priv = [
    "localhost",
    "LOCALHOST.",
    "api.localhost",
    "printer.local",
    "127.0.0.1",
    "127.1.2.3",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "[::1]",
    "[::]",
    "[fe80::1]",
    "[fd00::1]",
    "[fc00::abcd]",
    "[::ffff:7f00:1]",
    "[::ffff:a00:1]",
    "[64:ff9b::a9fe:a9fe]",
    "[2002:c0a8:101::1]",
    "[ff02::1]",
  ];
  for (const h of priv) assert.ok(isPrivateHost(h), h);
  const pub = [
    "example.com",
    "8.8.8.8",
    "172.32.0.1",
    "[2606:4700::1111]",
    "[::ffff:808:808]",
    "100.128.0.1",
  ];
  for (const h of pub) assert.ok(!isPrivateHost(h), h);
  // The URL parser normalizes exotic IPv4 spellings before the check.
  for (
    const u of [
      "http://0x7f.1/",
      "http://2130706433/",
      "http://017700000001/",
      "http://[::ffff:127.0.0.1]/",
    ]
  ) {
    assert.ok(isPrivateHost(new URL(u).hostname), u);
  }
  assert.ok(isPrivateIp("::ffff:10.1.2.3"));
  assert.ok(isPrivateIp("::1.2.3.4") === false);
  assert.ok(isPrivateIp("fe80::1%eth0"));
  assert.ok(!isPrivateIp("93.184.216.34"));
});

Deno.test("isAllowedHost() matches hosts and ports like --allow-net", () => {
  const u = (s: string) => new URL(s);
  assert.ok(isAllowedHost(u("https://api.example.com/x"), ["api.example.com"]));
  assert.ok(
    isAllowedHost(u("https://API.example.com:8443/"), ["api.example.com"]),
  );
  assert.ok(
    isAllowedHost(u("https://api.example.com/"), ["api.example.com:443"]),
  );
  assert.ok(
    !isAllowedHost(u("http://api.example.com/"), ["api.example.com:443"]),
  );
  assert.ok(
    !isAllowedHost(u("https://evil-api.example.com/"), ["api.example.com"]),
  );
  assert.ok(
    !isAllowedHost(u("https://api.example.com.evil.io/"), ["api.example.com"]),
  );
  assert.ok(isAllowedHost(u("http://[::1]:80/"), ["[::1]"]));
  assert.ok(isAllowedHost(u("https://anything.io/"), ["*"]));
});

Deno.test("http permissions follow the config", () => {
  assert.deepEqual(toolkit.permissions({ allowed_hosts: ["api.github.com"] }), {
    net: ["api.github.com"],
  });
  assert.deepEqual(toolkit.permissions({}), { net: [] });
});
