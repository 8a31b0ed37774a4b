/**
 * The egress proxy attacked from inside confined sandbox processes (real
 * pool, real bubblewrap, loopback servers): a module with a `net` grant
 * reaches its hosts only through the host's proxy, which checks every
 * request as the broker does. Each hostile module also gets the relay's
 * port in its grant, so it can speak raw proxy requests past Deno's own
 * check, and only the proxy stands in the way. Ignored, saying why, where
 * confinement does not work.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  createSandbox,
  type SandboxPool,
} from "../../runtime/sandbox/sandbox.ts";
import { EgressBroker } from "../../runtime/egress/broker.ts";
import { openEgressProxy } from "../../runtime/egress/proxy.ts";
import { mcpServerCommand } from "../../runtime/mcp/imported_process.ts";
import { confineArgs } from "../../runtime/confine/confine.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { SandboxOutcome } from "../../runtime/sandbox/types.ts";
import { confinement, NEEDS_CONFINEMENT } from "./_confined.ts";

const ignore = !confinement.active;
const RELAY = "127.0.0.1:3128";

// The module every test loads (in its own folder: its own principal).
const PROBE = `
async function readAll(conn: Deno.Conn): Promise<string> {
  const timer = setTimeout(() => { try { conn.close(); } catch { /* */ } }, 5000);
  const chunks: string[] = [];
  const buf = new Uint8Array(65536);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(new TextDecoder().decode(buf.subarray(0, n)));
    }
  } catch { /* closed */ }
  clearTimeout(timer);
  try { conn.close(); } catch { /* */ }
  return chunks.join("");
}
export default {
  kind: "tool",
  name: "probe",
  description: "Probes the network",
  input: { type: "object" },
  async run(a: { op: string; url?: string; raw?: string; host?: string; port?: number; dir?: string }) {
    try {
      if (a.op === "fetch") {
        const r = await fetch(a.url!);
        return { status: r.status, body: await r.text() };
      }
      if (a.op === "raw") {
        const c = await Deno.connect({ hostname: "127.0.0.1", port: 3128 });
        await c.write(new TextEncoder().encode(a.raw!));
        return { reply: await readAll(c) };
      }
      if (a.op === "direct") {
        const c = await Deno.connect({ hostname: a.host!, port: a.port! });
        c.close();
        return { connected: true };
      }
      if (a.op === "sockets") {
        const out: Record<string, string> = {};
        for (const e of Deno.readDirSync(a.dir!)) {
          const c = await Deno.connect({ transport: "unix", path: a.dir + "/" + e.name });
          await c.write(new TextEncoder().encode(a.raw!));
          out[e.name] = await readAll(c);
        }
        return { replies: out };
      }
      return { error: "unknown op" };
    } catch (err) {
      return { error: String(err) };
    }
  },
};
`;

interface Fixture {
  sandbox: SandboxPool;
  port: number;
  /** Host headers the loopback server saw. */
  seen: string[];
  dirs: string[];
  probe(
    grant: Permissions,
    args: Record<string, unknown>,
    principal?: number,
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

// a.test and b.test are the operator's /etc/hosts-style names for the
// loopback server, allowed to be private by name; c.test resolves to
// loopback too but is not allowed so.
const NAMES: Record<string, string[]> = {
  "a.test": ["127.0.0.1"],
  "b.test": ["127.0.0.1"],
  "c.test": ["127.0.0.1"],
  "mixed.test": ["93.184.215.14", "10.1.2.3"],
};

function start(): Fixture {
  const seen: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(req.headers.get("host") ?? "");
      const to = new URL(req.url).searchParams.get("to");
      if (to) return Response.redirect(to, 302);
      return new Response(`hello ${req.headers.get("host")}`);
    },
  );
  const broker = new EgressBroker({
    privateHosts: ["a.test", "b.test"],
    resolve: (host) => {
      const found = NAMES[host];
      return found
        ? Promise.resolve(found)
        : import("../../runtime/egress/targets.ts").then((m) =>
          m.resolveHost(host, AbortSignal.timeout(5000))
        );
    },
  });
  const sandbox = createSandbox({
    cacheDir: null,
    memoryMb: 256,
    confinement: "required",
    egress: broker,
  });
  const dirs: string[] = [];
  async function moduleIn(n: number): Promise<string> {
    while (dirs.length <= n) {
      const dir = await Deno.makeTempDir({ prefix: "egress_probe_" });
      await Deno.writeTextFile(join(dir, "mod.ts"), PROBE);
      dirs.push(dir);
    }
    return join(dirs[n]!, "mod.ts");
  }
  return {
    sandbox,
    port: server.addr.port,
    seen,
    dirs,
    async probe(grant, args, principal = 0) {
      const path = await moduleIn(principal);
      const outcome: SandboxOutcome = await sandbox.call({
        path,
        export: "default",
        version: "v1",
        args,
        grant: { ...grant, read: [dirname(path), ...(grant.read ?? [])] },
        timeoutMs: 20_000,
        sessionId: "s1",
        callId: crypto.randomUUID(),
        config: {},
        metadata: {},
        isolation: "warm",
      }, {
        onEvent() {},
        callTool: () => Promise.reject(new Error("none")),
        chat: () => Promise.reject(new Error("none")),
      });
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      return (outcome as { value: Record<string, unknown> }).value;
    },
    async close() {
      await sandbox.close();
      await server.shutdown();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true });
    },
  };
}

function raw(lines: string[]): string {
  return lines.join("\r\n") + "\r\n\r\n";
}

Deno.test({
  name: "a module reaches a granted host only through the egress proxy" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn(t) {
    const f = start();
    try {
      const grant = { net: ["a.test"] };
      await t.step("fetch of the granted host goes through", async () => {
        const got = await f.probe(grant, {
          op: "fetch",
          url: `http://a.test:${f.port}/x`,
        });
        assert.deepEqual(got, {
          status: 200,
          body: `hello a.test:${f.port}`,
        });
      });
      await t.step("a host outside the grant: Deno refuses first", async () => {
        const got = await f.probe(grant, {
          op: "fetch",
          url: `http://b.test:${f.port}/`,
        });
        assert.match(String(got.error), /NotCapable|net access/);
      });
      await t.step(
        "no direct connection exists, by address or name",
        async () => {
          const wide = { net: ["a.test", "127.0.0.1"] };
          const byAddress = await f.probe(wide, {
            op: "direct",
            host: "127.0.0.1",
            port: f.port,
          });
          assert.match(String(byAddress.error), /refused|unreachable/i);
          const byName = await f.probe(wide, {
            op: "direct",
            host: "a.test",
            port: f.port,
          });
          assert.ok(byName.error, JSON.stringify(byName));
        },
      );
      await t.step(
        "a redirect to a name that resolves to loopback",
        async () => {
          // The client follows it itself: a new request, checked again.
          const got = await f.probe({ net: ["a.test", "c.test"] }, {
            op: "fetch",
            url: `http://a.test:${f.port}/r?to=http://c.test:${f.port}/`,
          });
          assert.equal(got.status, 403);
          assert.match(String(got.body), /c\.test.*not a public address/);
        },
      );
      assert.deepEqual(f.seen, [`a.test:${f.port}`, `a.test:${f.port}`]);
    } finally {
      await f.close();
    }
  },
});

