import assert from "node:assert/strict";
import { EgressBroker } from "./broker.ts";
import { type EgressProxy, openEgressProxy } from "./proxy.ts";

interface Fixture {
  proxy: EgressProxy;
  port: number;
  bodies: string[];
  close(): Promise<void>;
}

function start(): Fixture {
  const bodies: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      bodies.push(`${req.method} ${await req.text()}`);
      return new Response("x".repeat(200_000), {
        headers: { connection: "keep-alive" },
      });
    },
  );
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test"],
  });
  return {
    proxy,
    port: server.addr.port,
    bodies,
    async close() {
      proxy.close();
      await server.shutdown();
    },
  };
}

async function exchange(proxy: EgressProxy, text: string): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path: proxy.path });
  await conn.write(new TextEncoder().encode(text));
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(65536);
  for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
    chunks.push(buf.slice(0, n));
  }
  conn.close();
  return new TextDecoder().decode(
    chunks.reduce((a, b) => {
      const out = new Uint8Array(a.length + b.length);
      out.set(a);
      out.set(b, a.length);
      return out;
    }, new Uint8Array(0)),
  );
}

Deno.test("openEgressProxy() forwards bodies as framed and streams the whole answer", async () => {
  const f = start();
  try {
    const head = (extra: string) =>
      `${f.proxy.token}\nPOST http://a.test:${f.port}/ HTTP/1.1\r\n` +
      `Host: a.test:${f.port}\r\nConnection: keep-alive\r\n${extra}\r\n`;
    const sized = await exchange(
      f.proxy,
      head("Content-Length: 5\r\n") + "hello",
    );
    assert.match(sized, /^HTTP\/1.1 200 OK\r\n/);
    // Its Connection header is the proxy's: one request per connection.
    assert.match(sized, /\r\nconnection: close\r\n/);
    assert.doesNotMatch(sized, /keep-alive/);
    assert.equal(sized.split("\r\n\r\n")[1]!.length, 200_000);
    const chunked = await exchange(
      f.proxy,
      head("Transfer-Encoding: chunked\r\n") +
        "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n",
    );
    assert.match(chunked, /^HTTP\/1.1 200 OK/);
    assert.deepEqual(f.bodies, ["POST hello", "POST abcde"]);
  } finally {
    await f.close();
  }
});

Deno.test("openEgressProxy() answers nothing without its token, and refuses a bad head", async () => {
  const f = start();
  try {
    const request = `GET http://a.test:${f.port}/ HTTP/1.1\r\n\r\n`;
    assert.equal(await exchange(f.proxy, `wrong\n${request}`), "");
    assert.equal(await exchange(f.proxy, request), "");
    const twoLengths = await exchange(
      f.proxy,
      `${f.proxy.token}\nPOST http://a.test:${f.port}/ HTTP/1.1\r\n` +
        "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    );
    assert.match(twoLengths, /^HTTP\/1.1 400 /);
    const https = await exchange(
      f.proxy,
      `${f.proxy.token}\nGET https://a.test/ HTTP/1.1\r\n\r\n`,
    );
    assert.match(https, /^HTTP\/1.1 400 /);
    assert.deepEqual(f.bodies, []);
  } finally {
    await f.close();
  }
});

Deno.test("openEgressProxy() refuses what the HTTP parser lets through", async () => {
  const f = start();
  try {
    const send = (start: string, extra: string, body = "") =>
      exchange(
        f.proxy,
        `${f.proxy.token}\n${start}\r\nHost: a.test:${f.port}\r\n` +
          `${extra}\r\n${body}`,
      );
    const url = `http://a.test:${f.port}/`;
    // A coding before chunked would be passed on still encoded.
    const coded = await send(
      `POST ${url} HTTP/1.1`,
      "Transfer-Encoding: gzip, chunked\r\n",
      "3\r\nabc\r\n0\r\n\r\n",
    );
    assert.match(coded, /^HTTP\/1.1 400 /);
    const twoHosts = await send(`GET ${url} HTTP/1.1`, "Host: b.test\r\n");
    assert.match(twoHosts, /^HTTP\/1.1 400 /);
    const http2 = await send(`GET ${url} HTTP/2.0`, "");
    assert.match(http2, /^HTTP\/1.1 400 /);
    assert.deepEqual(f.bodies, []);
  } finally {
    await f.close();
  }
});

Deno.test("openEgressProxy() tunnels only to the port it checked", async () => {
  // A listener on a port the grant does not name.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepting = (async () => {
    for await (const conn of listener) {
      await conn.write(new TextEncoder().encode("reached"));
      conn.close();
    }
  })();
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test:443"],
  });
  try {
    const connect = (target: string) =>
      exchange(proxy, `${proxy.token}\nCONNECT ${target} HTTP/1.1\r\n\r\n`);
    assert.match(await connect(`a.test:${port}`), /^HTTP\/1.1 403 /);
    // A URL reads these as the start of a query, a fragment or a path: the
    // host checked is a.test on 443, the port after them is not.
    for (const cut of ["?", "#", "\\"]) {
      const answer = await connect(`a.test${cut}:${port}`);
      assert.doesNotMatch(answer, /reached/, cut);
      assert.match(answer, /^HTTP\/1.1 400 /, cut);
    }
  } finally {
    proxy.close();
    listener.close();
    await accepting.catch(() => {});
  }
});

