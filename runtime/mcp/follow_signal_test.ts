import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  EmptyResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { followSignal } from "./follow_signal.ts";

Deno.test("followSignal aborts the followers still running, with the reason, and only those", () => {
  const session = new AbortController();
  const followers = Array.from(
    { length: 5 },
    () => followSignal(session.signal),
  );
  followers[1]!.release();
  followers[3]!.release();
  followers[3]!.release();
  const reason = new Error("session ended");
  session.abort(reason);
  assert.deepEqual(
    followers.map((f) => f.signal.aborted),
    [true, false, true, false, true],
  );
  assert.equal(followers[0]!.signal.reason, reason);
  const late = followSignal(session.signal);
  assert.equal(late.signal.aborted, true);
  assert.equal(late.signal.reason, reason);
});

// A client and a server that counts the cancellations it is sent.
async function connected() {
  const server = new Server({ name: "s", version: "1" }, {
    capabilities: { tools: {} },
  });
  let cancelled = 0;
  server.setNotificationHandler(CancelledNotificationSchema, () => {
    cancelled++;
  });
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "c", version: "1" });
  await client.connect(b);
  // A request after the notifications: they arrive first, in order.
  const count = async () => {
    await client.request({ method: "ping" }, EmptyResultSchema);
    return cancelled;
  };
  return { client, count, close: () => client.close() };
}

Deno.test("calls of a long session with followSignal send no cancellation of answered requests when it ends", async () => {
  const { client, count, close } = await connected();
  const session = new AbortController();
  for (let i = 0; i < 20; i++) {
    const follower = followSignal(session.signal);
    try {
      await client.callTool({ name: "t", arguments: {} }, undefined, {
        signal: follower.signal,
      });
    } finally {
      follower.release();
    }
  }
  session.abort(new Error("session ended"));
  assert.equal(await count(), 0);
  await close();
});

Deno.test("the SDK's client, given the session's signal itself, cancels every answered request when it ends (why followSignal exists)", async () => {
  const { client, count, close } = await connected();
  const session = new AbortController();
  for (let i = 0; i < 20; i++) {
    await client.callTool({ name: "t", arguments: {} }, undefined, {
      signal: session.signal,
    });
  }
  session.abort(new Error("session ended"));
  assert.equal(await count(), 20);
  await close();
});
