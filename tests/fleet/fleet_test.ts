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
  fleetTest,
  PUBLIC_NAME,
  TOKEN,
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

fleetTest(
  "the live view of one host shows the runs another host starts and finishes",
  async (fleet) => {
    const [h1, h2] = fleet.hosts;
    const s = await a2eSession(h2!.url);
    const live = async () => {
      const res = await fetch(`${h1!.url}/api/live`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        // A guard against a hang, not a timing: the test fails instead.
        signal: AbortSignal.timeout(60_000),
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      return {
        async until(pattern: RegExp) {
          while (!pattern.test(text)) {
            const { value, done } = await reader.read();
            if (done) throw new Error(`The live stream ended:\n${text}`);
            text += value;
          }
          return text;
        },
        cancel: () => reader.cancel(),
      };
    };
    const first = await live();
    let second: Awaited<ReturnType<typeof live>> | null = null;
    try {
      await first.until(/event: hello/);
      // A call long enough to be written `running` first, then finished.
      const call = s.call("nap", { ms: 1500 });
      await first.until(
        /event: started\ndata: [^\n]*"name":"nap"[^\n]*"host":"h2"/,
      );
      // A viewer arriving now finds it running in its first snapshot.
      second = await live();
      await second.until(
        /event: hello\ndata: [^\n]*"name":"nap"[^\n]*"host":"h2"/,
      );
      ok(await call);
      await first.until(
        /event: finished\ndata: [^\n]*"name":"nap"[^\n]*"host":"h2"/,
      );
    } finally {
      await first.cancel();
      await second?.cancel();
      await s.close();
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
