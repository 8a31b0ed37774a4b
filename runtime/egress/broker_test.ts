import assert from "node:assert/strict";
import { SkillboxError } from "../../protocol/errors.ts";
import { EgressBroker } from "./broker.ts";
import type { FetchResponse } from "../../protocol/egress.ts";

const SECRET = "op-secret-7f3a9c";

/** A loopback server that echoes requests and redirects where told. */
function startServer() {
  const seen: Array<
    {
      host: string | null;
      auth: string | null;
      key: string | null;
      path: string;
    }
  > = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const url = new URL(req.url);
      seen.push({
        host: req.headers.get("host"),
        auth: req.headers.get("authorization"),
        key: req.headers.get("x-api-key"),
        path: url.pathname,
      });
      if (url.pathname === "/redirect") {
        return new Response(null, {
          status: 302,
          headers: { location: url.searchParams.get("to")! },
        });
      }
      if (url.pathname === "/big") return new Response("x".repeat(10_000));
      if (url.pathname === "/hang") {
        // Answers only when the client gives up (or after 5 s).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          req.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        return new Response("late");
      }
      return Response.json({
        method: req.method,
        auth: req.headers.get("authorization"),
        body: await req.text(),
      }, { headers: { "x-echo": req.headers.get("authorization") ?? "" } });
    },
  );
  return { server, port: server.addr.port, seen };
}

/** Names resolved by the test, all to loopback, counting lookups. */
function resolver(names: Record<string, string[]>) {
  const calls: string[] = [];
  return {
    calls,
    resolve: (host: string) => {
      calls.push(host);
      const found = names[host];
      return found
        ? Promise.resolve(found)
        : Promise.reject(new Error("ENOTFOUND"));
    },
  };
}

function text(res: FetchResponse): string {
  return atob(res.bodyBase64);
}

