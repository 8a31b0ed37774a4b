/**
 * The TS client end to end against a real host (`createHost`) over a real
 * WebSocket: handshake and auth, ping, the host's errors, events streamed by
 * a capability, push messages and the host going away. A tiny "tools"
 * capability is plugged in through the public Capability contract so that
 * events and results travel the real dispatcher and transport.
 */

import assert from "node:assert/strict";
import { type Client, connect, ConnectionClosedError } from "../client/mod.ts";
import type { Capability } from "../runtime/capability.ts";
import { SkillboxError } from "../protocol/errors.ts";
import { encodeEvent } from "../protocol/responses.ts";
import { type CallEvent, tool, toolOutcome } from "../protocol/tool.ts";
import { createHost, type Host } from "../runtime/host.ts";

const TOKEN = "e2e-token";

const testTools: Capability = {
  name: "tools",
  handlers: {
    "tool/list/req": () =>
      Promise.resolve({
        tools: [
          tool({ name: "count", description: "Count to n" }),
          tool({ name: "hang", description: "Wait until cancelled" }),
        ],
      }),
    "tool/call/req": async ({ request, session, signal }) => {
      const started = performance.now();
      if (request.toolName === "count") {
        const n = Number(request.arguments.n ?? 0);
        for (let i = 0; i < n; i++) {
          session.send(encodeEvent("tool/event", request.id, {
            kind: "progress",
            data: { pct: ((i + 1) / n) * 100, message: `at ${i + 1}` },
            seq: i,
          }));
        }
        return {
          result: toolOutcome({
            success: true,
            toolName: "count",
            data: n,
            durationMs: Math.round(performance.now() - started),
          }),
        };
      }
      if (request.toolName === "hang") {
        await new Promise((resolve) =>
          signal.addEventListener("abort", resolve, { once: true })
        );
        throw new SkillboxError("runtime_error", "Cancelled");
      }
      throw new SkillboxError(
        "unknown_tool",
        `Unknown tool "${request.toolName}"`,
      );
    },
  },
};

async function startHost(): Promise<{ host: Host; url: string }> {
  const host = createHost({
    config: { tokens: [TOKEN] },
    capabilities: [testTools],
  });
  const address = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return { host, url: `${address.url.replace("http", "ws")}/a2e` };
}

async function withClient(
  body: (client: Client, host: Host) => void | Promise<void>,
): Promise<void> {
  const { host, url } = await startHost();
  const client = await connect(url, { token: TOKEN, agentId: "e2e" });
  try {
    await body(client, host);
  } finally {
    await client.close();
    await host.close({ timeoutSeconds: 1 });
  }
}

Deno.test("connect() is refused with the host's reason for a wrong or missing token", async (t) => {
  const { host, url } = await startHost();
  for (
    const [name, token, reason] of [
      ["wrong token", "nope", /Invalid auth token/],
      ["missing token", undefined, /Missing auth token/],
    ] as const
  ) {
    await t.step(name, async () => {
      await assert.rejects(
        connect(url, { token }),
        (error: unknown) =>
          error instanceof SkillboxError && error.code === "unauthorized" &&
          reason.test(error.message) &&
          reason.test(String(error.detail.reason)),
      );
    });
  }
  await host.close({ timeoutSeconds: 1 });
});

Deno.test("connect() with the token gets a session and the served capabilities", async () => {
  await withClient((client, host) => {
    assert.match(client.sessionId, /^[0-9a-f]{32}$/);
    // Asked for tools, toolkits and skill; only tools is served.
    assert.deepEqual(client.acceptedCaps, ["tools"]);
    assert.ok(client.maxParallel >= 1);
    assert.equal(host.sessionCount, 1);
  });
});

Deno.test("ping() gets a pong from the host", async () => {
  await withClient(async (client) => {
    const first = await client.ping();
    const second = await client.ping();
    assert.ok(second.uptimeSeconds >= first.uptimeSeconds);
    assert.ok(first.uptimeSeconds > 0);
  });
});

Deno.test("many concurrent calls each get their own answer", async () => {
  await withClient(async (client) => {
    const calls = Array.from(
      { length: 100 },
      (_, n) => client.tools.call("count", { n: n % 5 }),
    );
    const results = await Promise.all(calls);
    assert.deepEqual(
      results.map((result) => result.data),
      calls.map((_, n) => n % 5),
    );
    const pings = await Promise.all(
      Array.from({ length: 100 }, () => client.ping()),
    );
    assert.equal(pings.length, 100);
  });
});

