/**
 * A client holding two valid tokens must not get more out of a token than
 * its quota by switching tokens on a session it already holds. Against a
 * real host on loopback, on every transport that carries a token: a second
 * handshake (WebSocket, HTTP+SSE `POST /a2e/send`), and a second bearer on
 * an MCP session. Every wait is bounded; no timing thresholds: a call that
 * did not start is proven by a ping answered after it on the same session.
 */

import assert from "node:assert/strict";
import type { Capability } from "../../runtime/capability.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { tool } from "../../protocol/tool.ts";
import { createHost, type Host } from "../../runtime/host.ts";
import { openWs, type RawWs } from "../support/ws_client.ts";
import { openSse } from "../support/sse_client.ts";
import { initializeRequest } from "../support/mcp_fixtures.ts";
import { type Msg, RAW } from "../support/wire.ts";
import { HOST_FLAGS, HOST_MAIN } from "../support/host_cli.ts";

const A = "token-a";
const B = "token-b";

/** Calls running now, and the most at once, by the token that ran them. */
interface Running {
  now: Map<string, number>;
  peak: Map<string, number>;
}

/** A `hang` tool that counts its running calls by the session's token. */
function countingTools(running: Running): Capability {
  const add = (token: string, by: number) => {
    const now = (running.now.get(token) ?? 0) + by;
    running.now.set(token, now);
    running.peak.set(token, Math.max(running.peak.get(token) ?? 0, now));
  };
  return {
    name: "tools",
    handlers: {
      "tool/list/req": () =>
        Promise.resolve({
          tools: [tool({ name: "hang", description: "Waits until cancelled" })],
        }),
      "tool/call/req": async ({ session, signal }) => {
        // The token this call was made with, read when it starts.
        const token = session.token;
        add(token, 1);
        try {
          await new Promise((resolve) =>
            signal.addEventListener("abort", resolve, { once: true })
          );
        } finally {
          add(token, -1);
        }
        throw new SkillboxError("runtime_error", "Cancelled");
      },
    },
  };
}