async function refused(p: Promise<unknown>, code: string, pattern: RegExp) {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SkillboxError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("the broker refuses names and literals that reach non-public addresses", async (t) => {
  const { server, port, seen } = startServer();
  try {
    const broker = new EgressBroker({ timeoutMs: 3000 });
    const any = { allow: [["*"]] };
    await t.step(
      "localhost, resolved in the host through /etc/hosts",
      () =>
        refused(
          broker.fetch({ url: `http://localhost:${port}/` }, any),
          "tool_denied",
          /resolves to (127\.0\.0\.1|::1), which is not a public address/,
        ),
    );
    for (
      const url of [
        `http://127.0.0.1:${port}/`,
        `http://2130706433:${port}/`, // 127.0.0.1 in decimal
        `http://0x7f.1:${port}/`,
        `http://0.0.0.0:${port}/`,
        `http://[::1]:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00::1]/",
        "http://10.0.0.1/",
      ]
    ) {
      await t.step(
        url,
        () =>
          refused(broker.fetch({ url }, any), "tool_denied", /not a public/),
      );
    }
    assert.equal(seen.length, 0, "no request reached the server");
  } finally {
    await server.shutdown();
  }
});

Deno.test("the broker checks every address and connects to the one it checked", async (t) => {
  const { server, port, seen } = startServer();
  try {
    await t.step(
      "a name mixing public and private answers is refused",
      async () => {
        const names = resolver({
          "mixed.test": ["93.184.215.14", "127.0.0.1"],
        });
        const broker = new EgressBroker({ resolve: names.resolve });
        await refused(
          broker.fetch({ url: `http://mixed.test:${port}/` }, {
            allow: [["*"]],
          }),
          "tool_denied",
          /127\.0\.0\.1/,
        );
      },
    );
    await t.step(
      "an operator-allowed private name resolves once per hop",
      async () => {
        const names = resolver({ "intranet.test": ["127.0.0.1"] });
        const broker = new EgressBroker({
          resolve: names.resolve,
          privateHosts: ["intranet.test"],
        });
        const res = await broker.fetch(
          { url: `http://intranet.test:${port}/x` },
          { allow: [["intranet.test"]] },
        );
        assert.equal(res.status, 200);
        assert.deepEqual(names.calls, ["intranet.test"]);
        // The Host header names the host; the socket went to the address.
        assert.equal(seen.at(-1)?.host, `intranet.test:${port}`);
      },
    );
    await t.step("a caller's Host header is ignored", async () => {
      const broker = new EgressBroker({
        resolve: resolver({ "intranet.test": ["127.0.0.1"] }).resolve,
        privateHosts: ["intranet.test"],
      });
      await broker.fetch({
        url: `http://intranet.test:${port}/`,
        headers: { Host: "metadata.google.internal" },
      }, { allow: [["*"]] });
      assert.equal(seen.at(-1)?.host, `intranet.test:${port}`);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("the broker checks every redirect hop like the first", async (t) => {
  const { server, port, seen } = startServer();
  const names = resolver({
    "a.test": ["127.0.0.1"],
    "b.test": ["127.0.0.1"],
    "rebound.test": ["127.0.0.1"],
  });
  const broker = new EgressBroker({
    resolve: names.resolve,
    privateHosts: ["a.test", "b.test"],
  });
  const base = `http://a.test:${port}`;
  try {
    await t.step("to a loopback literal", () =>
      refused(
        broker.fetch(
          { url: `${base}/redirect?to=http://127.0.0.1:${port}/` },
          { allow: [["*"]] },
        ),
        "tool_denied",
        /not a public address/,
      ));
    await t.step("to a name that resolves inside", () =>
      refused(
        broker.fetch(
          { url: `${base}/redirect?to=http://rebound.test:${port}/` },
          { allow: [["*"]] },
        ),
        "tool_denied",
        /rebound\.test/,
      ));
    await t.step("to a host the scope does not allow", () =>
      refused(
        broker.fetch(
          { url: `${base}/redirect?to=http://b.test:${port}/` },
          { allow: [["a.test"]] },
        ),
        "tool_denied",
        /"b\.test:\d+" is not allowed/,
      ));
    await t.step("to a non-http scheme", () =>
      refused(
        broker.fetch(
          { url: `${base}/redirect?to=file:///etc/passwd` },
          { allow: [["*"]] },
        ),
        "tool_error",
        /Only http and https/,
      ));
    await t.step("an allowed hop is followed", async () => {
      const res = await broker.fetch(
        { url: `${base}/redirect?to=http://b.test:${port}/end` },
        { allow: [["a.test", "b.test"]] },
      );
      assert.equal(res.status, 200);
      assert.equal(res.url, `http://b.test:${port}/end`);
      assert.equal(res.redirects.length, 1);
    });
    assert.ok(!seen.some((s) => s.host?.startsWith("127.0.0.1")));
  } finally {
    await server.shutdown();
  }
});

Deno.test("operator secrets go only to their host, and never come back", async (t) => {
  const { server, port, seen } = startServer();
  const names = resolver({
    "api.test": ["127.0.0.1"],
    "other.test": ["127.0.0.1"],
  });
  const broker = new EgressBroker({
    resolve: names.resolve,
    privateHosts: ["api.test", "other.test"],
    secrets: [
      { host: "api.test", header: "Authorization", value: `Bearer ${SECRET}` },
      {
        host: "other.test",
        header: "X-Api-Key",
        value: SECRET + "-kit",
        toolkits: ["http"],
      },
    ],
  });
  const any = { allow: [["*"]] };
  try {
    await t.step(
      "sent to its host, cut from the body and headers",
      async () => {
        const res = await broker.fetch(
          { url: `http://api.test:${port}/` },
          any,
        );
        assert.equal(seen.at(-1)?.auth, `Bearer ${SECRET}`);
        assert.doesNotMatch(text(res), new RegExp(SECRET));
        assert.match(text(res), /\[REDACTED\]/);
        assert.equal(res.headers["x-echo"], "[REDACTED]");
      },
    );
    await t.step("sandbox code cannot replace it", async () => {
      await broker.fetch({
        url: `http://api.test:${port}/`,
        headers: { Authorization: "Bearer mine" },
      }, any);
      assert.equal(seen.at(-1)?.auth, `Bearer ${SECRET}`);
    });
    await t.step("never sent to another host", async () => {
      const res = await broker.fetch(
        { url: `http://other.test:${port}/` },
        any,
      );
      assert.equal(seen.at(-1)?.auth, null);
      assert.doesNotMatch(text(res), new RegExp(SECRET));
    });
    await t.step("not carried along a redirect to another host", async () => {
      await broker.fetch({
        url: `http://api.test:${port}/redirect?to=http://other.test:${port}/`,
      }, any);
      assert.equal(seen.at(-1)?.path, "/");
      assert.equal(seen.at(-1)?.auth, null);
    });
    await t.step(
      "a toolkit-bound secret goes only to that toolkit's calls",
      async () => {
        await broker.fetch({ url: `http://other.test:${port}/` }, {
          allow: [["*"]],
          toolkit: "shell",
        });
        assert.equal(seen.at(-1)?.key, null);
        await broker.fetch({ url: `http://other.test:${port}/` }, {
          allow: [["*"]],
          toolkit: "http",
        });
        assert.equal(seen.at(-1)?.key, SECRET + "-kit");
      },
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("the broker bounds bodies and time, and narrows by every list", async (t) => {
  const { server, port } = startServer();
  const names = resolver({ "a.test": ["127.0.0.1"], "b.test": ["127.0.0.1"] });
  const broker = new EgressBroker({
    resolve: names.resolve,
    privateHosts: ["a.test", "b.test"],
    maxResponseBytes: 1000,
    maxRequestBytes: 100,
    timeoutMs: 300,
  });
  try {
    await t.step("a long body is cut", async () => {
      const res = await broker.fetch({ url: `http://a.test:${port}/big` }, {
        allow: [["*"]],
      });
      assert.equal(res.truncated, true);
      assert.equal(atob(res.bodyBase64).length, 1000);
    });
    await t.step("a slow server times out", () =>
      refused(
        broker.fetch({ url: `http://a.test:${port}/hang` }, { allow: [["*"]] }),
        "timeout",
        /timed out/,
      ));
    await t.step("a large request body is refused", () =>
      refused(
        broker.fetch({
          url: `http://a.test:${port}/`,
          method: "POST",
          body: "y".repeat(101),
        }, { allow: [["*"]] }),
        "tool_error",
        /limit is 100/,
      ));
    await t.step(
      "a session's narrower list wins over a wide grant",
      () =>
        refused(
          broker.fetch({ url: `http://b.test:${port}/` }, {
            allow: [["*"], ["a.test"]],
          }),
          "tool_denied",
          /not allowed/,
        ),
    );
    await t.step("no list at all allows nothing", () =>
      refused(
        broker.fetch({ url: `http://a.test:${port}/` }, { allow: [] }),
        "tool_denied",
        /not allowed/,
      ));
    await t.step("a header with a line break is refused", () =>
      refused(
        broker.fetch({
          url: `http://a.test:${port}/`,
          headers: { "x-a": "1\r\nX-Injected: 1" },
        }, { allow: [["*"]] }),
        "tool_error",
        /not valid/,
      ));
  } finally {
    await server.shutdown();
  }
});