Deno.test({
  name: "raw proxy requests past Deno's check are refused by the proxy" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn(t) {
    const f = start();
    try {
      // The relay's port in the grant: Deno lets the module speak to it
      // directly, so only the proxy's own checks stand.
      const grant = {
        net: ["a.test", "c.test", "localhost", "mixed.test", RELAY],
      };
      const send = (lines: string[]) =>
        f.probe(grant, { op: "raw", raw: raw(lines) });
      await t.step("a host not in the grant", async () => {
        const got = await send([
          `GET http://b.test:${f.port}/ HTTP/1.1`,
          `Host: b.test:${f.port}`,
        ]);
        assert.match(String(got.reply), /^HTTP\/1.1 403 /);
      });
      await t.step("granted names that resolve to loopback", async () => {
        for (const name of ["c.test", "localhost", "mixed.test"]) {
          const got = await send([
            `GET http://${name}:${f.port}/ HTTP/1.1`,
            `Host: ${name}:${f.port}`,
          ]);
          assert.match(String(got.reply), /^HTTP\/1.1 403 /, name);
          assert.match(String(got.reply), /not a public address/);
        }
      });
      await t.step("CONNECT to address literals and other hosts", async () => {
        for (
          const target of [
            `127.0.0.1:${f.port}`,
            `[::1]:${f.port}`,
            `2130706433:${f.port}`,
            `b.test:${f.port}`,
            `c.test:${f.port}`,
            `169.254.169.254:80`,
          ]
        ) {
          const got = await send([
            `CONNECT ${target} HTTP/1.1`,
            `Host: ${target}`,
          ]);
          assert.match(String(got.reply), /^HTTP\/1.1 (403|400) /, target);
        }
      });
      await t.step("CONNECT to the granted host tunnels to it", async () => {
        const got = await f.probe(grant, {
          op: "raw",
          raw: raw([
            `CONNECT a.test:${f.port} HTTP/1.1`,
            `Host: a.test:${f.port}`,
          ]) +
            raw([
              "GET /t HTTP/1.1",
              `Host: a.test:${f.port}`,
              "Connection: close",
            ]),
        });
        assert.match(String(got.reply), /^HTTP\/1.1 200 Connection/);
        assert.match(String(got.reply), /hello a.test/);
      });
      await t.step("a Host header naming another host", async () => {
        const got = await send([
          `GET http://a.test:${f.port}/ HTTP/1.1`,
          `Host: b.test:${f.port}`,
        ]);
        assert.match(String(got.reply), /^HTTP\/1.1 400 /);
      });
      await t.step("a second request pipelined behind the first", async () => {
        const got = await f.probe(grant, {
          op: "raw",
          raw: raw([
            `GET http://a.test:${f.port}/one HTTP/1.1`,
            `Host: a.test:${f.port}`,
          ]) +
            raw([
              `GET http://b.test:${f.port}/two HTTP/1.1`,
              `Host: b.test:${f.port}`,
            ]),
        });
        assert.match(String(got.reply), /hello a.test/);
        assert.doesNotMatch(String(got.reply), /b\.test/);
      });
      await t.step("a request smuggled in a chunked body", async () => {
        const inner = `GET / HTTP/1.1\r\nHost: b.test:${f.port}\r\n\r\n`;
        const got = await f.probe(grant, {
          op: "raw",
          raw: `POST http://a.test:${f.port}/ HTTP/1.1\r\n` +
            `Host: a.test:${f.port}\r\nTransfer-Encoding: chunked\r\n` +
            `Content-Length: 5\r\n\r\n0\r\n\r\n${inner}`,
        });
        assert.match(String(got.reply), /^HTTP\/1.1 400 /);
      });
      await t.step("no token, or a forged one, at the socket", async () => {
        const got = await f.probe({
          net: [...grant.net, "unix:/run/skillbox/egress.sock"],
          read: ["/run/skillbox"],
          write: ["/run/skillbox"],
        }, {
          op: "sockets",
          dir: "/run/skillbox",
          raw: raw([
            `GET http://a.test:${f.port}/ HTTP/1.1`,
            `Host: a.test:${f.port}`,
          ]),
        }, 1);
        // Its own socket, and nothing else, is in its namespace; without
        // the token even that answers nothing.
        assert.deepEqual(got, { replies: { "egress.sock": "" } });
      });
      // Only the tunnelled request and the first pipelined one arrived.
      assert.deepEqual(f.seen, [`a.test:${f.port}`, `a.test:${f.port}`]);
    } finally {
      await f.close();
    }
  },
});