Deno.test("requests for capabilities the host does not serve fail with its clear error", async (t) => {
  await withClient(async (client) => {
    await t.step("skills.discover()", async () => {
      await assert.rejects(
        client.skills.discover(),
        (error: unknown) =>
          error instanceof SkillboxError &&
          error.code === "invalid_message" &&
          /"skill" capability is not served/.test(error.message),
      );
    });
    await t.step("toolkits.list()", async () => {
      await assert.rejects(
        client.toolkits.list(),
        (error: unknown) =>
          error instanceof SkillboxError &&
          error.code === "invalid_message" &&
          /"toolkits" capability is not served/.test(error.message),
      );
    });
    await t.step("skills.call()", async () => {
      await assert.rejects(
        client.skills.call("anything", {}),
        (error: unknown) =>
          error instanceof SkillboxError && error.code === "invalid_message",
      );
    });
    // The session survives its errors.
    assert.ok((await client.ping()).uptimeSeconds > 0);
  });
});

Deno.test("tools.call() streams the host's events and resolves with the result", async () => {
  await withClient(async (client) => {
    assert.deepEqual((await client.tools.list()).map((tool) => tool.name), [
      "count",
      "hang",
    ]);
    const viaCallback: CallEvent[] = [];
    const call = client.tools.call("count", { n: 3 }, {
      onEvent: (event) => viaCallback.push(event),
    });
    const iterated: CallEvent[] = [];
    for await (const event of call.events) iterated.push(event);
    const result = await call;
    assert.equal(result.success, true);
    assert.equal(result.data, 3);
    assert.deepEqual(iterated.map((event) => [event.kind, event.seq]), [
      ["progress", 0],
      ["progress", 1],
      ["progress", 2],
    ]);
    assert.deepEqual(iterated.at(-1)?.data, { pct: 100, message: "at 3" });
    assert.deepEqual(viaCallback, iterated);
  });
});

Deno.test("host errors reject with SkillboxErrors carrying their code", async (t) => {
  await withClient(async (client) => {
    await t.step("unknown tool", async () => {
      await assert.rejects(
        client.tools.call("missing", {}),
        (error: unknown) =>
          error instanceof SkillboxError && error.code === "unknown_tool" &&
          error.message === 'Unknown tool "missing"',
      );
    });
    await t.step("schema violation names the field", async () => {
      await assert.rejects(
        client.request("tool/call/req", { tool_name: "count", arguments: 5 }),
        (error: unknown) =>
          error instanceof SkillboxError &&
          error.code === "schema_violation" &&
          /arguments/.test(error.message),
      );
    });
    await t.step("unknown message type", async () => {
      await assert.rejects(
        client.request("nonsense/req"),
        (error: unknown) =>
          error instanceof SkillboxError && error.code === "invalid_message",
      );
    });
  });
});

Deno.test("aborting a call rejects it locally and the session keeps serving", async () => {
  await withClient(async (client) => {
    const controller = new AbortController();
    const call = client.tools.call("hang", {}, { signal: controller.signal });
    controller.abort(new Error("stop"));
    await assert.rejects(call, /stop/);
    assert.equal((await client.tools.call("count", { n: 1 })).data, 1);
  });
});

Deno.test("onPush() receives the host's broadcasts", async () => {
  await withClient(async (client, host) => {
    const { promise, resolve } = Promise.withResolvers<unknown>();
    client.onPush((message) => {
      if (message.type === "invoke/event") resolve(message.kind);
    });
    assert.equal(
      host.broadcast(encodeEvent("invoke/event", "", {
        kind: "tools.changed",
        data: {},
        seq: 0,
      })),
      1,
    );
    assert.equal(await promise, "tools.changed");
  });
});

Deno.test("a host that closes fails the pending call and settles closed", async () => {
  const { host, url } = await startHost();
  const client = await connect(url, { token: TOKEN });
  const call = client.tools.call("hang", {});
  // Wait until the host runs the call, so it is in flight when the host closes.
  await client.ping();
  await host.close({ timeoutSeconds: 0 });
  await assert.rejects(call, SkillboxError);
  const info = await client.closed;
  assert.equal(typeof info.code, "number");
  await assert.rejects(client.ping(), ConnectionClosedError);
});