Deno.test("openEgressProxy() close() removes its socket", async () => {
  const proxy = openEgressProxy({ broker: new EgressBroker(), allow: [] });
  assert.ok((await Deno.stat(proxy.path)).isSocket);
  proxy.close();
  await assert.rejects(Deno.stat(proxy.path), Deno.errors.NotFound);
});

/** One upstream connection: resolves when the host side ends it. */
interface Accepted {
  ended: Promise<void>;
}

// A server that accepts, reads the request's head and never answers; each
// accepted connection resolves when the host side ends it.
function silentUpstream(): {
  port: number;
  next(): Promise<Accepted>;
  close(): void;
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const waiting: ((accepted: Accepted) => void)[] = [];
  const ready: Accepted[] = [];
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      const ended = (async () => {
        const buf = new Uint8Array(4096);
        try {
          while (await conn.read(buf) !== null) { /* read on until EOF */ }
        } catch {
          // A reset ends it too.
        }
      })();
      const wake = waiting.shift();
      if (wake) wake({ ended });
      else ready.push({ ended });
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    next() {
      const accepted = ready.shift();
      if (accepted) return Promise.resolve(accepted);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

// Resolves with the promise's outcome, or rejects after `ms`: a bound on a
// wait for an event, not a timing assertion.
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still open`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("openEgressProxy() ends upstream connections when the process's side goes", async (t) => {
  const upstream = silentUpstream();
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test"],
  });
  const open = async (head: string) => {
    const conn = await Deno.connect({ transport: "unix", path: proxy.path });
    await conn.write(new TextEncoder().encode(`${proxy.token}\n${head}`));
    return { conn, ...await upstream.next() };
  };
  const connect = `CONNECT a.test:${upstream.port} HTTP/1.1\r\n\r\n`;
  const get = `GET http://a.test:${upstream.port}/ HTTP/1.1\r\n` +
    `Host: a.test:${upstream.port}\r\n\r\n`;
  try {
    // A process that drops its connection (killed, or on purpose, to open
    // another) must not leave the host holding one upstream.
    for (const [name, head] of [["tunnel", connect], ["request", get]]) {
      await t.step(`a ${name} whose process connection closes`, async () => {
        const { conn, ended } = await open(head!);
        conn.close();
        await within(ended, 5000, name!);
      });
    }
    await t.step("every open one when the proxy closes", async () => {
      const tunnel = await open(connect);
      const request = await open(get);
      proxy.close();
      await within(Promise.all([tunnel.ended, request.ended]), 5000, "close");
      for (const { conn } of [tunnel, request]) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    });
  } finally {
    proxy.close();
    upstream.close();
  }
});

Deno.test("openEgressProxy() ends an answer still streaming when the process's side goes", async () => {
  // An upstream that answers at once and sends a chunk every 20 ms for as
  // long as it can: `ended` resolves when its connection is gone.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = (async () => {
    const conn = await listener.accept();
    const encoder = new TextEncoder();
    const ended = (async () => {
      try {
        await conn.write(encoder.encode(
          "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
        ));
        for (;;) {
          await conn.write(encoder.encode("5\r\nhello\r\n"));
          await new Promise((r) => setTimeout(r, 20));
        }
      } catch {
        // Its reader is gone.
      } finally {
        conn.close();
      }
    })();
    return { ended };
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test"],
  });
  try {
    const conn = await Deno.connect({ transport: "unix", path: proxy.path });
    await conn.write(new TextEncoder().encode(
      `${proxy.token}\nGET http://a.test:${port}/ HTTP/1.1\r\n` +
        `Host: a.test:${port}\r\n\r\n`,
    ));
    // Read until the answer's body is flowing, then go.
    const buf = new Uint8Array(4096);
    let seen = "";
    while (!seen.includes("hello")) {
      const n = await conn.read(buf);
      if (n === null) break;
      seen += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert.match(seen, /^HTTP\/1\.1 200/);
    conn.close();
    await within((await accepted).ended, 5000, "streaming answer");
  } finally {
    proxy.close();
    listener.close();
  }
});

