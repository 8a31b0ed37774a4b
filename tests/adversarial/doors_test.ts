/**
 * The host's doors, tried as an attacker would against a real listening
 * host: a foreign `Host` on every door, DNS rebinding (`Host` and `Origin`
 * both the attacker's), other spellings of the names, `Origin: null`, a
 * foreign `Origin` on each door, and guessing tokens; the operator's own
 * requests and sessions keep working throughout.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { startHost } from "../support/host.ts";
import { openWs } from "../support/ws_client.ts";
import { RAW } from "../support/wire.ts";
import { openSse } from "../support/sse_client.ts";
import { httpApp } from "../../runtime/host_http.ts";
import { createSseTransport } from "../../runtime/transports/http_sse.ts";
import { createOperatorSurface } from "../../runtime/console/operator_surface.ts";
import { defaultConfig } from "../../runtime/config.ts";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "attacker", version: "1" },
  },
});

/** An answer read off the socket. */
interface RawAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * Sends one request exactly as written (a Host header fetch would not let
 * a test choose, or none at all) and reads the answer's head and, unless
 * it is an upgrade, its body.
 */
async function raw(
  port: number,
  head: string[],
  options: { body?: string; connect?: string; headOnly?: boolean } = {},
): Promise<RawAnswer> {
  const conn = await Deno.connect({
    hostname: options.connect ?? "127.0.0.1",
    port,
  });
  try {
    const body = options.body ?? "";
    const lines = [...head, "Connection: close"];
    if (body !== "" || head[0]!.startsWith("POST")) {
      lines.push(`Content-Length: ${new TextEncoder().encode(body).length}`);
    }
    await conn.write(
      new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body),
    );
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16384);
    let text = "";
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
      // An upgraded socket stays open: its head is all there is to read.
      if (
        (options.headOnly || /^HTTP\/1\.[01] 101/.test(text)) &&
        text.includes("\r\n\r\n")
      ) break;
    }
    const [top = "", ...rest] = text.split("\r\n\r\n");
    const [statusLine = "", ...headerLines] = top.split("\r\n");
    const headers = new Headers();
    for (const line of headerLines) {
      const at = line.indexOf(":");
      headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
    }
    return {
      status: Number(statusLine.split(" ")[1]),
      headers,
      body: rest.join("\r\n\r\n"),
    };
  } finally {
    conn.close();
  }
}

/** The doors, as raw requests with a given `Host` and extra headers. */
function doors(host: string, extra: string[] = []) {
  const upgrade = [
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  ];
  const mcp = [
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
  ];
  return [
    {
      name: "the A2E WebSocket",
      head: [`GET /a2e HTTP/1.1`, `Host: ${host}`, ...upgrade, ...extra],
    },
    {
      name: "an HTTP+SSE session",
      head: [`POST /a2e/session HTTP/1.1`, `Host: ${host}`, ...extra],
    },
    {
      name: "MCP",
      head: [`POST /mcp HTTP/1.1`, `Host: ${host}`, ...mcp, ...extra],
      body: INITIALIZE,
    },
    {
      name: "the runs",
      head: [`GET /api/runs HTTP/1.1`, `Host: ${host}`, ...extra],
    },
    {
      name: "the console",
      head: [`GET / HTTP/1.1`, `Host: ${host}`, ...extra],
    },
    {
      name: "the metrics",
      head: [`GET /metrics HTTP/1.1`, `Host: ${host}`, ...extra],
    },
    {
      name: "the health check",
      head: [`GET /health HTTP/1.1`, `Host: ${host}`, ...extra],
    },
    {
      name: "the sign-in form",
      head: [
        `POST /login HTTP/1.1`,
        `Host: ${host}`,
        "Content-Type: application/x-www-form-urlencoded",
        ...extra,
      ],
      body: "token=guess",
    },
  ];
}

// A WebSocket session that must survive everything a test throws at the
// host: it still answers a ping at the end.
async function bystander(wsUrl: string) {
  const ws = await openWs(wsUrl);
  ws.send(RAW.handshake("h1"));
  assert.equal((await ws.next()).ok, true);
  return {
    async stillWorks() {
      ws.send(RAW.ping("p1"));
      assert.equal((await ws.next()).type, "pong");
      await ws.close();
    },
  };
}

