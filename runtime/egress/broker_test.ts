import assert from "node:assert/strict";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  brokerFromConfig,
  checkedFetch,
  EgressBroker,
  MAX_PARALLEL_FETCHES,
} from "./broker.ts";
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
      if (url.pathname === "/leak-redirect") {
        // An upstream that copies the credential it got into the Location.
        const auth = encodeURIComponent(req.headers.get("authorization") ?? "");
        return new Response(null, {
          status: 302,
          headers: { location: `${url.searchParams.get("to")}?leak=${auth}` },
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
        type: req.headers.get("content-type"),
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

/**
 * A raw node:http upstream on loopback, reached as "api.test", to which a
 * broker sends `value` as Authorization over plain http, and as
 * "cdn.test" with no secret; disposing of it closes the server.
 */
async function rawUpstream(
  handler: RequestListener,
  options: { value?: string; maxResponseBytes?: number } = {},
) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const broker = new EgressBroker({
    resolve: resolver({ "api.test": ["127.0.0.1"], "cdn.test": ["127.0.0.1"] })
      .resolve,
    privateHosts: ["api.test", "cdn.test"],
    secrets: [{
      host: "http://api.test",
      header: "Authorization",
      value: options.value ?? `Bearer ${SECRET}`,
    }],
    maxResponseBytes: options.maxResponseBytes,
  });
  return {
    port,
    broker,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => server.close(() => resolve())),
  };
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
        /its Location is not an http\(s\) URL/,
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
    await t.step(
      "a POST a 302 turns into a GET loses its body's type",
      async () => {
        // As fetch does: the type described the body the redirect dropped.
        const res = await broker.fetch(
          {
            url: `${base}/redirect?to=http://b.test:${port}/end`,
            method: "POST",
            headers: { "Content-Type": "application/json", "X-Kept": "1" },
            body: '{"a":1}',
          },
          { allow: [["a.test", "b.test"]] },
        );
        const echo = JSON.parse(text(res));
        assert.deepEqual(echo, {
          method: "GET",
          auth: null,
          type: null,
          body: "",
        });
      },
    );
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
      {
        host: "http://api.test",
        header: "Authorization",
        value: `Bearer ${SECRET}`,
      },
      {
        host: "http://other.test",
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

Deno.test("a secret that begins another leaves no part of the longer one", async () => {
  const { server, port } = startServer();
  const names = resolver({ "api.test": ["127.0.0.1"] });
  const broker = new EgressBroker({
    resolve: names.resolve,
    privateHosts: ["api.test"],
    // The shorter value is bound first, so it would be cut out first.
    secrets: [
      { host: "http://api.test", header: "X-Api-Key", value: "Bearer op-1" },
      {
        host: "http://api.test",
        header: "Authorization",
        value: "Bearer op-1-rest-of-it",
      },
    ],
  });
  try {
    const res = await broker.fetch({ url: `http://api.test:${port}/` }, {
      allow: [["*"]],
    });
    assert.doesNotMatch(text(res), /rest-of-it/);
    assert.equal(res.headers["x-echo"], "[REDACTED]");
  } finally {
    await server.shutdown();
  }
});

Deno.test("an operator secret goes over plain http only when its binding says http://", async (t) => {
  const { server, port, seen } = startServer();
  const names = resolver({
    "api.test": ["127.0.0.1"],
    "open.test": ["127.0.0.1"],
  });
  const broker = (host: string) =>
    new EgressBroker({
      resolve: names.resolve,
      privateHosts: ["api.test", "open.test"],
      secrets: [{ host, header: "Authorization", value: `Bearer ${SECRET}` }],
    });
  const any = { allow: [["*"]] };
  try {
    for (const host of ["api.test", `api.test:${port}`, "HTTPS://api.test/"]) {
      await t.step(`bound to "${host}": refused, nothing sent`, async () => {
        const before = seen.length;
        await refused(
          broker(host).fetch({ url: `http://api.test:${port}/x?q=1` }, any),
          "tool_denied",
          new RegExp(
            `Cannot send a request to "http://api\\.test:${port}": an operator secret for it goes over https only`,
          ),
        );
        assert.equal(seen.length, before);
      });
    }
    await t.step("nor reached by a redirect over http", async () => {
      const before = seen.length;
      await refused(
        broker("api.test").fetch({
          url: `http://open.test:${port}/redirect?to=http://api.test:${port}/`,
        }, any),
        "tool_denied",
        /goes over https only/,
      );
      assert.deepEqual(seen.slice(before).map((s) => s.path), ["/redirect"]);
      assert.equal(seen.at(-1)?.auth, null);
    });
    await t.step(
      "another toolkit's secret stands in no one's way",
      async () => {
        const other = new EgressBroker({
          resolve: names.resolve,
          privateHosts: ["api.test"],
          secrets: [{
            host: "api.test",
            header: "Authorization",
            value: `Bearer ${SECRET}`,
            toolkits: ["http"],
          }],
        });
        const res = await other.fetch({ url: `http://api.test:${port}/` }, {
          allow: [["*"]],
          toolkit: "shell",
        });
        assert.equal(res.status, 200);
        assert.equal(seen.at(-1)?.auth, null);
      },
    );
    for (const host of ["http://api.test", `HTTP://api.test:${port}/`]) {
      await t.step(`bound to "${host}": sent`, async () => {
        await broker(host).fetch({ url: `http://api.test:${port}/` }, any);
        assert.equal(seen.at(-1)?.auth, `Bearer ${SECRET}`);
      });
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("a secret an upstream copies into a redirect stays with its host", async (t) => {
  const { server, port, seen } = startServer();
  const broker = new EgressBroker({
    resolve:
      resolver({ "api.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] })
        .resolve,
    privateHosts: ["api.test", "other.test"],
    secrets: [{
      host: "http://api.test",
      header: "Authorization",
      value: `Bearer ${SECRET}`,
    }],
  });
  const any = { allow: [["*"]] };
  try {
    await t.step("a hop to another host is refused, not sent", async () => {
      const before = seen.length;
      await refused(
        broker.fetch({
          url:
            `http://api.test:${port}/leak-redirect?to=http://other.test:${port}/end`,
        }, any),
        "tool_denied",
        /carries an operator secret/,
      );
      assert.deepEqual(seen.slice(before).map((s) => s.path), [
        "/leak-redirect",
      ]);
    });
    await t.step("on its own host, the URLs come back redacted", async () => {
      const res = await broker.fetch({
        url:
          `http://api.test:${port}/leak-redirect?to=http://api.test:${port}/end`,
      }, any);
      assert.equal(res.status, 200);
      assert.equal(seen.at(-1)?.path, "/end");
      const seenBySandbox = JSON.stringify([
        res.url,
        res.redirects,
        res.headers,
      ]);
      assert.doesNotMatch(seenBySandbox, /op-secret/);
      assert.match(res.url, /REDACTED/);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("a body cut at the limit keeps no part of a secret", async () => {
  const { server, port } = startServer();
  const value = `Bearer ${SECRET}`;
  // The echo is {"method":"GET","auth":"<value>",...}: cut inside the value.
  const cut = '{"method":"GET","auth":"'.length + value.length - 3;
  const broker = new EgressBroker({
    resolve: resolver({ "api.test": ["127.0.0.1"] }).resolve,
    privateHosts: ["api.test"],
    secrets: [{ host: "http://api.test", header: "Authorization", value }],
    maxResponseBytes: cut,
  });
  try {
    const res = await broker.fetch({ url: `http://api.test:${port}/` }, {
      allow: [["*"]],
    });
    assert.equal(res.truncated, true);
    assert.doesNotMatch(text(res), /op-secret/);
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
          body: "y".repeat(8 * 1024 * 1024 + 1),
        }, { allow: [["*"]] }),
        "tool_error",
        /is 8388609 bytes: the limit is 8388608/,
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

Deno.test("one call's requests run a few at a time, and never hold up another call's", async (t) => {
  // Each request stays in name resolution until the test lets it go: what
  // has entered it is what the broker runs at once.
  const entered: Array<{ host: string; go: () => void }> = [];
  const broker = new EgressBroker({
    resolve: (host) =>
      new Promise((_, reject) => {
        entered.push({ host, go: () => reject(new Error("ENOTFOUND")) });
      }),
  });
  // Nothing on the way to resolution does I/O: one turn of the event loop
  // lets every request that can start reach it.
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
  const fetchAs = (owner: object, host: string, signal?: AbortSignal) =>
    broker.fetch({ url: `http://${host}/` }, {
      allow: [["*"]],
      owner,
      signal,
    });
  const failed = (p: Promise<unknown>) =>
    p.then(() => assert.fail("resolved"), (err: Error) => err.message);
  const a = {};
  const fanOut = Array.from({ length: 20 }, () => failed(fetchAs(a, "a.test")));
  await t.step("the first few start, the rest wait", async () => {
    await turn();
    assert.equal(entered.length, MAX_PARALLEL_FETCHES);
  });
  await t.step("another call's request starts at once", async () => {
    const other = failed(fetchAs({}, "b.test"));
    await turn();
    assert.equal(entered.at(-1)?.host, "b.test");
    entered.pop()!.go();
    assert.match(await other, /Cannot resolve/);
  });
  await t.step("each finished request lets the next one start", async () => {
    for (let done = 0; done < 20; done++) {
      entered.shift()!.go();
      await turn();
      assert.equal(
        entered.length,
        Math.min(MAX_PARALLEL_FETCHES, 20 - done - 1),
      );
    }
    for (const message of await Promise.all(fanOut)) {
      assert.match(message, /Cannot resolve/);
    }
  });
  await t.step(
    "a waiting request gives up when its call is cancelled",
    async () => {
      const held = Array.from(
        { length: MAX_PARALLEL_FETCHES },
        () => failed(fetchAs(a, "a.test")),
      );
      const cancel = new AbortController();
      const waiting = fetchAs(a, "a.test", cancel.signal);
      await turn();
      cancel.abort();
      await refused(waiting, "tool_error", /cancelled/);
      for (const entry of entered.splice(0)) entry.go();
      await Promise.all(held);
      await turn();
      assert.equal(entered.length, 0, "the cancelled request never started");
    },
  );
});

Deno.test("a request cancelled while it waits for the host's turn gives its call's turn back", async () => {
  // As above: a request waits in name resolution until the test lets it go.
  const entered: Array<() => void> = [];
  const broker = new EgressBroker({
    maxParallelHost: 1,
    resolve: () =>
      new Promise((_, reject) => {
        entered.push(() => reject(new Error("ENOTFOUND")));
      }),
  });
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
  const fetchAs = (owner: object, signal?: AbortSignal) =>
    broker.fetch({ url: "http://a.test/" }, { allow: [["*"]], owner, signal })
      .then(() => "answered", (err: Error) => err.message);
  const holder = fetchAs({}); // holds the host's one turn
  await turn();
  assert.equal(entered.length, 1);
  // Each takes one of the call's turns, then waits for the host's.
  const call = {};
  const cancel = new AbortController();
  const cancelled = Array.from(
    { length: MAX_PARALLEL_FETCHES },
    () => fetchAs(call, cancel.signal),
  );
  await turn();
  cancel.abort();
  for (const message of await Promise.all(cancelled)) {
    assert.match(message, /cancelled/);
  }
  const next = fetchAs(call);
  entered.shift()!();
  assert.match(await holder, /Cannot resolve/);
  await turn();
  assert.equal(entered.length, 1, "the call's next request started");
  entered.shift()!();
  assert.match(await next, /Cannot resolve/);
});

// checkedFetch: the host's own requests.

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

/**
 * A server that trickles: after the request it sends one byte every 50 ms,
 * headers never finished (`body: false`) or a body never ended. `closed`
 * resolves when the client ends the connection.
 */
function trickler(body: boolean) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let onClosed = () => {};
  const closed = new Promise<void>((resolve) => onClosed = resolve);
  let conn: Deno.Conn | null = null;
  const served = (async () => {
    const c = conn = await listener.accept();
    const enc = new TextEncoder();
    await c.read(new Uint8Array(65536));
    if (body) {
      await c.write(enc.encode(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
      ));
    } else await c.write(enc.encode("HTTP/1.1 200 OK\r\nx-slow: "));
    const timer = setInterval(() => {
      c.write(enc.encode(body ? "1\r\n:\r\n" : "a")).catch(() => {});
    }, 50);
    // The client ending the connection is the only way out.
    while (await c.read(new Uint8Array(1024)).catch(() => null) !== null);
    clearInterval(timer);
    onClosed();
  })();
  const { port } = listener.addr as Deno.NetAddr;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    closed,
    async close() {
      listener.close();
      try {
        (conn as Deno.Conn | null)?.close();
      } catch {
        // Already closed.
      }
      await served.catch(() => {});
    },
  };
}

/** The promise's outcome, or "pending" once `ms` passed. */
function within<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<"pending">((r) => timer = setTimeout(() => r("pending"), ms)),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("checkedFetch() ends a request whose server trickles, whatever the caller's signal", async (t) => {
  const broker = new EgressBroker({ privateHosts: ["127.0.0.1"] });
  // As the MCP SDK's transport calls it: a signal aborted only on close.
  const forever = new AbortController();
  await t.step("headers never finished", async () => {
    const server = trickler(false);
    const options = { origin: server.url, timeoutMs: 300 };
    try {
      const res = checkedFetch(broker, options)(server.url, {
        method: "POST",
        body: "{}",
        signal: forever.signal,
      }).catch((error: Error) => error);
      const outcome = await within(res, 5_000);
      assert.ok(outcome instanceof SkillboxError, String(outcome));
      assert.equal(outcome.code, "timeout");
      assert.match(
        outcome.message,
        /Request to "http:\/\/127\.0\.0\.1:\d+" timed out after 0\.3 s/,
      );
      assert.notEqual(await within(server.closed, 5_000), "pending");
    } finally {
      await server.close();
    }
  });
  await t.step("a body never ended", async () => {
    const server = trickler(true);
    const options = { origin: server.url, timeoutMs: 300 };
    try {
      const res = await checkedFetch(broker, options)(server.url, {
        signal: forever.signal,
      });
      assert.equal(res.status, 200);
      const read = res.text().then(() => "ended", (e: Error) => e);
      const outcome = await within(read, 5_000);
      assert.ok(outcome instanceof Error, String(outcome));
      assert.notEqual(await within(server.closed, 5_000), "pending");
    } finally {
      await server.close();
    }
  });
});

Deno.test("the host runs at most maxParallelHost requests at once, shared by tokens, then sessions", async (t) => {
  // As above: a request waits in name resolution until the test lets it go.
  const entered: Array<{ host: string; go: () => void }> = [];
  const broker = new EgressBroker({
    maxParallelHost: 4,
    resolve: (host) =>
      new Promise((_, reject) => {
        entered.push({ host, go: () => reject(new Error("ENOTFOUND")) });
      }),
  });
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
  const fetchAs = (
    principal: { session: string; token: string },
    host: string,
    signal?: AbortSignal,
  ) =>
    broker.fetch({ url: `http://${host}/` }, {
      allow: [["*"]],
      owner: {}, // a call of its own each: the per-call bound is not it
      principal,
      signal,
    }).then(() => "answered", (err: Error) => err.message);
  const flood = { session: "a1", token: "flooder" };
  // 40 calls of one token, each one fetch: 40 × max_response_bytes held
  // at once before.
  const floods = Array.from({ length: 40 }, () => fetchAs(flood, "a.test"));
  await t.step("no more than the bound start", async () => {
    await turn();
    assert.equal(entered.length, 4);
  });
  const other = fetchAs({ session: "b1", token: "other" }, "b.test");
  const sameTokenOtherSession = fetchAs(
    { session: "a2", token: "flooder" },
    "c.test",
  );
  await t.step("a freed turn goes to the token holding fewest", async () => {
    entered.shift()!.go();
    await turn();
    assert.equal(entered.length, 4);
    assert.equal(entered.at(-1)?.host, "b.test");
  });
  await t.step("then to the token's session holding fewest", async () => {
    entered.shift()!.go();
    await turn();
    assert.equal(entered.at(-1)?.host, "c.test");
  });
  await t.step(
    "every request ends, never more than the bound at once",
    async () => {
      let most = 0;
      while (entered.length > 0) {
        most = Math.max(most, entered.length);
        entered.shift()!.go();
        await turn();
      }
      assert.equal(most, 4);
      for (const message of [...await Promise.all(floods), await other]) {
        assert.match(message, /Cannot resolve/);
      }
      assert.match(await sameTokenOtherSession, /Cannot resolve/);
    },
  );
  await t.step(
    "a request waiting its turn gives up when cancelled",
    async () => {
      const held = Array.from({ length: 4 }, () => fetchAs(flood, "a.test"));
      const cancel = new AbortController();
      const waiting = fetchAs(flood, "a.test", cancel.signal);
      await turn();
      cancel.abort();
      assert.match(await waiting, /cancelled/);
      for (const entry of entered.splice(0)) entry.go();
      await Promise.all(held);
      await turn();
      assert.equal(entered.length, 0, "the cancelled request never started");
    },
  );
});

Deno.test("a secret an upstream echoes in its status line or a header name never comes back", async () => {
  // A raw server: the reason phrase and header names are the upstream's to
  // write, and an echoing one writes the credential it got there too.
  await using upstream = await rawUpstream((req, res) => {
    const auth = String(req.headers.authorization ?? "");
    res.setHeader(encodeURIComponent(auth), "1");
    res.writeHead(401, `Invalid token ${auth}`);
    res.end("no");
  });
  const res = await upstream.broker.fetch({
    url: `http://api.test:${upstream.port}/`,
  }, { allow: [["*"]] });
  assert.equal(res.status, 401);
  assert.equal(res.statusText, "Invalid token [REDACTED]");
  assert.doesNotMatch(JSON.stringify(res), /op-secret/);
});

Deno.test("a secret an upstream copies into a Location that is no http URL never comes back", async (t) => {
  // The refusal of such a redirect quoted the Location (or the scheme read
  // from it), the upstream's text, uncut.
  const token = SECRET; // what follows "Bearer ": a URL scheme's characters
  for (
    const [name, location] of [
      ["no URL at all", `http://[${token}`],
      ["a URL of another scheme", `${token}:x`],
    ]
  ) {
    await t.step(name!, async () => {
      await using upstream = await rawUpstream((_req, res) => {
        res.writeHead(302, { location });
        res.end();
      });
      await refused(
        upstream.broker.fetch({
          url: `http://api.test:${upstream.port}/`,
        }, { allow: [["*"]] }),
        "tool_error",
        /^(?!.*op-secret)Cannot follow the redirect from "http:\/\/api\.test:\d+\/": its Location is not/,
      );
    });
  }
});

Deno.test("a secret an upstream copies into a redirect's host, which a URL lower-cases, stays with its host", async () => {
  // A host name is lower-cased when the Location is read: the secret in it
  // was no longer found, so the hop went on, its name resolved (the
  // secret sent in a DNS query) and quoted in the refusal.
  const resolved: string[] = [];
  await using upstream = await rawUpstream((req, res) => {
    const key = String(req.headers.authorization);
    res.writeHead(302, { location: `http://${key}.other.test/` });
    res.end();
  }, { value: "Op-Secret-7F3A9C" });
  const broker = upstream.broker;
  const checkTarget = broker.checkTarget.bind(broker);
  broker.checkTarget = (url, allow, signal) => {
    resolved.push(url.hostname);
    return checkTarget(url, allow, signal);
  };
  await refused(
    broker.fetch({ url: `http://api.test:${upstream.port}/` }, {
      allow: [["*"]],
    }),
    "tool_denied",
    /^(?!.*op-secret)Cannot follow the redirect .* carries an operator secret/i,
  );
  assert.deepEqual(resolved, ["api.test"]);
});

Deno.test("a secret an upstream echoes cannot come back compressed or in ranges", async (t) => {
  // A server as nginx with gzip and ranges on answers: compressed when
  // asked, a slice when asked. Either way the echo's bytes are not the
  // secret's, so the cut would not find it.
  const seen: Array<{ encoding?: string; range?: string }> = [];
  await using upstream = await rawUpstream((req, res) => {
    seen.push({
      encoding: req.headers["accept-encoding"],
      range: req.headers.range,
    });
    const echo = Buffer.from(`{"auth":"${req.headers.authorization}"}`);
    if (req.url === "/always-gzip" || req.headers["accept-encoding"]) {
      res.writeHead(200, { "content-encoding": "gzip" });
      return void res.end(gzipSync(echo));
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
    if (range) {
      res.writeHead(206, {
        "content-range": `bytes ${range[1]}-${range[2]}/${echo.length}`,
      });
      return void res.end(echo.subarray(+range[1]!, +range[2]! + 1));
    }
    res.end(echo);
  });
  const { broker, port } = upstream;
  const any = { allow: [["*"]] };
  const url = `http://api.test:${port}/`;
  await t.step("the coding it asks for is not passed on", async () => {
    const res = await broker.fetch({
      url,
      headers: { "Accept-Encoding": "gzip" },
    }, any);
    assert.equal(seen.at(-1)?.encoding, undefined);
    assert.equal(text(res), '{"auth":"[REDACTED]"}');
  });
  await t.step("an answer compressed unasked is refused", async () => {
    await refused(
      broker.fetch({ url: `${url}always-gzip` }, any),
      "tool_error",
      /encoded \("gzip"\).*a secret sent with the request/,
    );
  });
  await t.step("a range it asks for is not passed on", async () => {
    // Two slices that each hold part of the secret, none of it whole.
    const cut = '{"auth":"Bearer op-sec'.length;
    for (const range of [`bytes=0-${cut - 1}`, `bytes=${cut}-99`]) {
      const res = await broker.fetch({ url, headers: { Range: range } }, any);
      assert.equal(seen.at(-1)?.range, undefined);
      assert.equal(res.status, 200);
      assert.doesNotMatch(text(res), /op-sec|ret-7f/);
    }
  });
  await t.step("a session's own secret is guarded the same", async () => {
    // No operator secret for cdn.test: the session's header is its own,
    // named to the broker as one to hide.
    const own = {
      allow: [["*"]],
      hide: ["Bearer sess-4Kp9"],
    };
    const headers = { Authorization: "Bearer sess-4Kp9" };
    const res = await broker.fetch({
      url: `http://cdn.test:${port}/`,
      headers: { ...headers, "Accept-Encoding": "gzip", Range: "bytes=0-3" },
    }, own);
    assert.deepEqual(seen.at(-1), { encoding: undefined, range: undefined });
    assert.equal(text(res), '{"auth":"[REDACTED]"}');
    await refused(
      broker.fetch(
        { url: `http://cdn.test:${port}/always-gzip`, headers },
        own,
      ),
      "tool_error",
      /encoded \("gzip"\)/,
    );
  });
  await t.step("a host with no secret gets both as asked", async () => {
    await broker.fetch({
      url: `http://cdn.test:${port}/`,
      headers: { "Accept-Encoding": "gzip", Range: "bytes=0-3" },
    }, any);
    assert.deepEqual(seen.at(-1), { encoding: "gzip", range: "bytes=0-3" });
  });
});

Deno.test("a secret an upstream echoes in another charset or JSON-escaped never comes back", async (t) => {
  // Base64 keys hold "/", which PHP's json_encode writes "\/"; a server
  // that honours Accept-Charset writes the echo in UTF-16.
  const key = "op/secret+7f3a9c/==";
  const seen: Array<string | undefined> = [];
  await using upstream = await rawUpstream((req, res) => {
    const charset = req.headers["accept-charset"] as string | undefined;
    seen.push(charset);
    const auth = String(req.headers.authorization ?? "");
    if (req.url === "/php") {
      const escaped = JSON.stringify(auth).replaceAll("/", "\\/");
      return void res.end(`{"auth":${escaped}}`);
    }
    if (/utf-16/i.test(charset ?? "")) {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-16le" });
      return void res.end(Buffer.from(auth, "utf16le"));
    }
    res.end(auth);
  }, { value: `Bearer ${key}` });
  const { broker, port } = upstream;
  const any = { allow: [["*"]] };
  await t.step("the charset it asks for is not passed on", async () => {
    const res = await broker.fetch({
      url: `http://api.test:${port}/`,
      headers: { "Accept-Charset": "utf-16" },
    }, any);
    assert.equal(seen.at(-1), undefined);
    assert.equal(text(res), "[REDACTED]");
  });
  await t.step("an echo with its slashes escaped is cut", async () => {
    const res = await broker.fetch(
      { url: `http://api.test:${port}/php` },
      any,
    );
    assert.equal(text(res), '{"auth":"[REDACTED]"}');
  });
});

Deno.test("a secret an upstream echoes HTML-escaped never comes back", async (t) => {
  // An error page that shows the request's headers escapes them for HTML:
  // "/" as &#x2F; (OWASP), &#47; or &sol;, or every character by number.
  const key = "op/secret+7f3a9c/==";
  const escapers: Record<string, (s: string) => string> = {
    hex: (s) => s.replaceAll("/", "&#x2F;"),
    decimal: (s) => s.replaceAll("/", "&#47;"),
    named: (s) =>
      s.replaceAll("/", "&sol;").replaceAll("+", "&plus;")
        .replaceAll("=", "&equals;"),
    every: (s) => [...s].map((c) => `&#${c.codePointAt(0)};`).join(""),
    loose: (s) => s.replaceAll("/", "&#x002f").replaceAll("=", "&#61"),
    // More zeros than the cut searches back over at a body's end.
    padded: (s) => s.replaceAll("/", `&#${"0".repeat(2000)}47;`),
  };
  const upstream = (maxResponseBytes?: number) =>
    rawUpstream((req, res) => {
      const escape = escapers[req.url!.slice(1)]!;
      res.end(`<p>${escape(String(req.headers.authorization))}</p>`);
    }, { value: `Bearer ${key}`, maxResponseBytes });
  const any = { allow: [["*"]] };
  for (const name of Object.keys(escapers)) {
    await t.step(`escaped "${name}", whole`, async () => {
      await using whole = await upstream();
      const res = await whole.broker.fetch(
        { url: `http://api.test:${whole.port}/${name}` },
        any,
      );
      assert.equal(text(res), "<p>[REDACTED]</p>");
    });
  }
  await t.step("cut after a reference, or inside one", async () => {
    for (
      const [name, at] of [
        ["hex", "<p>Bearer op&#x2F;sec"],
        ["hex", "<p>Bearer op&#x2"],
        ["padded", `<p>Bearer op&#${"0".repeat(2000)}47;sec`],
      ]
    ) {
      await using cut = await upstream(at!.length);
      const res = await cut.broker.fetch(
        { url: `http://api.test:${cut.port}/${name}` },
        any,
      );
      assert.equal(res.truncated, true);
      assert.equal(text(res), "<p>");
    }
  });
});

Deno.test("a secret outside ASCII an upstream echoes never comes back", async () => {
  // Node sends a header value in latin1: the echo holds its latin1 bytes.
  // A JSON encoder may write it in \u escapes (Python's ensure_ascii), and
  // "&", "<", ">" too (Go's encoding/json).
  await using upstream = await rawUpstream((req, res) => {
    const auth = String(req.headers.authorization);
    res.setHeader("x-echo", auth);
    if (req.url === "/json") {
      const escaped = auth.replace(
        /[^ -%'-;=?-~]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
      return void res.end(`{"auth":"${escaped}"}`);
    }
    res.end(Buffer.from(auth, "latin1"));
  }, { value: "Bearer sécret&7f3a" });
  const res = await upstream.broker.fetch({
    url: `http://api.test:${upstream.port}/`,
  }, { allow: [["*"]] });
  assert.equal(res.headers["x-echo"], "[REDACTED]");
  assert.equal(text(res), "[REDACTED]");
  const json = await upstream.broker.fetch({
    url: `http://api.test:${upstream.port}/json`,
  }, { allow: [["*"]] });
  assert.equal(text(json), '{"auth":"[REDACTED]"}');
});

Deno.test("a secret an upstream echoes in \\x escapes, URL- or form-encoded or read as windows-1252 never comes back", async (t) => {
  // Node sends the header in latin1; each echo below is one an upstream
  // writes of what it read.
  const value = "Bearer op/s\u00e9\u0080cret+7f3a";
  const hex = (b: number) => `\\x${b.toString(16).padStart(2, "0")}`;
  const echoes: Record<string, (auth: string) => string> = {
    // JavaScript string escapes of every byte it got.
    "x-latin1": (auth) => Array.from(Buffer.from(auth, "latin1"), hex).join(""),
    // Python's repr of the bytes of the text it decoded, in UTF-8.
    "x-utf8": (auth) =>
      Array.from(
        Buffer.from(auth),
        (b) => b < 0x80 ? String.fromCharCode(b) : hex(b),
      ).join(""),
    // A form or a query string: a space as "+".
    form: (auth) => new URLSearchParams({ auth }).toString().slice(5),
    // .NET's HttpUtility.UrlEncode writes its hex digits in lower case.
    "form-lower": (auth) =>
      new URLSearchParams({ auth }).toString().slice(5)
        .replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    "uri-lower": (auth) =>
      encodeURIComponent(auth)
        .replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    // WHATWG's "latin1" is windows-1252: byte 0x80 reads as the euro sign.
    "cp1252-utf8": (auth) =>
      new TextDecoder("latin1").decode(Buffer.from(auth, "latin1")),
    "cp1252-html": (auth) =>
      Array.from(
        new TextDecoder("latin1").decode(Buffer.from(auth, "latin1")),
        (c) => `&#x${c.codePointAt(0)!.toString(16)};`,
      ).join(""),
  };
  const upstream = (maxResponseBytes?: number) =>
    rawUpstream((req, res) => {
      const echo = echoes[req.url!.slice(1)]!;
      res.end(`<p>${echo(String(req.headers.authorization))}</p>`);
    }, { value, maxResponseBytes });
  for (const name of Object.keys(echoes)) {
    await t.step(`echoed "${name}"`, async () => {
      await using whole = await upstream();
      const res = await whole.broker.fetch({
        url: `http://api.test:${whole.port}/${name}`,
      }, { allow: [["*"]] });
      assert.equal(text(res), "<p>[REDACTED]</p>");
    });
  }
  await t.step("cut inside a character's UTF-8 bytes", async () => {
    for (
      const [name, length] of [
        ["cp1252-utf8", "<p>Bearer op/s".length + 1],
        ["x-utf8", "<p>Bearer op/s\\xc3".length],
        ["x-utf8", "<p>Bearer op/s\\xc3\\x".length],
      ] as const
    ) {
      await using cut = await upstream(length);
      const res = await cut.broker.fetch({
        url: `http://api.test:${cut.port}/${name}`,
      }, { allow: [["*"]] });
      assert.equal(res.truncated, true);
      assert.equal(text(res), "<p>", name);
    }
  });
});

Deno.test("brokerFromConfig() refuses a secret no header can carry, unquoted", () => {
  const config = {
    allowPrivateHosts: [],
    secrets: [{
      host: "api.example.com",
      header: "Authorization",
      valueEnv: "TOKEN",
      toolkits: [],
    }],
    maxResponseBytes: 1024,
    timeoutSeconds: 5,
  };
  // A header value is bytes: past U+00FF every request to the host would
  // fail, and a line break would start a header of its own.
  for (const value of ["Bearer €uro", "Bearer 😀", "Bearer a\r\nX-Other: 1"]) {
    assert.throws(
      () => brokerFromConfig(config, () => value),
      (error: Error) =>
        error instanceof TypeError &&
        /egress\.secrets\.0: the value of "TOKEN" cannot be sent in a header/
          .test(error.message) &&
        !error.message.includes("Bearer"),
    );
  }
  assert.ok(brokerFromConfig(config, () => "Bearer caf\u00e9\u0080"));
});

Deno.test("a session's long secret is looked for in a request in one pass", async () => {
  // V8's own search compares a long pattern again from nearly every place
  // when it is one letter repeated around another: a session that sets
  // such a secret, with a tool whose request body is that letter, held
  // the host's thread for minutes before the request was even checked.
  const half = "a".repeat(128 * 1024);
  const broker = new EgressBroker({ timeoutMs: 3000 });
  await refused(
    broker.fetch({
      url: "http://10.0.0.1/",
      method: "POST",
      body: "a".repeat(4 * 1024 * 1024),
    }, { allow: [["*"]], hide: [`${half}b${half}`] }),
    "tool_denied",
    /not a public/,
  );
});

Deno.test("a session's long secret is cut from an answer in one pass", async (t) => {
  // One letter repeated around another: each place of an answer of that
  // letter was compared with nearly all of the secret again, which held
  // the host's one thread for minutes with a secret of 4 KiB.
  const size = 1024 * 1024;
  const half = "a".repeat(2048);
  const scope = { allow: [["*"]], hide: [`${half}b${half}`] };
  for (
    const [name, limit, kept] of [[
      "whole",
      undefined,
      size,
    ], [
      // The answer's end is the start of the secret: it is dropped.
      "cut at the limit",
      size - 1,
      size - 1 - half.length,
    ]] as const
  ) {
    await t.step(name, async () => {
      await using upstream = await rawUpstream(
        (_req, res) => res.end("a".repeat(size)),
        { maxResponseBytes: limit },
      );
      const res = await upstream.broker.fetch(
        { url: `http://cdn.test:${upstream.port}/` },
        scope,
      );
      assert.equal(res.truncated, limit !== undefined);
      assert.equal(text(res), "a".repeat(kept));
    });
  }
});