Deno.test("openEgressProxy() holds no upstream of a tunnel whose process went while it was checked", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const checking = Promise.withResolvers<void>();
  const checked = Promise.withResolvers<string>();
  const proxy = openEgressProxy({
    broker: {
      checkTarget: () => {
        checking.resolve();
        return checked.promise;
      },
    },
    allow: ["a.test"],
  });
  const conn = await Deno.connect({ transport: "unix", path: proxy.path });
  let upstream: Deno.Conn | undefined;
  try {
    await conn.write(
      new TextEncoder().encode(
        `${proxy.token}\nCONNECT a.test:${port} HTTP/1.1\r\n\r\n`,
      ),
    );
    await checking.promise;
    proxy.close(); // the process's side is gone before the connect
    checked.resolve("127.0.0.1");
    upstream = await listener.accept();
    // Only a connection the host closed whole refuses what is sent on it.
    const refused = (async () => {
      try {
        while (true) await upstream.write(new Uint8Array(64 * 1024));
      } catch {
        // Reset, or the pipe broken: the host let it go.
      }
    })();
    await within(refused, 5000, "the upstream connection");
  } finally {
    conn.close();
    upstream?.close();
    listener.close();
  }
});

Deno.test("openEgressProxy() ends a connection that pipelines requests behind its one", async () => {
  // The HTTP server holds each request it parses until its connection
  // ends, and none behind the first is answered: a process that sent them
  // on while its answer was awaited grew the host's memory without bound
  // (about 1.4 kB for each 18-byte request).
  const upstream = silentUpstream();
  const proxy = openEgressProxy({
    broker: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
    allow: ["a.test"],
  });
  const conn = await Deno.connect({ transport: "unix", path: proxy.path });
  const encoder = new TextEncoder();
  try {
    await conn.write(encoder.encode(
      `${proxy.token}\nGET http://a.test:${upstream.port}/ HTTP/1.1\r\n` +
        `Host: a.test:${upstream.port}\r\n\r\n`,
    ));
    const { ended } = await upstream.next();
    await conn.write(encoder.encode("GET / HTTP/1.1\r\n\r\n".repeat(100)));
    const closed = (async () => {
      const buf = new Uint8Array(4096);
      try {
        while (await conn.read(buf) !== null) { /* read on until EOF */ }
      } catch {
        // A reset ends it too.
      }
    })();
    await within(closed, 5000, "the process's connection");
    await within(ended, 5000, "the upstream connection");
  } finally {
    conn.close();
    proxy.close();
    upstream.close();
  }
});

Deno.test("openEgressProxy() holds nothing of connections gone without their token", async () => {
  // A process may open and drop connections as fast as it likes. Each one
  // dropped before its token kept about 1.7 kB of the host's heap for
  // good (Deno's node:net keeps a socket destroyed a tick after its end),
  // and every one its 10 s clock until that ran out.
  const { stdout, stderr } = await inChild(
    `const proxy = openEgressProxy({ broker: new EgressBroker(), allow: [] });
const churn = async (n) => {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(Array.from({ length: 50 }, async (_, j) => {
      const conn = await Deno.connect({ transport: "unix", path: proxy.path });
      // Half of them send a forged token line first.
      if (j % 2) {
        await conn.write(new TextEncoder().encode("forged\\n")).catch(() => {});
      }
      conn.close();
    }));
  }
};
await churn(500); // the first of each kind of object made
globalThis.gc();
const before = Deno.memoryUsage().heapUsed;
await churn(5000);
// Until the host has seen every connection end (bounded).
let growth = Infinity;
for (let i = 0; i < 50 && growth > 2e6; i++) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  globalThis.gc();
  growth = Deno.memoryUsage().heapUsed - before;
}
proxy.close();
console.log("growth " + growth);
`,
    Deno.execPath(),
    ["run", "-A", "--v8-flags=--expose-gc"],
  );
  const growth = Number(/growth (-?\d+)/.exec(stdout)?.[1]);
  assert.ok(
    growth < 2e6,
    `${growth} bytes held after 5,000 connections ${stderr}`,
  );
});

