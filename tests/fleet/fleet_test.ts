// A two-host fleet with the real engines: PostgreSQL shared by two host
// processes, HAProxy (deploy/haproxy.cfg) in front. The Python A2E SDK
// cannot be installed here (PyPI is unreachable), so the repo's raw
// HTTP+SSE client, which speaks exactly what the SDK speaks, stands in.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  a2eSession,
  allRuns,
  api,
  type FleetHost,
  fleetTest,
  type LiveViewer,
  liveViewer,
  PUBLIC_NAME,
  TOKEN,
  TOKEN_X,
  TOKEN_Y,
  until,
} from "./_fleet.ts";
import type { Msg } from "../support/wire.ts";

function ok(answer: Msg): void {
  assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
  assert.equal((answer.data as Msg).success, true, JSON.stringify(answer));
}

// Hosts that ran the runs of each client, by the `client` argument.
function hostsByClient(runs: Msg[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const run of runs) {
    const client = (run.arguments as Msg | null)?.client;
    if (typeof client !== "string") continue;
    const hosts = out.get(client) ?? new Set();
    hosts.add(String(run.host));
    out.set(client, hosts);
  }
  return out;
}

async function mcpClient(base: string): Promise<Client> {
  const client = new Client({ name: "fleet", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return client;
}

fleetTest(
  "a fleet behind HAProxy: sessions stick to one host, spread over both, and either host lists every run",
  async (fleet) => {
    const { balancer, hosts } = fleet;
    const SSE = 16, MCP = 6, CALLS = 5;
    const sse = await Promise.all(
      Array.from({ length: SSE }, () => a2eSession(balancer)),
    );
    const mcp: Client[] = await Promise.all(
      Array.from({ length: MCP }, () => mcpClient(balancer)),
    );
    try {
      await Promise.all([
        ...sse.map(async (s, i) => {
          for (let n = 0; n < CALLS; n++) {
            ok(await s.call("echo", { client: `sse${i}`, n }));
          }
        }),
        ...mcp.map(async (c, i) => {
          for (let n = 0; n < CALLS; n++) {
            const r = await c.callTool({
              name: "echo",
              arguments: { client: `mcp${i}`, n },
            }) as CallToolResult;
            assert.notEqual(r.isError, true, JSON.stringify(r));
          }
        }),
      ]);
    } finally {
      await Promise.all(sse.map((s) => s.close()));
      await Promise.all(mcp.map((c) => c.close()));
    }
    // Each host, asked directly, lists the same runs: every host's.
    const [one, two] = await Promise.all(
      hosts.map((h) => allRuns(h.url, "name=echo")),
    );
    assert.equal(one!.length, (SSE + MCP) * CALLS);
    assert.deepEqual(
      one!.map((r) => r.id).sort(),
      two!.map((r) => r.id).sort(),
    );
    const byClient = hostsByClient(one!);
    assert.equal(byClient.size, SSE + MCP);
    for (const [client, ran] of byClient) {
      assert.equal(ran.size, 1, `${client} was served by ${[...ran]}`);
    }
    const used = new Set([...byClient.values()].flatMap((s) => [...s]));
    assert.deepEqual([...used].sort(), ["h1", "h2"]);
    // A run made on one host reads back in full on the other, and the
    // statistics count every host's runs.
    const made = one!.find((r) => r.host === "h1")!;
    const detail = await api(hosts[1]!.url, `/api/runs/${made.id}`);
    assert.equal((detail.run as Msg).host, "h1");
    for (const h of hosts) {
      const stats = await api(h.url, "/api/stats");
      const echo = (stats.stats as Msg[]).find((s) => s.name === "echo");
      assert.equal(echo?.calls, (SSE + MCP) * CALLS, JSON.stringify(echo));
    }
  },
);

// The run whose `finished` event carries `marker` (in its arguments),
// once its `started` event was seen before it.
async function startedThenFinished(
  live: LiveViewer,
  marker: string,
): Promise<Msg> {
  const text = await live.until(
    new RegExp(`event: finished\ndata: [^\n]*${marker}`),
  );
  const line = text.split("\n").find((l) =>
    l.startsWith("data: ") && l.includes(marker)
  )!;
  const run = JSON.parse(line.slice("data: ".length)) as Msg;
  const started = text.indexOf(`event: started\ndata: {"id":"${run.id}"`);
  const finished = text.indexOf(`event: finished\ndata: {"id":"${run.id}"`);
  assert.ok(
    started >= 0 && started < finished,
    `started before finished for ${marker}:\n${text}`,
  );
  return run;
}

// The runs a token's overview lists as running.
async function overviewRunning(base: string, token: string): Promise<Msg[]> {
  return (await api(base, "/api/overview", { token })).running as Msg[];
}

fleetTest(
  "each host's live view and overview show the fleet's runs, and each token only its own",
  async (fleet) => {
    const [h1, h2] = fleet.hosts as [FleetHost, FleetHost];
    const admin = await liveViewer(h1.url);
    const x = await liveViewer(h1.url, { token: TOKEN_X });
    const sy = await a2eSession(h2.url, { token: TOKEN_Y });
    const sx = await a2eSession(h2.url, { token: TOKEN_X });
    const naps: Promise<Msg>[] = [];
    try {
      await admin.until(/event: hello/);
      await x.until(/event: hello/);
      // Calls of a millisecond, far shorter than the store's flush, made
      // on h2: h1's viewers see each start, then its end. Y's first, so
      // it reaches h1 before X's does.
      ok(await sy.call("echo", { client: "y-secret" }));
      ok(await sx.call("echo", { client: "x-own" }));
      const yRun = await startedThenFinished(admin, "y-secret");
      const xRun = await startedThenFinished(admin, "x-own");
      assert.equal((await startedThenFinished(x, "x-own")).id, xRun.id);
      assert.match(admin.text, /event: started\ndata: [^\n]*"host":"h2"/);
      // Token X sees nothing of Y's on any host: no event, id or session.
      const [ySession, xSession] = [yRun.session, xRun.session] as string[];
      for (const secret of [yRun.id as string, "y-secret", ySession!]) {
        assert.ok(!x.text.includes(secret), `X saw ${secret}:\n${x.text}`);
      }

      // Runs in progress on h2, each token's, in h1's overview.
      naps.push(sy.call("nap", { ms: 600_000, client: "y-nap" }));
      naps.push(sx.call("nap", { ms: 600_000, client: "x-nap" }));
      const both = await until("h1's overview lists both naps", async () => {
        const running = await overviewRunning(h1.url, TOKEN);
        return running.filter((r) => r.name === "nap").length === 2
          ? running
          : undefined;
      });
      assert.deepEqual(both.map((r) => r.host), ["h2", "h2"]);
      const overview = await api(h1.url, "/api/overview");
      const hosts = overview.hosts as Msg[];
      assert.deepEqual(
        hosts.map((h) => [h.id, h.self, h.alive]),
        [["h1", true, true], ["h2", false, true]],
      );
      assert.equal(hosts[1]!.running, 2);
      assert.equal(typeof hosts[1]!.last_seen_ms, "number");
      // X's overview lists X's nap on h2 and not Y's; Y's the other way.
      const seenBy = async (token: string) => {
        const view = await api(h1.url, "/api/overview", { token });
        const sessions = (view.running as Msg[]).map((r) => r.session);
        return { sessions, hosts: (view.hosts as Msg[]).map((h) => h.id) };
      };
      assert.deepEqual(await seenBy(TOKEN_X), {
        sessions: [xSession],
        hosts: ["h1", "h2"],
      });
      assert.deepEqual((await seenBy(TOKEN_Y)).sessions, [ySession]);
      // A viewer arriving now finds the naps running in its first snapshot.
      const late = await liveViewer(h1.url, { token: TOKEN_X });
      try {
        const hello = await late.until(/event: hello\ndata: [^\n]*\n/);
        assert.match(hello, new RegExp(`"session":"${xSession}"`));
        assert.ok(!hello.includes(ySession!), hello);
      } finally {
        await late.cancel();
      }
    } finally {
      await admin.cancel();
      await x.cancel();
      await sy.close();
      await sx.close();
      await Promise.all(naps);
    }
  },
);

fleetTest(
  "hosts behind the balancer answer to its name in listen.allowed_hosts, and refuse others",
  async (fleet) => {
    const port = Number(new URL(fleet.balancer).port);
    const ask = async (name: string) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(new TextEncoder().encode(
        `GET /health HTTP/1.1\r\nHost: ${name}\r\nConnection: close\r\n\r\n`,
      ));
      const reply = await new Response(conn.readable).text();
      return reply.split("\r\n")[0];
    };
    assert.match((await ask(PUBLIC_NAME))!, / 200 /);
    assert.match((await ask("evil.example"))!, / 403 /);
  },
);
