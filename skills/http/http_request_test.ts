import assert from "node:assert/strict";
import {
  dataOf,
  makeCtx,
  type TestCtx,
} from "../../tests/support/skill_ctx.ts";
import { EgressBroker } from "../../runtime/egress/broker.ts";
import httpRequest from "./http_request.ts";
import toolkit from "./toolkit.ts";

const SECRET = "s3cr3t-token-value-123";

// How a server may write back a character of what it echoes: as an HTML
// page does (by number, or the escaper's names for &<>"') or as a JSON
// encoder that escapes it does.
const ESCAPES: Record<string, (c: string) => string> = {
  decimal: (c) => `&#${c.charCodeAt(0)};`,
  hex: (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`,
  named: (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[
      c
    ] ?? c,
  json: (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
};

/** `text` with the characters `which` picks written in the escape `how`. */
function escapeSome(text: string, how: string, which: string): string {
  const middle = Math.floor(text.length / 2);
  return Array.from(
    text,
    (c, i) =>
      which === "all" || (which === "odd" && i % 2 === 1) ||
        (which === "middle" && i === middle)
        ? ESCAPES[how]!(c)
        : c,
  ).join("");
}

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
        case "/echo-bin": {
          // The credential alone, after 10 bytes, in a binary body.
          const auth = req.headers.get("authorization") ?? "";
          return new Response("0123456789" + auth.replace(/^Bearer /, ""), {
            headers: { "content-type": "application/octet-stream" },
          });
        }
        case "/bin":
          return new Response(new Uint8Array([0, 1, 2, 255]), {
            headers: { "content-type": "application/octet-stream" },
          });
        case "/redirect":
          return new Response(null, {
            status: 302,
            headers: { location: "/echo" },
          });
        case "/redirect-leak": {
          // A hostile server puts the credential in where it sends us.
          const auth = req.headers.get("authorization") ?? "";
          return new Response(null, {
            status: 302,
            headers: { location: `/echo?t=${auth.replace(/^Bearer /, "")}` },
          });
        }
        case "/redirect-leak-encoded": {
          // The same, percent-encoded as a careful server would, or not.
          const cred = (req.headers.get("authorization") ?? "")
            .replace(/^Bearer /, "");
          const how = url.searchParams.get("how");
          const t = how === "component"
            ? encodeURIComponent(cred)
            : (how === "stray" ? "%ff" : "") +
              cred.replace(/./g, (c) => `%${c.charCodeAt(0).toString(16)}`);
          return new Response(null, {
            status: 302,
            headers: { location: `/echo?t=${t}` },
          });
        }
        case "/echo-basic": {
          // A debugging endpoint that shows the Basic credential decoded.
          const auth = req.headers.get("authorization") ?? "";
          return new Response(
            new TextDecoder().decode(
              Uint8Array.fromBase64(auth.replace(/^Basic /, "")),
            ),
          );
        }
        case "/echo-php":
          // PHP's json_encode escapes every "/" as "\/".
          return new Response(
            JSON.stringify({ auth: req.headers.get("authorization") })
              .replaceAll("/", "\\/"),
            { headers: { "content-type": "application/json" } },
          );
        case "/echo-escaped": {
          // The header written back escaped, in the body and in a header.
          const echo = escapeSome(
            req.headers.get("authorization") ?? "",
            url.searchParams.get("how") ?? "",
            url.searchParams.get("which") ?? "",
          );
          return new Response(`seen: ${echo}`, {
            headers: { "content-type": "text/html", "x-echo": echo },
          });
        }
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

const local = { allowed_hosts: ["127.0.0.1"] };

/**
 * A ctx whose `fetch` goes through a real egress broker scoped as the host
 * scopes a call of this toolkit: its grant's net list is `allowed_hosts`.
 */
function brokerCtx(
  config: Record<string, unknown>,
  signal?: AbortSignal,
  broker = new EgressBroker({ privateHosts: ["127.0.0.1"] }),
): TestCtx {
  const allow = Array.isArray(config.allowed_hosts)
    ? config.allowed_hosts as string[]
    : [];
  // The config as the host hands it: the schema's defaults under it.
  const defaults = {
    max_body_bytes: toolkit.config.properties.max_body_bytes.default,
  };
  return makeCtx(
    { ...defaults, ...config },
    signal,
    (request) =>
      broker.fetch(request, { allow: [allow], toolkit: "http", signal }),
  );
}

Deno.test("http_request against a local server", async (t) => {
  const { server, base, seen } = startServer();

  await t.step("GET returns status, headers and body", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/echo` }, brokerCtx(local).ctx),
    );
    assert.equal(r.status, 200);
    assert.equal(r.body_encoding, "text");
    assert.equal(JSON.parse(r.body as string).method, "GET");
    assert.match(
      (r.headers as Record<string, string>)["content-type"]!,
      /json/,
    );
    const missing = dataOf(
      await httpRequest.run({ url: `${base}/nope` }, brokerCtx(local).ctx),
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
        brokerCtx(local).ctx,
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
        brokerCtx({ ...local, headers: { Authorization: `Bearer ${SECRET}` } })
          .ctx,
      );
      assert.equal(seen[before]?.authorization, `Bearer ${SECRET}`);
      const text = JSON.stringify(out);
      assert.ok(!text.includes(SECRET), "secret leaked into the result");
      assert.match(text, /\[REDACTED\]/);
    },
  );

  await t.step(
    "a Basic credential is redacted when it comes back decoded",
    async () => {
      const basic = `Basic ${
        new TextEncoder().encode(`agent:${SECRET}`).toBase64()
      }`;
      const out = await httpRequest.run(
        { url: `${base}/echo-basic` },
        brokerCtx({ ...local, headers: { Authorization: basic } }).ctx,
      );
      const text = JSON.stringify(out);
      assert.ok(!text.includes(SECRET), `secret leaked: ${text}`);
      assert.equal(dataOf(out).body, "[REDACTED]");
    },
  );

  await t.step(
    "a secret is redacted when a server escapes its slashes",
    async () => {
      const token = "ab/cd+ef/gh/ij==";
      const out = await httpRequest.run(
        { url: `${base}/echo-php` },
        brokerCtx({ ...local, headers: { Authorization: `Bearer ${token}` } })
          .ctx,
      );
      const text = dataOf(out).body as string;
      assert.ok(!text.includes(token.replaceAll("/", "\\/")), text);
      assert.equal(text, '{"auth":"[REDACTED]"}');
    },
  );

  await t.step(
    "a secret is redacted when a server escapes it for HTML or JSON",
    async () => {
      const header = `Bearer k3y&<x>"q"'s/9+z`;
      for (const how of Object.keys(ESCAPES)) {
        // Every character escaped, every other one, or one in the middle.
        for (const which of ["all", "odd", "middle"]) {
          const out = await httpRequest.run(
            { url: `${base}/echo-escaped?how=${how}&which=${which}` },
            brokerCtx({ ...local, headers: { Authorization: header } }).ctx,
          );
          const r = dataOf(out);
          const echo = escapeSome(header, how, which);
          assert.equal(r.body, "seen: [REDACTED]", `${how}/${which}: ${echo}`);
          assert.equal(
            (r.headers as Record<string, string>)["x-echo"],
            "[REDACTED]",
            `${how}/${which}: ${echo}`,
          );
        }
      }
    },
  );

  await t.step(
    "a cut through an escaped secret leaves no start of it",
    async () => {
      const header = `Bearer k3y&<x>"q"'s/9+z`;
      const headers = { Authorization: header };
      for (const how of Object.keys(ESCAPES)) {
        for (const which of ["all", "odd"]) {
          const url = `${base}/echo-escaped?how=${how}&which=${which}`;
          const echo = escapeSome(header, how, which);
          // The broker's bound cuts after every byte of the echo in turn
          // (the tool's own bound cuts the body already redacted).
          for (let n = 1; n < echo.length; n++) {
            const broker = new EgressBroker({
              privateHosts: ["127.0.0.1"],
              maxResponseBytes: "seen: ".length + n,
            });
            const r = dataOf(
              await httpRequest.run(
                { url },
                brokerCtx({ ...local, headers }, undefined, broker).ctx,
              ),
            );
            assert.equal(r.truncated, true);
            // Cut before a last ";" only, the reference is whole.
            assert.match(
              r.body as string,
              /^seen: (?:\[REDACTED\])?$/,
              `${how}/${which}: ${echo.slice(0, n)}`,
            );
          }
        }
      }
    },
  );

  await t.step(
    "a secret default header is redacted from redirect URLs",
    async () => {
      const { ctx, events } = brokerCtx({
        ...local,
        headers: { Authorization: `Bearer ${SECRET}` },
      });
      const out = await httpRequest.run({ url: `${base}/redirect-leak` }, ctx);
      assert.equal(dataOf(out).url, `${base}/echo?t=[REDACTED]`);
      const text = JSON.stringify([out, events]);
      assert.ok(!text.includes(SECRET), `secret leaked: ${text}`);
    },
  );

  await t.step(
    "a secret header is redacted when it comes back encoded",
    async () => {
      const odd = 'k3y "quoted" with spaces/and+plus';
      for (const how of ["component", "lower", "stray"]) {
        const { ctx, events } = brokerCtx({
          ...local,
          headers: { Authorization: `Bearer ${odd}` },
        });
        const out = await httpRequest.run(
          { url: `${base}/redirect-leak-encoded?how=${how}` },
          ctx,
        );
        // The final page echoes the header as JSON, escaped.
        const text = JSON.stringify([out, events]) + dataOf(out).body;
        for (
          const form of [
            odd,
            encodeURIComponent(odd),
            JSON.stringify(odd).slice(1, -1),
          ]
        ) {
          assert.ok(!text.includes(form), `${how}: secret leaked: ${text}`);
        }
        const url = dataOf(out).url as string;
        assert.ok(
          !decodeURIComponent(url.replace("%ff", "")).includes(odd),
          `${how}: ${url}`,
        );
        assert.match(url, /\[REDACTED\]/);
      }
    },
  );

  await t.step(
    "a secret header is redacted from binary bodies and never cut in two",
    async () => {
      const config = {
        ...local,
        headers: { Authorization: `Bearer ${SECRET}` },
      };
      const whole = dataOf(
        await httpRequest.run(
          { url: `${base}/echo-bin` },
          brokerCtx(config).ctx,
        ),
      );
      assert.equal(whole.body_encoding, "base64");
      const text = (r: Record<string, unknown>) =>
        new TextDecoder().decode(Uint8Array.fromBase64(r.body as string));
      assert.equal(text(whole), "0123456789[REDACTED]");
      // Redacted before max_body_bytes cuts the body.
      const cut = dataOf(
        await httpRequest.run(
          { url: `${base}/echo-bin` },
          brokerCtx({ ...config, max_body_bytes: 18 }).ctx,
        ),
      );
      assert.equal(cut.truncated, true);
      assert.equal(text(cut), "0123456789[REDACTE");
      // The broker's bound cuts 8 bytes into the credential: the tool
      // drops that start of it.
      const broker = new EgressBroker({
        privateHosts: ["127.0.0.1"],
        maxResponseBytes: 18,
      });
      const early = dataOf(
        await httpRequest.run(
          { url: `${base}/echo-bin` },
          brokerCtx(config, undefined, broker).ctx,
        ),
      );
      assert.equal(early.truncated, true);
      assert.equal(text(early), "0123456789");
    },
  );

  await t.step("the body is capped", async () => {
    const r = dataOf(
      await httpRequest.run(
        { url: `${base}/big` },
        brokerCtx({ ...local, max_body_bytes: 100 }).ctx,
      ),
    );
    assert.equal((r.body as string).length, 100);
    assert.equal(r.truncated, true);
  });

  await t.step("binary bodies come back as base64", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/bin` }, brokerCtx(local).ctx),
    );
    assert.equal(r.body_encoding, "base64");
    assert.equal(r.body, btoa(String.fromCharCode(0, 1, 2, 255)));
  });

  await t.step("redirects are followed only to allowed hosts", async () => {
    const r = dataOf(
      await httpRequest.run({ url: `${base}/redirect` }, brokerCtx(local).ctx),
    );
    assert.equal(r.status, 200);
    assert.equal(r.url, `${base}/echo`);
    const manual = dataOf(
      await httpRequest.run(
        { url: `${base}/redirect`, follow_redirects: false },
        brokerCtx(local).ctx,
      ),
    );
    assert.equal(manual.status, 302);
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: `${base}/redirect-away` },
            brokerCtx(local).ctx,
          ),
        ),
      /Host "elsewhere.example" is not allowed/,
    );
  });

  await t.step(
    "loopback is refused unless the operator allows it",
    async () => {
      const strict = new EgressBroker();
      for (
        const url of [`${base}/echo`, "http://localhost/", "http://[::1]/"]
      ) {
        await assert.rejects(
          () =>
            Promise.resolve(
              httpRequest.run(
                { url },
                brokerCtx(
                  { allowed_hosts: ["127.0.0.1", "localhost", "[::1]"] },
                  undefined,
                  strict,
                ).ctx,
              ),
            ),
          /not a public address/,
          url,
        );
      }
    },
  );

  await t.step("hosts outside allowed_hosts are refused", async () => {
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: "https://example.com/" },
            brokerCtx({ allowed_hosts: ["api.example.com"] }).ctx,
          ),
        ),
      /Host "example.com" is not allowed/,
    );
    await assert.rejects(
      () =>
        Promise.resolve(
          httpRequest.run(
            { url: "file:///etc/passwd" },
            brokerCtx({ allowed_hosts: ["*"] }).ctx,
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
            brokerCtx(local, ac.signal).ctx,
          ),
        ),
      /timed out/,
    );
  });

  await server.shutdown();
});

Deno.test("http permissions follow the config", () => {
  assert.deepEqual(toolkit.permissions({ allowed_hosts: ["api.github.com"] }), {
    net: ["api.github.com"],
  });
  assert.deepEqual(toolkit.permissions({}), { net: [] });
});