Deno.test("a proxy whose socket cannot be made throws, and the host process lives on", async () => {
  // A process with no descriptor left (a connection flood, a leak): the
  // socket cannot be made. Its failure used to come as an uncaught error
  // event that ended the process.
  const { code, stdout, stderr } = await inChild(
    `const broker = new EgressBroker();
const held = [];
try { for (;;) held.push(Deno.openSync("/dev/null")); } catch { /* none left */ }
try {
  openEgressProxy({ broker, allow: ["a.example"] });
  console.log("opened");
} catch (error) {
  console.log("threw: " + error.message);
}
// Descriptors back at once: Deno's own lazy start-up work (certificates,
// signals) panics when it finds none, which is the runtime's, not ours. An
// error event from the failed socket would still come within the wait.
for (const file of held) file.close();
await new Promise((resolve) => setTimeout(resolve, 200));
console.log("alive");
`,
    "prlimit",
    ["--nofile=128", Deno.execPath(), "run", "-A"],
  );
  assert.match(stdout, /threw: Cannot open an egress proxy socket/, stderr);
  assert.match(stdout, /alive/, stderr);
  assert.equal(code, 0, stderr);
});

// Runs `body` after imports of openEgressProxy and EgressBroker, as a
// script file passed last to `command` with `args`.
async function inChild(body: string, command: string, args: string[]) {
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  const from = (file: string) =>
    JSON.stringify(new URL(file, import.meta.url).href);
  await Deno.writeTextFile(
    script,
    `import { openEgressProxy } from ${from("./proxy.ts")};
import { EgressBroker } from ${from("./broker.ts")};
${body}`,
  );
  try {
    const out = await new Deno.Command(command, {
      args: [...args, script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return {
      code: out.code,
      stdout: text(out.stdout),
      stderr: text(out.stderr),
    };
  } finally {
    await Deno.remove(script);
  }
}

// A listener that never accepts, with its queue full: the kernel drops the
// SYNs that follow, so a connect to it neither completes nor fails, as with
// a target whose packets are dropped on the way.
async function unansweredPort(): Promise<{ port: number; close(): void }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const held: Deno.Conn[] = [];
  const close = () => {
    for (const conn of held) conn.close();
    listener.close();
  };
  // The queue's length is the kernel's to choose (511 on Linux for Deno):
  // connect until one connect hangs. A dropped SYN is sent again after 1 s
  // and 3 s, and dropped again while the queue is full: a connect still
  // open after 2 s is one of those, not one slowed by a loaded machine.
  for (let i = 0; i < 5000; i++) {
    const connecting = Deno.connect({ hostname: "127.0.0.1", port });
    const conn = await Promise.race([
      connecting,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 2000)),
    ]);
    if (conn === null) {
      connecting.then((late) => late.close(), () => {});
      return { port, close };
    }
    held.push(conn);
  }
  close();
  throw new Error("the listener's queue never filled");
}

Deno.test("openEgressProxy() keeps each step on its clock", async (t) => {
  const target = await unansweredPort();
  const broker = (
    resolve: (host: string, signal: AbortSignal) => Promise<string[]>,
  ) => new EgressBroker({ privateHosts: ["a.test", "slow.test"], resolve });
  const proxy = openEgressProxy({
    broker: broker(() => Promise.resolve(["127.0.0.1"])),
    allow: ["a.test"],
    timeoutMs: 500,
  });
  // A name server that never answers: the check itself is on the clock
  // (the resolver gives up when its signal aborts, as resolveHost does).
  const unresolved = openEgressProxy({
    broker: broker((_host, signal) =>
      new Promise<string[]>((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason))
      )
    ),
    allow: ["slow.test"],
    timeoutMs: 500,
  });
  try {
    for (
      const [name, head] of [
        ["a tunnel", `CONNECT a.test:${target.port} HTTP/1.1\r\n\r\n`],
        [
          "a request",
          `GET http://a.test:${target.port}/ HTTP/1.1\r\n` +
          `Host: a.test:${target.port}\r\n\r\n`,
        ],
      ]
    ) {
      await t.step(`${name} whose connect never completes`, async () => {
        const answer = await within(
          exchange(proxy, `${proxy.token}\n${head}`),
          5000,
          name!,
        );
        assert.match(answer, /^HTTP\/1.1 504 /);
        assert.match(answer, /skillbox egress: Connecting to "a\.test:\d+"/);
      });
    }
    await t.step("a connection that never sends its head", async () => {
      const conn = await Deno.connect({ transport: "unix", path: proxy.path });
      await conn.write(new TextEncoder().encode(`${proxy.token}\nGET http`));
      const closed = conn.read(new Uint8Array(1024)).catch(() => null);
      assert.equal(await within(closed, 5000, "a head half sent"), null);
      conn.close();
    });
    await t.step("a name that never resolves", async () => {
      const answer = await within(
        exchange(
          unresolved,
          `${unresolved.token}\nCONNECT slow.test:443 HTTP/1.1\r\n\r\n`,
        ),
        5000,
        "resolving",
      );
      assert.match(answer, /^HTTP\/1.1 504 /);
    });
  } finally {
    proxy.close();
    unresolved.close();
    target.close();
  }
});
