/**
 * What a session has waiting for its `max_parallel` slots is bounded: a
 * client that keeps sending large calls while its slots are taken cannot
 * make the host hold any amount of memory (which, exhausted, would end every
 * other principal's session with the host). Against a real host on
 * loopback; a ping answered after the calls proves each was queued or
 * refused by then.
 */

import assert from "node:assert/strict";
import type { Capability } from "../../runtime/capability.ts";
import { tool, toolOutcome } from "../../protocol/tool.ts";
import { createHost } from "../../runtime/host.ts";
import { openWs, type RawWs } from "../support/ws_client.ts";
import { type Msg, RAW } from "../support/wire.ts";

// Calls of `gate` wait until the test opens the current gate.
let gate = Promise.withResolvers<void>();

const tools: Capability = {
  name: "tools",
  handlers: {
    "tool/list/req": () =>
      Promise.resolve({
        tools: [
          tool({ name: "gate", description: "Waits for the test" }),
          tool({ name: "quick", description: "Answers at once" }),
        ],
      }),
    "tool/call/req": async ({ request }) => {
      if (request.toolName === "gate") await gate.promise;
      return {
        result: toolOutcome({
          success: true,
          toolName: request.toolName,
          data: "done",
          durationMs: 0,
        }),
      };
    },
  },
};

function call(id: string, toolName: string, pad = ""): string {
  return JSON.stringify({
    type: "tool/call/req",
    id,
    version: "1.0",
    ts: Date.now() / 1000,
    tool_name: toolName,
    arguments: { pad },
  });
}

/** Every message up to the pong of `id`, bounded. */
async function untilPong(ws: RawWs, id: string): Promise<Msg[]> {
  ws.send(RAW.ping(id));
  const seen: Msg[] = [];
  for (let i = 0; i < 10_000; i++) {
    const msg = await ws.next(30_000);
    if (msg.type === "pong" && msg.req_id === id) return seen;
    seen.push(msg);
  }
  throw new Error(`No pong for "${id}"`);
}

/** Reads until `count` call answers have come, bounded. */
async function answers(ws: RawWs, count: number): Promise<void> {
  let got = 0;
  for (let i = 0; got < count && i < 10_000; i++) {
    if ((await ws.next(30_000)).type === "tool/call/resp") got++;
  }
  assert.equal(got, count);
}

Deno.test("a session that floods calls while its slots are taken gets refusals past 64 MiB waiting; the host and other sessions go on", async () => {
  const host = createHost({
    config: { limits: { maxParallel: 1, maxParallelHost: 4 } },
    capabilities: [tools],
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const wsUrl = `${url.replace("http", "ws")}/a2e`;
  const flooder = await openWs(wsUrl);
  try {
    // Its one slot is taken; every further call must wait.
    flooder.send(call("hold", "gate"));
    const mib = "x".repeat(1024 * 1024);
    const sent = 72;
    for (let i = 0; i < sent; i++) flooder.send(call(`big${i}`, "quick", mib));
    const seen = await untilPong(flooder, "p1");
    const refused = seen.filter((m) => m.type === "error");
    // About 63 of the 1 MiB calls fit; the rest were refused at once.
    assert.ok(
      refused.length >= sent - 64 && refused.length < sent,
      `refused ${refused.length} of ${sent}`,
    );
    for (const error of refused) {
      assert.equal(error.code, "runtime_error");
      assert.equal(error.retryable, true);
      assert.match(
        String(error.message),
        /^Cannot handle "tool\/call\/req": this session's calls waiting for a slot hold \d+ MiB; at most 64 MiB may wait/,
      );
    }
    // Another session's call runs meanwhile.
    const other = await openWs(wsUrl);
    other.send(call("q1", "quick"));
    const answer = await other.next(30_000);
    assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
    await other.close();
    // Once what waited has run, the session has its room back.
    const open = gate;
    gate = Promise.withResolvers<void>();
    open.resolve();
    await answers(flooder, 1 + sent - refused.length);
    flooder.send(call("hold2", "gate"));
    for (let i = 0; i < 8; i++) flooder.send(call(`again${i}`, "quick", mib));
    assert.deepEqual(await untilPong(flooder, "p2"), []);
  } finally {
    gate.resolve();
    await flooder.close();
    await host.close({ timeoutSeconds: 1 });
  }
});
