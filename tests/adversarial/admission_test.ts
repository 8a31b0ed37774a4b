/**
 * Admission and fairness against a real host on loopback: clients without a
 * token cannot fill the host for a token holder, sessions that never
 * handshake expire, requests that run no code never wait behind calls, a
 * few sessions with never-ending calls cannot stop another session's call,
 * and per-token quotas refuse with a clear error. Every loop is bounded and
 * every wait has a bound; no timing thresholds.
 */

import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import type { Capability } from "../../runtime/capability.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { tool, toolOutcome } from "../../protocol/tool.ts";
import { createHost, type Host } from "../../runtime/host.ts";
import type { LimitsConfig } from "../../runtime/config_schema.ts";
import { openWs, type RawWs } from "../support/ws_client.ts";
import { openSse } from "../support/sse_client.ts";
import { RAW } from "../support/wire.ts";
import type { Msg } from "../support/wire.ts";
import { within } from "./_helpers.ts";

const TOKEN = "holder-token";

/** A tools capability: `hang` waits for its signal, `quick` answers. */
function hangingTools(): { capability: Capability; started: () => number } {
  let started = 0;
  const capability: Capability = {
    name: "tools",
    handlers: {
      "tool/list/req": () =>
        Promise.resolve({
          tools: [
            tool({ name: "hang", description: "Waits until cancelled" }),
            tool({ name: "quick", description: "Answers at once" }),
          ],
        }),
      "tool/call/req": async ({ request, signal }) => {
        if (request.toolName === "hang") {
          started++;
          await new Promise((resolve) =>
            signal.addEventListener("abort", resolve, { once: true })
          );
          throw new SkillboxError("runtime_error", "Cancelled");
        }
        return {
          result: toolOutcome({
            success: true,
            toolName: "quick",
            data: "done",
            durationMs: 0,
          }),
        };
      },
    },
  };
  return { capability, started: () => started };
}

async function start(
  limits: Partial<LimitsConfig>,
  extra: { tokens?: string[]; policy?: Record<string, unknown> } = {},
): Promise<{ host: Host; http: string; ws: string; started: () => number }> {
  const tools = hangingTools();
  const host = createHost({
    config: { tokens: [TOKEN], ...extra, limits },
    capabilities: [tools.capability],
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    http: url,
    ws: `${url.replace("http", "ws")}/a2e`,
    started: tools.started,
  };
}

function call(id: string, toolName: string): string {
  return JSON.stringify({
    type: "tool/call/req",
    id,
    version: "1.0",
    ts: Date.now() / 1000,
    tool_name: toolName,
    arguments: {},
  });
}

function list(id: string): string {
  return JSON.stringify({
    type: "tool/list/req",
    id,
    version: "1.0",
    ts: Date.now() / 1000,
  });
}

/** Reads messages until one answers `reqId` (events skipped), bounded. */
async function answer(ws: RawWs, reqId: string): Promise<Msg> {
  for (let i = 0; i < 1000; i++) {
    const msg = await ws.next(10_000);
    if (msg.req_id === reqId && !String(msg.type).endsWith("/event")) {
      return msg;
    }
  }
  throw new Error(`No answer to "${reqId}"`);
}

/** Runs `total` tasks, at most `width` at a time. */
async function flood(
  total: number,
  width: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < total) await task(next++);
  }));
}