Deno.test("a foreign Host is refused with 403 on every door, and nothing opens", async () => {
  await using t = await startHost();
  const port = Number(new URL(t.url).port);
  const watcher = await bystander(t.wsUrl);
  for (const door of doors(`a.evil:${port}`)) {
    const answer = await raw(port, door.head, { body: door.body });
    assert.equal(answer.status, 403, door.name);
    assert.deepEqual(JSON.parse(answer.body), {
      error:
        `Host "a.evil:${port}" is not one this host answers to: add it to listen.allowed_hosts`,
    }, door.name);
  }
  assert.equal(t.host.sessionCount, 1);
  await watcher.stillWorks();
});

Deno.test("DNS rebinding (the attacker's name in both Host and Origin) is refused on every door", async () => {
  await using t = await startHost();
  const port = Number(new URL(t.url).port);
  const watcher = await bystander(t.wsUrl);
  for (const name of ["a.evil", "127.0.0.1.nip.io", "localhost.evil"]) {
    const host = `${name}:${port}`;
    for (const door of doors(host, [`Origin: http://${host}`])) {
      const answer = await raw(port, door.head, { body: door.body });
      assert.equal(answer.status, 403, `${door.name} as ${host}`);
      assert.match(JSON.parse(answer.body).error, /listen\.allowed_hosts/);
    }
  }
  assert.equal(t.host.sessionCount, 1);
  await watcher.stillWorks();
});

Deno.test("the loopback names pass in every spelling; other names do not", async () => {
  await using t = await startHost();
  const port = Number(new URL(t.url).port);
  const cases: [string, number][] = [
    [`127.0.0.1:${port}`, 200],
    ["127.0.0.1", 200],
    [`LOCALHOST:${port}`, 200],
    [`localhost.:${port}`, 200],
    ["localhost.", 200],
    [`[::1]:${port}`, 200],
    [`[::ffff:127.0.0.1]:${port}`, 200],
    [`localhost:1`, 200],
    [`127.0.0.1.nip.io:${port}`, 403],
    [`127.1.0.1:${port}`, 403],
    [`0.0.0.0:${port}`, 403],
    [`[::2]:${port}`, 403],
    [`evil@127.0.0.1:${port}`, 403],
    [`localhost..:${port}`, 403],
    [`a.evil`, 403],
  ];
  for (const [host, status] of cases) {
    const answer = await raw(port, ["GET /api/runs HTTP/1.1", `Host: ${host}`]);
    assert.equal(answer.status, status, host);
  }
  // HTTP/1.0 may send no Host: that is no browser, and no rebinding.
  const bare = await raw(port, ["GET /health HTTP/1.0"]);
  assert.equal(bare.status, 200);
  assert.equal(JSON.parse(bare.body).status, "ok");
});

