import assert from "node:assert/strict";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { createEventRelay } from "./notifications.ts";

function relay(progressToken?: number) {
  const sent: ServerNotification[] = [];
  const r = createEventRelay({
    progressToken,
    logger: "t",
    coalesceMs: 10_000,
    send: (n) => {
      sent.push(n);
      return Promise.resolve();
    },
  });
  return { r, sent };
}

Deno.test("createEventRelay() joins llm tokens into one progress message and keeps progress increasing", async () => {
  const { r, sent } = relay(1);
  r.onEvent({ kind: "progress", data: { pct: 40, message: "a" }, seq: 0 });
  r.onEvent({ kind: "llm.token", data: { text: "Hel" }, seq: 1 });
  r.onEvent({ kind: "llm.token", data: { text: "lo" }, seq: 2 });
  r.onEvent({ kind: "progress", data: { pct: 10, message: "b" }, seq: 3 });
  await r.flush();
  const progress = sent.map((n) =>
    n.params as { progress: number; message?: string }
  );
  assert.deepEqual(progress.map((p) => p.message), ["a", "Hello", "b"]);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
  }
});

Deno.test("createEventRelay() maps log levels and sends no progress without a token", async () => {
  const { r, sent } = relay();
  r.onEvent({ kind: "progress", data: { pct: 40 }, seq: 0 });
  r.onEvent({
    kind: "log",
    data: { level: "warn", message: "careful" },
    seq: 1,
  });
  r.onEvent({ kind: "status", data: { message: "busy" }, seq: 2 });
  r.onEvent({ kind: "tool.started", data: { tool: "x" }, seq: 3 });
  await r.flush();
  assert.deepEqual(sent.map((n) => n.method), [
    "notifications/message",
    "notifications/message",
    "notifications/message",
  ]);
  assert.deepEqual(sent.map((n) => (n.params as { level: string }).level), [
    "warning",
    "info",
    "debug",
  ]);
});

Deno.test("createEventRelay() sends joined llm tokens on its own once the coalescing delay passes", async () => {
  const { promise: arrived, resolve } = Promise.withResolvers<
    ServerNotification
  >();
  const r = createEventRelay({
    progressToken: "p",
    logger: "t",
    coalesceMs: 1,
    send: (n) => {
      resolve(n);
      return Promise.resolve();
    },
  });
  r.onEvent({ kind: "llm.token", data: { text: "a" }, seq: 0 });
  r.onEvent({ kind: "llm.token", data: { text: "b" }, seq: 1 });
  // Bounded: a relay that never sends fails here rather than hanging.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sent = await Promise.race([
    arrived,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("No notification")), 2_000);
    }),
  ]).finally(() => clearTimeout(timer));
  assert.deepEqual(sent, {
    method: "notifications/progress",
    params: { progressToken: "p", progress: 0.001, message: "ab" },
  });
});
