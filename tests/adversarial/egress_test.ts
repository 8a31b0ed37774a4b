/**
 * The http toolkit through a real host and its egress broker: names that
 * resolve inside (through /etc/hosts), address literals in every spelling,
 * and a session re-pointing the toolkit to take an operator secret
 * elsewhere. These hold with or without OS confinement: the host makes the
 * request, not the sandbox.
 */

import assert from "node:assert/strict";
import { createHost, type Host } from "../../runtime/host.ts";
import { CONFINEMENT_MODE } from "./_confined.ts";

const SECRET = "op-secret-e2e-5d1c";
const SECRET_ENV = "SKILLBOX_TEST_EGRESS_SECRET";
// Every host the tests aim at, allowed by the policy and the toolkit, so
// that only the broker's address rules stand in the way.
const TARGETS = [
  "localhost",
  "127.0.0.1",
  "0.0.0.0",
  "[::1]",
  "[::ffff:7f00:1]",
  "169.254.169.254",
  "[fd00::1]",
  "192.168.0.1",
];

interface Fixture {
  host: Host;
  port: number;
  seen: Array<{ host: string | null; auth: string | null }>;
  close(): Promise<void>;
}

async function start(allowPrivate: string[]): Promise<Fixture> {
  const seen: Fixture["seen"] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const auth = req.headers.get("authorization");
      seen.push({ host: req.headers.get("host"), auth });
      return new Response(`you sent ${auth}`);
    },
  );
  Deno.env.set(SECRET_ENV, `Bearer ${SECRET}`);
  const host = createHost({
    config: {
      skills: [],
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 8,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
        confinement: CONFINEMENT_MODE,
      },
      egress: {
        allowPrivateHosts: allowPrivate,
        secrets: [{
          // The test's server speaks plain http: the binding says so.
          host: "http://localhost",
          header: "Authorization",
          valueEnv: SECRET_ENV,
          toolkits: ["http"],
        }],
        maxResponseBytes: 1 << 20,
        timeoutSeconds: 10,
      },
      policy: { permissions: { net: TARGETS } },
    },
  });
  await host.ready;
  return {
    host,
    port: server.addr.port,
    seen,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await server.shutdown();
      Deno.env.delete(SECRET_ENV);
    },
  };
}

async function configure(host: Host, allowed: string[]) {
  const resp = await host.request({
    type: "toolkit/configure/req",
    toolkit_name: "http",
    config: { allowed_hosts: allowed },
  });
  assert.equal(resp.status, "ok", String(resp.message));
}

Deno.test("the http toolkit cannot reach loopback, private or metadata addresses in any spelling", async () => {
  const f = await start([]);
  try {
    await configure(f.host, TARGETS);
    const urls = [
      `http://localhost:${f.port}/`, // /etc/hosts, resolved in the host
      `http://127.0.0.1:${f.port}/`,
      `http://2130706433:${f.port}/`,
      `http://0x7f000001:${f.port}/`,
      `http://0.0.0.0:${f.port}/`,
      `http://[::1]:${f.port}/`,
      `http://[::ffff:127.0.0.1]:${f.port}/`,
      `http://[::ffff:7f00:1]:${f.port}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00::1]/",
      "http://192.168.0.1/",
    ];
    for (const url of urls) {
      const result = await f.host.callTool("http_request", { url });
      assert.equal(result.success, false, url);
      assert.match(
        String(result.error),
        /not a public address/,
        `${url}: ${result.error}`,
      );
    }
    assert.deepEqual(f.seen, [], "nothing reached the server");
    // The host keeps serving.
    const again = await f.host.callTool("http_request", {
      url: "http://localhost/",
    });
    assert.equal(again.success, false);
  } finally {
    await f.close();
  }
});

Deno.test("an operator secret goes only to its host, whatever a session configures", async () => {
  const f = await start(["localhost", "127.0.0.1"]);
  try {
    await configure(f.host, ["localhost", "127.0.0.1"]);
    const own = await f.host.callTool("http_request", {
      url: `http://localhost:${f.port}/`,
    });
    assert.equal(own.success, true, String(own.error));
    assert.equal(f.seen.at(-1)?.auth, `Bearer ${SECRET}`);
    // The server echoed it: the sandbox (and the client) never see it.
    assert.doesNotMatch(JSON.stringify(own), new RegExp(SECRET));

    // Re-pointed at another host (same server, another name): no secret.
    const other = await f.host.callTool("http_request", {
      url: `http://127.0.0.1:${f.port}/`,
    });
    assert.equal(other.success, true, String(other.error));
    assert.equal(f.seen.at(-1)?.auth, null);

    // A session narrowing the toolkit cannot widen it back.
    await configure(f.host, ["localhost"]);
    const narrowed = await f.host.callTool("http_request", {
      url: `http://127.0.0.1:${f.port}/`,
    });
    assert.equal(narrowed.success, false);
    assert.match(String(narrowed.error), /not allowed/);
  } finally {
    await f.close();
  }
});