Deno.test("a browser Origin other than the host's own is refused on every door, Origin: null included", async () => {
  await using t = await startHost();
  const port = Number(new URL(t.url).port);
  const watcher = await bystander(t.wsUrl);
  for (
    const origin of [
      "null",
      "http://evil.example",
      `http://127.0.0.1:${port + 1}`,
      `http://localhost:${port}`,
      `https://127.0.0.1.nip.io:${port}`,
      "file://",
    ]
  ) {
    for (const door of doors(`127.0.0.1:${port}`, [`Origin: ${origin}`])) {
      const answer = await raw(port, door.head, { body: door.body });
      assert.equal(answer.status, 403, `${door.name} from ${origin}`);
      assert.match(JSON.parse(answer.body).error, /^Origin "/);
    }
  }
  // A cross-site request that hides its Origin is refused too.
  const hidden = await raw(port, [
    "GET /api/runs HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    "Sec-Fetch-Site: cross-site",
    "Sec-Fetch-Mode: no-cors",
  ]);
  assert.equal(hidden.status, 403);
  assert.equal(t.host.sessionCount, 1);
  await watcher.stillWorks();
});

Deno.test("the host's own origin, and one the operator listed, still get in on every door", async () => {
  await using t = await startHost({
    config: { listen: { allowedOrigins: ["https://app.example"] } },
  });
  const port = Number(new URL(t.url).port);
  for (
    const origin of [`http://127.0.0.1:${port}`, "https://app.example", null]
  ) {
    for (
      const door of doors(
        `127.0.0.1:${port}`,
        origin === null ? [] : [`Origin: ${origin}`],
      )
    ) {
      const answer = await raw(port, door.head, { body: door.body });
      assert.notEqual(answer.status, 403, `${door.name} from ${origin}`);
      assert.ok(answer.status < 400, `${door.name}: ${answer.status}`);
    }
  }
});

Deno.test("an operator's allowed_hosts name (a reverse proxy's) gets in: an HTTP+SSE session opens through it", async () => {
  await using t = await startHost({
    config: { listen: { allowedHosts: ["skillbox.internal"] } },
  });
  const port = Number(new URL(t.url).port);
  const ok = await raw(port, [
    "POST /a2e/session HTTP/1.1",
    "Host: skillbox.internal",
    "Origin: https://skillbox.internal",
  ]);
  assert.equal(ok.status, 200);
  assert.match(JSON.parse(ok.body).session_id, /^[0-9a-f]{32}$/);
});

const T1 = "token-one-for-the-operator";
const T2 = "token-two-for-a-client";

// A host with tokens on "::", so that 127.0.0.1 and ::1 are two client
// addresses.
async function tokenHost(): Promise<AsyncDisposable & { port: number }> {
  const host = createHost({ capabilities: [], config: { tokens: [T1, T2] } });
  const { port } = await host.listen({ hostname: "::", port: 0 });
  return {
    port,
    [Symbol.asyncDispose]: () => host.close({ timeoutSeconds: 1 }),
  };
}

// One credential attempt on a door, from an address.
function attempt(
  port: number,
  door: "mcp" | "ws" | "sse" | "api" | "login" | "metrics",
  token: string,
  connect = "127.0.0.1",
): Promise<RawAnswer> {
  const host = `Host: localhost:${port}`;
  const bearer = `Authorization: Bearer ${token}`;
  const heads = {
    mcp: [
      "POST /mcp HTTP/1.1",
      host,
      bearer,
      "Content-Type: application/json",
      "Accept: application/json, text/event-stream",
    ],
    ws: [
      "GET /a2e HTTP/1.1",
      host,
      bearer,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Version: 13",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ],
    sse: ["POST /a2e/session HTTP/1.1", host, bearer],
    api: ["GET /api/runs HTTP/1.1", host, bearer],
    metrics: ["GET /metrics HTTP/1.1", host, bearer],
    login: [
      "POST /login HTTP/1.1",
      host,
      "Content-Type: application/x-www-form-urlencoded",
    ],
  };
  return raw(port, heads[door], {
    connect,
    body: door === "mcp"
      ? INITIALIZE
      : door === "login"
      ? `token=${encodeURIComponent(token)}`
      : undefined,
  });
}

Deno.test("guessing tokens: after 5 wrong ones an address waits (429, Retry-After) on every door, its right token too; another address does not", async () => {
  await using t = await tokenHost();
  const port = t.port;
  const guesses = ["mcp", "ws", "sse", "api", "login", "metrics"] as const;
  for (const door of guesses) {
    const wrong = await attempt(port, door, `guess-${door}`);
    assert.equal(wrong.status, 401, door);
  }
  for (const door of guesses) {
    const blocked = await attempt(port, door, T1);
    assert.equal(blocked.status, 429, door);
    assert.equal(blocked.headers.get("retry-after"), "1", door);
    assert.match(JSON.parse(blocked.body).error, /try again in 1 s/);
  }
  // Another address, and requests without credentials, are not held up.
  const other = await attempt(port, "api", T1, "::1");
  assert.equal(other.status, 200);
  const plain = await raw(port, [
    "GET /health HTTP/1.1",
    `Host: localhost:${port}`,
  ]);
  assert.equal(plain.status, 200);
  // Once the wait is over (a bounded wait for it), the right token works,
  // and clears nothing: one more wrong one and the address waits again.
  const deadline = Date.now() + 10_000;
  let answer = await attempt(port, "api", T1);
  while (answer.status === 429 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await attempt(port, "api", T1);
  }
  assert.equal(answer.status, 200);
  assert.equal((await attempt(port, "mcp", "again")).status, 401);
  const again = await attempt(port, "mcp", T1);
  assert.equal(again.status, 429);
  assert.equal(again.headers.get("retry-after"), "2");
});

Deno.test("a flood of sign-ins with one token never signs another token's console session out", async () => {
  await using t = await tokenHost();
  const port = t.port;
  const signIn = async (token: string) => {
    const answer = await attempt(port, "login", token);
    assert.equal(answer.status, 303);
    return (answer.headers.get("set-cookie") ?? "").split(";")[0]!;
  };
  const runs = async (cookie: string) =>
    (await raw(port, [
      "GET /api/runs HTTP/1.1",
      `Host: localhost:${port}`,
      `Cookie: ${cookie}`,
    ])).status;
  const operator = await signIn(T1);
  const first = await signIn(T2);
  let last = first;
  // More than the old table's 1,000 sessions.
  for (let i = 0; i < 1100; i++) last = await signIn(T2);
  assert.equal(await runs(operator), 200);
  assert.equal(await runs(last), 200);
  // The flooding token lost its own oldest session, no one else's.
  assert.equal(await runs(first), 401);
});

// Every route the host's Hono app serves, built from the same parts
// createHost builds it from: a route added to any of them is walked.
function servedRoutes(): { method: string; path: string }[] {
  const config = { ...defaultConfig(), store: null };
  const operator = createOperatorSurface({
    config,
    sessions: () => [],
    processes: () => [],
    request: () => Promise.reject(new Error("not here")),
  });
  const sse = createSseTransport({ limits: config.limits } as never);
  const app = httpApp({
    context: {} as never,
    sse,
    mcp: {} as never,
    operator,
    sessions: new Set(),
    startedAt: 0,
    log: () => {},
  });
  const routes = new Map<string, { method: string; path: string }>();
  for (const route of app.routes) {
    const path = route.path.replaceAll(/:[a-z]+/g, "1").replaceAll("*", "x");
    const methods = route.method === "ALL"
      ? ["GET", "POST", "PUT", "DELETE", "HEAD"]
      : [route.method];
    for (const method of methods) {
      routes.set(`${method} ${path}`, { method, path });
    }
  }
  sse.close();
  operator.close();
  return [...routes.values()];
}

Deno.test("every route the app serves, the WebSocket upgrade and the /mcp fast path are behind the door", async () => {
  const routes = servedRoutes();
  const listed = routes.map((r) => `${r.method} ${r.path}`);
  for (
    const door of [
      "GET /a2e",
      "POST /a2e/session",
      "POST /mcp",
      "GET /api/runs",
      "GET /api/live",
      "POST /login",
      "GET /metrics",
      "GET /health",
      "GET /",
    ]
  ) assert.ok(listed.includes(door), `${door} is among ${listed}`);
  // The /mcp fast path's other spellings, and the upgrade.
  routes.push(
    { method: "POST", path: "/mcp?x=1" },
    { method: "POST", path: "/mcp#x" },
  );
  await using t = await startHost({ config: { tokens: [] } });
  const port = Number(new URL(t.url).port);
  const upgrade = [
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  ];
  for (const { method, path } of routes) {
    const extra = path === "/a2e" ? upgrade : [];
    const body = method === "POST" ? "{}" : undefined;
    const what = `${method} ${path}`;
    // Over the socket, as the listener serves it.
    const foreign = await raw(port, [
      `${method} ${path} HTTP/1.1`,
      `Host: a.evil:${port}`,
      ...extra,
    ], { body, headOnly: true });
    assert.equal(foreign.status, 403, what);
    const own = await raw(port, [
      `${method} ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      ...extra,
    ], { body, headOnly: true });
    assert.notEqual(own.status, 403, what);
    // In-process, through host.fetch.
    const inProcess = await t.host.fetch(
      new Request(`http://a.evil:${port}${path}`, {
        method,
        body: method === "HEAD" || method === "GET" ? undefined : body,
      }),
    );
    assert.equal(inProcess.status, 403, `host.fetch ${what}`);
    await inProcess.body?.cancel();
  }
});

Deno.test("guessing the token inside A2E handshakes is throttled by address too, on WebSocket and HTTP+SSE", async () => {
  await using t = await tokenHost();
  const handshake = async (
    base: string,
    token: string,
    transport: "ws" | "sse",
  ) => {
    const fields = { auth_token: token };
    if (transport === "ws") {
      const ws = await openWs(`ws://${base}/a2e`);
      ws.send(RAW.handshake("h", fields));
      const answer = await ws.next();
      await ws.close();
      return answer;
    }
    const sse = await openSse(`http://${base}/a2e`);
    const stream = await sse.stream();
    const sent = await sse.send(RAW.handshake("h", fields));
    await sent.body?.cancel();
    const answer = await stream.next();
    await stream.close();
    return answer;
  };
  const v4 = `127.0.0.1:${t.port}`;
  const v6 = `[::1]:${t.port}`;
  for (let i = 0; i < 6; i++) {
    const answer = await handshake(v4, `guess-${i}`, i % 2 ? "ws" : "sse");
    assert.equal(answer.ok, false);
    assert.equal(answer.reason, "Invalid auth token");
  }
  for (const transport of ["ws", "sse"] as const) {
    const blocked = await handshake(v4, T1, transport);
    assert.equal(blocked.ok, false, transport);
    assert.match(String(blocked.reason), /^Too many failed sign-in attempts/);
    const other = await handshake(v6, T1, transport);
    assert.equal(other.ok, true, transport);
  }
});
