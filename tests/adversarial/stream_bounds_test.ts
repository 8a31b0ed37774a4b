/**
 * Item 4 of issue 22, the transports' part: what the host keeps for a
 * client that does not read, or never reconnects, is bounded in bytes.
 * Against a host in its own process, whose resident memory is measured
 * before and after the flood.
 *
 * - HTTP+SSE: a client that reads its stream but never reconnects used to
 *   pin its last 1,024 delivered messages, whatever their size. A replay
 *   that asks for more than is kept gets an error naming the gap.
 * - MCP over HTTP: a client that stops reading its SSE answer while a tool
 *   floods progress used to grow host memory by all of it; past 8 MiB the
 *   notifications are dropped (the host logs it), past 64 MiB the session
 *   ends and its calls are cancelled with the reason. Other sessions are
 *   served all along.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type HostProcess, startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(
  new URL("../fixtures/streams/", import.meta.url),
);
const MiB = 1024 * 1024;
const FLOOD_EVENTS = Number(Deno.env.get("FLOOD_EVENTS") ?? 16000);

/** One SSE event: its id, its message's type and req_id (big ones unparsed). */
interface SseEvent {
  id: string;
  type: string;
  reqId: string;
  json?: Record<string, unknown>;
}

/** Reads SSE events off a body, keeping only small ones whole. */
async function* sseEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<SseEvent> {
  let carry = "";
  for await (const text of body.pipeThrough(new TextDecoderStream())) {
    carry += text;
    // Only the new text can hold the end of the event under way.
    let end = carry.indexOf(
      "\n\n",
      Math.max(0, carry.length - text.length - 1),
    );
    while (end >= 0) {
      const block = carry.slice(0, end);
      carry = carry.slice(end + 2);
      end = carry.indexOf("\n\n");
      const at = block.indexOf("data: ");
      if (at < 0) continue;
      const head = block.slice(0, at + 200);
      const small = block.length < 64 * 1024;
      yield {
        id: /^id: (.*)$/m.exec(head)?.[1] ?? "",
        type: /"type":"([^"]+)"/.exec(head)?.[1] ?? "",
        reqId: /"req_id":"([^"]+)"/.exec(head)?.[1] ?? "",
        json: small ? JSON.parse(block.slice(at + 6)) : undefined,
      };
    }
  }
}

/** An A2E session over HTTP+SSE. */
async function sseSession(url: string) {
  const { session_id: id } = await (await fetch(`${url}/a2e/session`, {
    method: "POST",
  })).json();
  const send = async (message: object) => {
    const res = await fetch(`${url}/a2e/send`, {
      method: "POST",
      headers: { "x-session-id": id },
      body: JSON.stringify(message),
    });
    await res.body?.cancel();
  };
  const stream = (lastEventId?: string) =>
    fetch(`${url}/a2e/stream`, {
      headers: {
        "x-session-id": id,
        ...(lastEventId ? { "last-event-id": lastEventId } : {}),
      },
    });
  return { id, send, stream };
}

/** Reads events until the answer to `reqId`; returns the last event id. */
async function untilAnswer(
  events: AsyncGenerator<SseEvent>,
  type: string,
): Promise<{ lastId: string; answer: SseEvent }> {
  let lastId = "";
  // Not `for await`: leaving it would close the stream.
  while (true) {
    const next = await events.next();
    if (next.done) break;
    lastId = next.value.id;
    if (next.value.type === type) return { lastId, answer: next.value };
  }
  throw new Error(`The stream ended before "${type}"`);
}