Deno.test("a token holder gets in while 2,000 token-less sessions and 200 unauthenticated WebSockets flood", async () => {
  const { host, http, ws } = await start({
    maxSessions: 4,
    maxPendingSessions: 64,
    handshakeTimeoutSeconds: 30,
  });
  const guests: WebSocket[] = [];
  try {
    const statuses = new Map<number, number>();
    const attack = (async () => {
      await flood(200, 20, async () => {
        const socket = new WebSocket(ws);
        guests.push(socket);
        await new Promise((resolve) => {
          socket.onopen = resolve;
          socket.onerror = resolve;
        });
      });
      await flood(2000, 20, async () => {
        const res = await fetch(`${http}/a2e/session`, { method: "POST" });
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      });
    })();
    // During the flood: a holder presenting its token in the Authorization
    // header is admitted at once, over HTTP+SSE.
    const res = await fetch(`${http}/a2e/session`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(res.status, 200);
    const { session_id: sseId } = await res.json();
    // Its requests show the token too: a session opened with it answers
    // no other.
    const sent = await fetch(`${http}/a2e/send`, {
      method: "POST",
      headers: { "x-session-id": sseId, authorization: `Bearer ${TOKEN}` },
      body: RAW.handshake("h1", { auth_token: TOKEN }),
    });
    assert.equal(sent.status, 200);
    await sent.body?.cancel();
    await within(attack, 120_000, "the flood");
    // Token-less sessions were never refused for lack of room: the oldest
    // pending ones made way.
    assert.deepEqual([...statuses.keys()], [200]);
    // After the flood, pending is full of sockets that never handshake;
    // plain handshakes with the token still get in, up to max_sessions.
    const holders = [];
    for (let i = 0; i < 3; i++) {
      const client = await connect(ws, { token: TOKEN, timeout: 10_000 });
      holders.push(client);
      assert.equal(typeof (await client.ping()).uptimeSeconds, "number");
      assert.deepEqual(
        (await client.tools.list()).map((t) => t.name),
        ["hang", "quick"],
      );
    }
    // The SSE holder and three WebSocket holders fill max_sessions (4).
    await assert.rejects(
      connect(ws, { token: TOKEN, timeout: 10_000 }),
      /at most 4 sessions/,
    );
    // /mcp checks the bearer on every request: token-less clients open no
    // session there at all.
    for (let i = 0; i < 50; i++) {
      const mcp = await fetch(`${http}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(mcp.status, 401);
      await mcp.body?.cancel();
    }
    // A wrong Authorization header is refused outright.
    const bad = await fetch(`${http}/a2e/session`, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(bad.status, 401);
    await bad.body?.cancel();
    for (const client of holders) await client.close();
  } finally {
    for (const socket of guests) socket.close();
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("sessions that never complete a handshake expire, over WebSocket and HTTP+SSE", async () => {
  const { host, http, ws } = await start({ handshakeTimeoutSeconds: 0.3 });
  try {
    const silent = await openWs(ws);
    const wrong = await openWs(ws);
    wrong.send(RAW.handshake("h1", { auth_token: "guess" }));
    assert.equal((await wrong.next()).ok, false);
    for (const socket of [silent, wrong]) {
      const event = await within(socket.closed, 10_000, "pending WS close");
      assert.match(event.reason, /Handshake not completed within 0\.3 s/);
    }
    const res = await fetch(`${http}/a2e/session`, { method: "POST" });
    const { session_id: id } = await res.json();
    const stream = await fetch(`${http}/a2e/stream`, {
      headers: { "x-session-id": id },
    });
    // The stream ends when the session expires.
    await within(stream.text(), 10_000, "pending SSE stream end");
    const late = await fetch(`${http}/a2e/send`, {
      method: "POST",
      headers: { "x-session-id": id },
      body: RAW.ping("p1"),
    });
    assert.equal(late.status, 404);
    await late.body?.cancel();
    // An accepted handshake stops the clock.
    const client = await connect(ws, { token: TOKEN });
    const kept = await openWs(ws);
    kept.send(RAW.handshake("h2", { auth_token: TOKEN }));
    assert.equal((await kept.next()).ok, true);
    const probe = await openWs(ws);
    await within(probe.closed, 10_000, "a later pending session's expiry");
    // Outlived a pending session's whole life: still open and served.
    kept.send(RAW.ping("p2"));
    assert.equal((await kept.next()).type, "pong");
    await kept.close();
    await client.close();
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("8 sessions with never-ending calls cannot stop a 9th session's list and call", async () => {
  const { host, ws, started } = await start(
    { maxParallelHost: 4, maxParallel: 4 },
    { tokens: [] },
  );
  const hogs: RawWs[] = [];
  try {
    for (let s = 0; s < 8; s++) {
      const hog = await openWs(ws);
      hogs.push(hog);
      for (let c = 0; c < 4; c++) hog.send(call(`hog${s}-${c}`, "hang"));
    }
    // Each session's first call runs (its floor), plus the 4 pool slots.
    // Bounded by time, not by a count of pings: on a loaded machine the
    // sandbox takes longer to start the last ones.
    const until = Date.now() + 30_000;
    for (let i = 0; started() < 12 && Date.now() < until; i++) {
      hogs[0]!.send(RAW.ping(`wait${i}`));
      await answer(hogs[0]!, `wait${i}`);
    }
    assert.equal(started(), 12);
    const ninth = await openWs(ws);
    ninth.send(list("l1"));
    const listed = await answer(ninth, "l1");
    assert.equal(listed.type, "tool/list/resp");
    ninth.send(call("q1", "quick"));
    const quick = await answer(ninth, "q1");
    assert.equal(quick.type, "tool/call/resp");
    assert.equal((quick.data as Msg).data, "done");
    // A hog's own list is not stuck behind its queued calls either.
    hogs[1]!.send(list("l2"));
    assert.equal((await answer(hogs[1]!, "l2")).type, "tool/list/resp");
    await ninth.close();
  } finally {
    for (const hog of hogs) await hog.close();
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("per-token quotas refuse with a clear error and spare other tokens", async () => {
  const { host, ws } = await start({}, {
    tokens: [TOKEN, "other-token"],
    policy: {
      tokens: { [TOKEN]: { max_sessions: 1, calls_per_minute: 2 } },
    },
  });
  try {
    const first = await connect(ws, { token: TOKEN });
    await assert.rejects(
      connect(ws, { token: TOKEN }),
      (error: unknown) =>
        error instanceof SkillboxError &&
        /token's quota of 1 sessions is used up/.test(error.message),
    );
    const other = await connect(ws, { token: "other-token" });
    await first.tools.call("quick", {});
    await first.tools.call("quick", {});
    await assert.rejects(
      first.tools.call("quick", {}),
      (error: unknown) =>
        error instanceof SkillboxError && error.retryable &&
        /quota of 2 calls per minute is used up/.test(error.message),
    );
    // Lists run no code and are not counted.
    assert.equal((await first.tools.list()).length, 2);
    for (let i = 0; i < 3; i++) await other.tools.call("quick", {});
    await first.close();
    await other.close();
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});

Deno.test("a session opened with a valid Bearer header is authenticated: it pings before a handshake, and a handshake without a token keeps it", async () => {
  const { host, http } = await start({});
  try {
    const sse = await openSse(`${http}/a2e`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const stream = await sse.stream();
    await (await sse.send(RAW.ping("p1"))).body?.cancel();
    const pong = await stream.next(10_000);
    assert.equal(pong.type, "pong", JSON.stringify(pong));
    // The Python SDK sends auth_token "" unless told otherwise.
    await (await sse.send(RAW.handshake("h1", { auth_token: "" }))).body
      ?.cancel();
    const shake = await stream.next(10_000);
    assert.equal(shake.type, "handshake/resp");
    assert.equal(shake.ok, true, JSON.stringify(shake));
    await (await sse.send(call("c1", "quick"))).body?.cancel();
    const answer = await stream.next(10_000);
    assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
    // Without the header, the same messages are refused as before.
    const guest = await openSse(`${http}/a2e`);
    const guestStream = await guest.stream();
    await (await guest.send(RAW.ping("p2"))).body?.cancel();
    assert.equal((await guestStream.next(10_000)).type, "error");
    await (await guest.send(RAW.handshake("h2", { auth_token: "" }))).body
      ?.cancel();
    assert.equal((await guestStream.next(10_000)).ok, false);
    await guestStream.close();
    await stream.close();
  } finally {
    await host.close();
  }
});