async function start(): Promise<{ host: Host; url: string; running: Running }> {
  const running: Running = { now: new Map(), peak: new Map() };
  const host = createHost({
    config: {
      tokens: [A, B],
      // A is not limited; B runs one call at a time.
      policy: { tokens: { [B]: { max_parallel: 1 } } },
      limits: { maxParallel: 4, maxParallelHost: 64 },
    },
    capabilities: [countingTools(running)],
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return { host, url, running };
}

function hang(id: string): string {
  return JSON.stringify({
    type: "tool/call/req",
    id,
    version: "1.0",
    ts: Date.now() / 1000,
    tool_name: "hang",
    arguments: {},
  });
}

/** One A2E session as the attacker drives it, over some transport. */
interface Wire {
  send(raw: string): Promise<void>;
  next(): Promise<Msg>;
  close(): Promise<void>;
}

function overWs(ws: RawWs): Wire {
  return {
    send: (raw) => Promise.resolve(ws.send(raw)),
    next: () => ws.next(10_000),
    close: () => ws.close(),
  };
}

async function overSse(base: string, token: string): Promise<Wire> {
  const sse = await openSse(base, {
    headers: { authorization: `Bearer ${token}` },
  });
  const stream = await sse.stream();
  return {
    async send(raw) {
      const res = await sse.send(raw);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    },
    next: () => stream.next(10_000),
    close: () => stream.close(),
  };
}

/**
 * Sends a ping and reads up to its pong: every call sent before it on this
 * session has started or is waiting for a slot.
 */
async function settle(wire: Wire, id: string): Promise<void> {
  await wire.send(RAW.ping(id));
  for (let i = 0; i < 100; i++) {
    const msg = await wire.next();
    if (msg.type === "pong" && msg.req_id === id) return;
  }
  throw new Error(`No pong for "${id}"`);
}

async function handshake(wire: Wire, id: string, token: string): Promise<Msg> {
  await wire.send(RAW.handshake(id, { auth_token: token }));
  for (let i = 0; i < 100; i++) {
    const msg = await wire.next();
    if (msg.type === "handshake/resp" && msg.req_id === id) return msg;
  }
  throw new Error(`No answer to the handshake "${id}"`);
}

for (const transport of ["WebSocket", "HTTP+SSE"] as const) {
  Deno.test(`a session that switches to a second token by a new handshake (${transport}) gets no more than that token's max_parallel`, async () => {
    const { host, url, running } = await start();
    const wires: Wire[] = [];
    try {
      // The attacker's session, admitted with A, starts a call under A.
      const attacker = transport === "WebSocket"
        ? overWs(await openWs(`${url.replace("http", "ws")}/a2e`))
        : await overSse(`${url}/a2e`, A);
      wires.push(attacker);
      assert.equal((await handshake(attacker, "h1", A)).ok, true);
      await attacker.send(hang("a1"));
      await settle(attacker, "p1");
      assert.equal(running.now.get(A), 1);
      // Then presents B on the same session, while that call runs.
      const switched = await handshake(attacker, "h2", B);
      await attacker.send(hang("a2"));
      await attacker.send(hang("a3"));
      await settle(attacker, "p2");
      // A session that presents B the ordinary way, and asks for two calls.
      const holder = overWs(await openWs(`${url.replace("http", "ws")}/a2e`));
      wires.push(holder);
      assert.equal((await handshake(holder, "h3", B)).ok, true);
      await holder.send(hang("b1"));
      await holder.send(hang("b2"));
      await settle(holder, "p3");
      // Calls made with B never ran more than one at a time.
      assert.equal(
        running.peak.get(B),
        1,
        `calls running with ${B}: ${running.peak.get(B)}`,
      );
      // The switch itself was refused, saying why, and the session went on
      // with the token it was admitted with: its calls ran under A.
      assert.equal(switched.ok, false, JSON.stringify(switched));
      assert.deepEqual(switched.accepted_caps, []);
      assert.match(
        String(switched.reason),
        /^Cannot change the session's token: .*open a new session/,
      );
      assert.equal(running.now.get(A), 3);
      await settle(attacker, "p4");
    } finally {
      for (const wire of wires) await wire.close();
      await host.close({ timeoutSeconds: 1 });
    }
  });
}

Deno.test("an MCP session answers only the bearer that opened it: another valid token on its id runs nothing", async () => {
  const { host, url, running } = await start();
  const headers = (
    token: string,
    session?: string,
  ): Record<string, string> => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    ...(session ? { "mcp-session-id": session } : {}),
  });
  try {
    const init = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: headers(A),
      body: JSON.stringify(initializeRequest("switcher")),
    });
    assert.equal(init.status, 200);
    await init.body?.cancel();
    const session = init.headers.get("mcp-session-id")!;
    const ready = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: headers(A, session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/initialized",
      }),
    });
    assert.equal(ready.status, 202);
    await ready.body?.cancel();
    const call = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: headers(B, session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "hang", arguments: {} },
      }),
    });
    assert.equal(call.status, 404);
    await call.body?.cancel();
    assert.deepEqual([...running.peak.keys()], []);
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("a session of `host --stdio` keeps the token of its first accepted handshake", async () => {
  const skills = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...HOST_FLAGS, HOST_MAIN, "--stdio", "--skills", skills],
    env: { SKILLBOX_TOKENS: `${A},${B}` },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const wire: Wire = {
    send: (raw) => writer.write(new TextEncoder().encode(raw + "\n")),
    async next() {
      const timer = setTimeout(() => lines.cancel(), 30_000);
      try {
        while (!buffer.includes("\n")) {
          const { done, value } = await lines.read();
          if (done) throw new Error("stdout ended");
          buffer += value;
        }
      } finally {
        clearTimeout(timer);
      }
      const at = buffer.indexOf("\n");
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      return JSON.parse(line);
    },
    close: () => writer.close(),
  };
  try {
    assert.equal((await handshake(wire, "h1", A)).ok, true);
    const switched = await handshake(wire, "h2", B);
    assert.equal(switched.ok, false, JSON.stringify(switched));
    assert.match(String(switched.reason), /^Cannot change the session's token/);
    // Still served, under A.
    await settle(wire, "p1");
  } finally {
    await wire.close();
    await lines.cancel().catch(() => {});
    await child.status;
    await Deno.remove(skills, { recursive: true });
  }
});