Deno.test({
  name: "one principal cannot use another principal's proxy socket" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const f = start();
    const other = openEgressProxy({
      broker: new EgressBroker({ privateHosts: ["b.test"] }),
      allow: ["*"],
    });
    try {
      // The host's socket folder granted outright: every socket in it is
      // visible and connectable, and none answers without its token.
      const dir = dirname(other.path);
      const got = await f.probe({
        // Deno's unix: permission names one path; "*" lets it try them all.
        net: ["*"],
        read: [dir],
        write: [dir],
      }, {
        op: "sockets",
        dir,
        raw: `anything\nGET http://b.test:${f.port}/ HTTP/1.1\r\n` +
          `Host: b.test:${f.port}\r\n\r\n`,
      }, 2);
      const replies = (got as { replies?: Record<string, string> }).replies;
      assert.ok(replies, JSON.stringify(got));
      assert.ok(Object.keys(replies).length >= 2, JSON.stringify(got));
      for (const reply of Object.values(replies)) assert.equal(reply, "");
      assert.deepEqual(f.seen, []);
    } finally {
      other.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "an imported stdio MCP server with hosts reaches them, nothing else" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const seen: string[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => {
        seen.push(req.headers.get("host") ?? "");
        return new Response("mcp reached it");
      },
    );
    const port = server.addr.port;
    const dir = await Deno.makeTempDir({ prefix: "egress_mcp_" });
    await Deno.writeTextFile(
      join(dir, "server.ts"),
      `const out: Record<string, string> = {};
for (const url of Deno.args) {
  try { const r = await fetch(url); out[url] = r.status + " " + await r.text(); }
  catch (e) { out[url] = "error " + e; }
}
try { await Deno.connect({ hostname: "127.0.0.1", port: ${port} }); out.direct = "connected"; }
catch (e) { out.direct = "error " + e; }
console.log(JSON.stringify(out));`,
    );
    const broker = new EgressBroker({
      privateHosts: ["a.test", "b.test"],
      resolve: (host) => Promise.resolve(NAMES[host] ?? []),
    });
    try {
      const child = mcpServerCommand({
        command: Deno.execPath(),
        args: [
          "run",
          "-A",
          "--no-lock",
          "--no-config",
          join(dir, "server.ts"),
          `http://a.test:${port}/`,
          `http://b.test:${port}/`,
        ],
        cwd: dir,
        hosts: ["a.test"],
        egress: broker,
      }, confinement.layout).spawn();
      await child.stdin.close();
      const out = await child.output();
      const text = new TextDecoder().decode(out.stdout);
      const got = JSON.parse(text);
      assert.equal(got[`http://a.test:${port}/`], "200 mcp reached it");
      assert.match(got[`http://b.test:${port}/`], /^403 /);
      assert.match(got.direct, /^error .*(refused|unreachable)/i);
      assert.deepEqual(seen, [`a.test:${port}`]);
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a confined non-Deno command behind the egress relay (curl)" +
    NEEDS_CONFINEMENT,
  ignore: ignore || !Deno.statSync("/usr/bin/curl").isFile,
  async fn() {
    const seen: string[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => {
        seen.push(req.headers.get("host") ?? "");
        return new Response("curl reached it");
      },
    );
    const port = server.addr.port;
    const proxy = openEgressProxy({
      broker: new EgressBroker({
        privateHosts: ["a.test", "b.test"],
        resolve: (host) => Promise.resolve(NAMES[host] ?? []),
      }),
      allow: ["a.test"],
    });
    try {
      const cmd = confineArgs(confinement.layout!, {
        program: await Deno.realPath("/bin/sh"),
        args: [
          "-c",
          `curl -s http://a.test:${port}/; echo; curl -s -o /dev/null -w '%{http_code}' http://b.test:${port}/; echo; curl -s --noproxy '*' http://127.0.0.1:${port}/ || echo direct-failed`,
        ],
        grant: {},
        env: { PATH: "/usr/bin:/bin" },
        egress: { socket: proxy.path, token: proxy.token },
      });
      const out = await new Deno.Command(cmd.command, {
        args: cmd.args,
        env: cmd.env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
      assert.deepEqual(lines, ["curl reached it", "403", "direct-failed"]);
      assert.deepEqual(seen, [`a.test:${port}`]);
    } finally {
      proxy.close();
      await server.shutdown();
    }
  },
});