Deno.test("an HTTP+SSE client that never reconnects does not pin its delivered messages, and a replay past the buffer is told", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: Number(Deno.env.get("HEAP_MB") ?? 192),
  });
  const a2e = await sseSession(host.url);
  const response = await a2e.stream();
  const events = sseEvents(response.body!);
  await a2e.send({ type: "handshake/req", id: "h" });
  await untilAnswer(events, "handshake/resp");
  const call = (id: string, args: object) =>
    a2e.send({
      type: "tool/call/req",
      id,
      tool_name: "flood",
      arguments: args,
      streaming: true,
    });
  // A first call warms the sandbox, so that only the flood is measured.
  await call("warm", { events: 5, bytes: 10 });
  await untilAnswer(events, "tool/call/resp");
  const before = await host.rssBytes();
  // 600 calls of one 256 KiB event: 1,200 messages of about 256 KiB (the
  // answer carries its event), of which the old buffer kept 1,024 (256 MiB).
  for (let i = 0; i < Number(Deno.env.get("SSE_CALLS") ?? 600); i++) {
    await call(`flood${i}`, { events: 1, bytes: 256 * 1024 });
    const { answer } = await untilAnswer(events, "tool/call/resp");
    assert.equal(answer.reqId, `flood${i}`);
  }
  const after = await host.rssBytes();
  // The figures go in the closing note of issue 22.
  // deno-lint-ignore no-console
  console.log(
    `HTTP+SSE replay: host RSS ${(before / MiB).toFixed(0)} MiB before, ${
      (after / MiB).toFixed(0)
    } MiB after 600 calls of one 256 KiB event (+${
      ((after - before) / MiB).toFixed(0)
    } MiB)`,
  );
  assert.ok(
    after - before < 128 * MiB,
    `host RSS grew by ${((after - before) / MiB).toFixed(0)} MiB`,
  );
  // Leaving the generator cancels the stream under it.
  await events.return(undefined);

  // A reconnect that saw only the first message: the rest is not all kept.
  const again = await a2e.stream("1");
  const replayed = sseEvents(again.body!);
  const first = (await replayed.next()).value as SseEvent;
  assert.equal(first.type, "error", JSON.stringify(first).slice(0, 300));
  assert.match(String(first.json?.message), /are no longer kept/);
  // What is kept still comes, up to the answer.
  const { answer: replayedAnswer } = await untilAnswer(
    replayed,
    "tool/call/resp",
  );
  assert.equal(replayedAnswer.type, "tool/call/resp");
  await replayed.return(undefined);
});

/** An MCP session opened with plain requests; its id. */
async function mcpSession(url: string): Promise<string> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const init = await fetch(`${url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "stalled", version: "1" },
      },
    }),
  });
  const id = init.headers.get("mcp-session-id")!;
  await init.text();
  const done = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...headers, "mcp-session-id": id },
    body: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }),
  });
  await done.body?.cancel();
  return id;
}

/**
 * Posts `tools/call`s asking for progress (answered as SSE), as one
 * request or a batch, on a raw connection that is never read: the client
 * has stopped reading.
 */
async function stalledCall(
  host: HostProcess,
  session: string,
  calls: { id: number; tool: string; args: object }[],
): Promise<Deno.TcpConn> {
  const messages = calls.map(({ id, tool, args }) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: tool, arguments: args, _meta: { progressToken: id } },
  }));
  const body = JSON.stringify(messages.length === 1 ? messages[0] : messages);
  const url = new URL(host.url);
  const conn = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  const bytes = new TextEncoder().encode(body);
  const head = `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\n` +
    "Content-Type: application/json\r\n" +
    "Accept: application/json, text/event-stream\r\n" +
    `Mcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-06-18\r\n` +
    `Content-Length: ${bytes.length}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head));
  await conn.write(bytes);
  return conn;
}

