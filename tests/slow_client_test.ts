/**
 * A client that stops reading must not grow host memory without bound: live
 * events past the backlog limit are dropped (the final answer still comes),
 * and a client too far behind is disconnected.
 */

import assert from "node:assert/strict";
import type { Capability } from "../runtime/capability.ts";
import { encodeEvent } from "../protocol/responses.ts";
import { toolOutcome } from "../protocol/tool.ts";
import { startHost } from "./support/host.ts";
import { openSse } from "./support/sse_client.ts";

const EVENTS = 200;
const EVENT_DATA = "x".repeat(1024 * 1024);

/** A tools capability whose one call streams 200 events of 1 MiB each. */
function floodingTools(done: () => void): Capability {
  return {
    name: "tools",
    handlers: {
      "tool/call/req": async ({ request, session }) => {
        for (let seq = 0; seq < EVENTS; seq++) {
          session.send(encodeEvent("tool/event", request.id, {
            kind: "log",
            data: { level: "info", message: EVENT_DATA },
            seq,
          }));
          // Let the socket drain what it can, as a real call would.
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
        done();
        return {
          result: toolOutcome({
            success: true,
            toolName: request.toolName,
            durationMs: 1,
          }),
          createdAt: 0,
        };
      },
    },
  };
}

/** Opens an HTTP+SSE session whose `send` posts a message and drops the answer. */
async function sseSession(base: string) {
  const client = await openSse(base);
  const send = (message: object) =>
    client.send(JSON.stringify(message)).then((r) => r.body?.cancel());
  return { sessionId: client.sessionId, send };
}

/** Counts needles in a byte stream until `stop` appears (bounded). */
async function scan(
  stream: ReadableStream<Uint8Array>,
  needle: string,
  stop: string,
): Promise<number> {
  const decoder = new TextDecoder();
  let count = 0;
  let carry = "";
  for await (const chunk of stream) {
    const text = carry + decoder.decode(chunk, { stream: true });
    count += text.split(needle).length - 1;
    if (text.includes(stop)) return count;
    // Keep a tail so a needle split across chunks is still seen (once).
    carry = text.slice(-Math.max(needle.length, stop.length));
    count -= carry.split(needle).length - 1;
  }
  throw new Error(`The stream ended before "${stop}"`);
}

Deno.test("a WebSocket client that stops reading loses live events, not its answer", async () => {
  const logs: string[] = [];
  const finished = Promise.withResolvers<void>();
  await using t = await startHost({
    capabilities: [floodingTools(finished.resolve)],
    log: (line) => logs.push(line),
  });
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(t.url).port),
  });
  const write = (text: string) => conn.write(new TextEncoder().encode(text));
  await write(
    "GET /a2e HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Key: ${
        btoa("0123456789abcdef")
      }\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  // One masked text frame per message, as a browser would send it.
  const frame = (json: string) => {
    const body = new TextEncoder().encode(json);
    const mask = crypto.getRandomValues(new Uint8Array(4));
    const head = body.length < 126
      ? [0x81, 0x80 | body.length]
      : [0x81, 0x80 | 126, body.length >> 8, body.length & 0xff];
    const out = new Uint8Array(head.length + 4 + body.length);
    out.set(head);
    out.set(mask, head.length);
    body.forEach((b, i) => out[head.length + 4 + i] = b ^ mask[i % 4]!);
    return conn.write(out);
  };
  await frame(JSON.stringify({ type: "handshake/req", id: "h" }));
  await frame(JSON.stringify({
    type: "tool/call/req",
    id: "flood",
    tool_name: "flood",
    arguments: {},
    streaming: true,
  }));
  // Nothing is read until the host has sent all it is going to send.
  await finished.promise;
  const events = await scan(
    conn.readable,
    '"type":"tool/event"',
    '"type":"tool/call/resp"',
  );
  assert.ok(events < EVENTS, `${events} of ${EVENTS} events were kept`);
  assert.ok(logs.some((l) => /not keeping up/.test(l)), logs.join("\n"));
});

Deno.test("an SSE client that never opens its stream loses live events, not its answer", async () => {
  const logs: string[] = [];
  const finished = Promise.withResolvers<void>();
  await using t = await startHost({
    capabilities: [floodingTools(finished.resolve)],
    log: (line) => logs.push(line),
  });
  const { sessionId, send } = await sseSession(t.sseUrl);
  await send({ type: "handshake/req", id: "h" });
  await send({
    type: "tool/call/req",
    id: "flood",
    tool_name: "flood",
    arguments: {},
    streaming: true,
  });
  await finished.promise;
  const stream = await fetch(`${t.sseUrl}/stream`, {
    headers: { "x-session-id": sessionId },
  });
  const events = await scan(
    stream.body!,
    '"type":"tool/event"',
    '"type":"tool/call/resp"',
  );
  await stream.body?.cancel().catch(() => {});
  assert.ok(events < EVENTS, `${events} of ${EVENTS} events were kept`);
  assert.ok(logs.some((l) => /not keeping up/.test(l)), logs.join("\n"));
});

Deno.test("an SSE client too far behind is disconnected and its calls cancelled", async () => {
  const logs: string[] = [];
  const cancelled = Promise.withResolvers<void>();
  const big = "y".repeat(1024 * 1024);
  // Answers are never dropped: 80 answers of 1 MiB pass the hard limit.
  const bigAnswers: Capability = {
    name: "tools",
    handlers: {
      "tool/call/req": ({ request, signal }) => {
        if (request.toolName === "wait") {
          signal.addEventListener("abort", () => cancelled.resolve());
          return new Promise(() => {});
        }
        return Promise.resolve({
          result: toolOutcome({
            success: true,
            toolName: "big",
            durationMs: 1,
            data: big,
          }),
          createdAt: 0,
        });
      },
    },
  };
  await using t = await startHost({
    capabilities: [bigAnswers],
    config: { limits: { maxParallel: 2 } },
    log: (line) => logs.push(line),
  });
  const { send } = await sseSession(t.sseUrl);
  await send({ type: "handshake/req", id: "h" });
  await send({
    type: "tool/call/req",
    id: "w",
    tool_name: "wait",
    arguments: {},
  });
  for (let i = 0; i < 80; i++) {
    await send({
      type: "tool/call/req",
      id: `b${i}`,
      tool_name: "big",
      arguments: {},
    });
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error("The slow client's call was not cancelled in 10 s")),
      10_000,
    );
  });
  try {
    await Promise.race([cancelled.promise, bound]);
  } finally {
    clearTimeout(timer);
  }
  assert.ok(logs.some((l) => /stopped reading/.test(l)), logs.join("\n"));
});