/** The history's runs of a tool, once none of them is still running. */
async function finishedRuns(
  host: HostProcess,
  tool: string,
  count: number,
): Promise<Record<string, unknown>[]> {
  // The history is the host's record that a call ended: polled, bounded.
  for (let i = 0; i < Number(Deno.env.get("SSE_CALLS") ?? 600); i++) {
    const page = await (await fetch(`${host.url}/api/runs?limit=200`)).json();
    const runs = (page.runs as Record<string, unknown>[]).filter((r) =>
      r.name === tool && r.ended_at !== null
    );
    if (runs.length >= count) return runs;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Fewer than ${count} runs of "${tool}" ended within 60 s`);
}

Deno.test("an MCP client that stops reading while a tool floods progress is bounded, then cut off with the reason; others are served", async () => {
  await using host = await startHostProcess({
    skills: [SKILLS],
    sandbox: { max_result_bytes: 8 * MiB },
  }, { heapMb: Number(Deno.env.get("HEAP_MB") ?? 192) });
  const other = new Client({ name: "other", version: "1" });
  await other.connect(
    new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)),
  );
  const warm = await other.callTool({
    name: "flood",
    arguments: { events: 3, bytes: 10 },
  });
  assert.equal(warm.isError, undefined, JSON.stringify(warm));
  const before = await host.rssBytes();

  const session = await mcpSession(host.url);
  const conns: Deno.TcpConn[] = [];
  try {
    // 2,000 progress notifications of 128 KiB (256 MiB) to a reader that
    // never reads.
    conns.push(
      await stalledCall(host, session, [{
        id: 1,
        tool: "flood",
        args: { events: FLOOD_EVENTS, bytes: 32 * 1024 },
      }]),
    );
    const flooded = (await finishedRuns(host, "flood", 2)).find((r) =>
      (r.arguments as { events: number }).events === FLOOD_EVENTS
    );
    const after = await host.rssBytes();
    // The figures go in the closing note of issue 22.
    // deno-lint-ignore no-console
    console.log(
      `MCP stalled reader: host RSS ${(before / MiB).toFixed(0)} MiB before, ${
        (after / MiB).toFixed(0)
      } MiB after ${FLOOD_EVENTS} progress notifications of 32 KiB (+${
        ((after - before) / MiB).toFixed(0)
      } MiB)`,
    );
    assert.ok(
      after - before < 256 * MiB,
      `host RSS grew by ${((after - before) / MiB).toFixed(0)} MiB`,
    );

    // The flood did happen: no event was coalesced away in the sandbox.
    assert.equal(flooded?.event_count, FLOOD_EVENTS);
    assert.ok(
      host.lines.some((l) => /An MCP client is not keeping up/.test(l)),
      host.lines.join("\n"),
    );

    // Another session is served meanwhile.
    const served = await other.callTool({
      name: "flood",
      arguments: { events: 2, bytes: 10 },
    });
    assert.equal(served.isError, undefined, JSON.stringify(served));

    // Answers are never dropped, so a client that keeps asking and never
    // reads reaches the last bound: its session ends, its calls cancelled.
    // One batch on one connection, so that the kernel's socket buffers
    // (megabytes on loopback) take their share once.
    const big = { events: 1, bytes: 10, result_bytes: 6 * MiB };
    conns.push(
      await stalledCall(host, session, [
        { id: 2, tool: "hang", args: {} },
        ...Array.from({ length: 12 }, (_, i) => ({
          id: 3 + i,
          tool: "flood",
          args: big,
        })),
      ]),
    );
    await host.waitForLine(
      /Ending an MCP session whose client stopped reading/,
      120_000,
    );
    // Its connection is closed: what the kernel held, then the end.
    const cut = conns.at(-1)!;
    const buffer = new Uint8Array(1 << 20);
    let ended = false;
    const deadline = setTimeout(() => cut.close(), 60_000);
    try {
      while ((await cut.read(buffer)) !== null);
      ended = true;
    } catch (error) {
      ended = !(error instanceof Deno.errors.BadResource);
    } finally {
      clearTimeout(deadline);
    }
    assert.ok(ended, "the stalled connection was not closed within 60 s");
    const [hang] = await finishedRuns(host, "hang", 1);
    assert.match(String(hang!.error), /The MCP client stopped reading/);
    const gone = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }),
    });
    await gone.body?.cancel();
    assert.equal(gone.status, 404);
    const peak = await host.rssBytes();
    // The figures go in the closing note of issue 22.
    // deno-lint-ignore no-console
    console.log(
      `MCP stalled reader cut off: host RSS ${(peak / MiB).toFixed(0)} MiB`,
    );

    const still = await other.callTool({
      name: "flood",
      arguments: { events: 2, bytes: 10 },
    });
    assert.equal(still.isError, undefined, JSON.stringify(still));
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Closed above.
      }
    }
    await other.close();
  }
});
