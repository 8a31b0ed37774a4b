import assert from "node:assert/strict";
import { SSE_STRATEGY, SseBacklog } from "./sse_backlog.ts";
import {
  EVENT_BACKLOG_BYTES,
  MAX_BACKLOG_BYTES,
} from "../transports/backlog.ts";

const MiB = 1024 * 1024;

Deno.test("SseBacklog counts what a watched body holds until it is read, even past close()", async () => {
  const backlog = new SseBacklog();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
  }, SSE_STRATEGY);
  const watched = backlog.watch(controller);
  controller.enqueue(new Uint8Array(3 * MiB));
  controller.enqueue(new Uint8Array(MiB));
  controller.close();
  watched.end();
  assert.equal(backlog.bytes, 4 * MiB);
  const reader = body.getReader();
  await reader.read();
  assert.equal(backlog.bytes, MiB);
  await reader.read();
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog drops live messages past 8 MiB and disconnects past 64 MiB, over all bodies", () => {
  const backlog = new SseBacklog();
  const controllers: ReadableStreamDefaultController<Uint8Array>[] = [];
  for (let i = 0; i < 2; i++) {
    new ReadableStream<Uint8Array>({
      start: (c) => void controllers.push(c),
    }, SSE_STRATEGY);
    backlog.watch(controllers[i]!);
  }
  controllers[0]!.enqueue(new Uint8Array(EVENT_BACKLOG_BYTES / 2 + 1));
  assert.equal(backlog.decide(true), "send");
  controllers[1]!.enqueue(new Uint8Array(EVENT_BACKLOG_BYTES / 2));
  assert.equal(backlog.decide(true), "drop");
  assert.equal(backlog.decide(false), "send");
  controllers[1]!.enqueue(new Uint8Array(MAX_BACKLOG_BYTES));
  assert.equal(backlog.decide(false), "disconnect");
  backlog.abort("cut off");
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog.meter() counts a foreign body's unread bytes and reports a cancel once", async () => {
  const backlog = new SseBacklog();
  let inner!: ReadableStreamDefaultController<Uint8Array>;
  let gone = 0;
  const body = backlog.meter(
    new ReadableStream<Uint8Array>({ start: (c) => void (inner = c) }),
    () => gone++,
  );
  inner.enqueue(new Uint8Array(2 * MiB));
  inner.enqueue(new Uint8Array(MiB));
  // The meter moves chunks as they come: wait for it to have taken both.
  const reader = body.getReader();
  assert.equal((await reader.read()).value?.byteLength, 2 * MiB);
  for (let i = 0; i < 100 && backlog.bytes < MiB; i++) await Promise.resolve();
  assert.equal(backlog.bytes, MiB);
  await reader.cancel();
  assert.equal(gone, 1);
  assert.equal(backlog.bytes, 0);
});

Deno.test("SseBacklog.abort() fails the bodies, so their bytes are let go", async () => {
  const backlog = new SseBacklog();
  let inner!: ReadableStreamDefaultController<Uint8Array>;
  const body = backlog.meter(
    new ReadableStream<Uint8Array>({ start: (c) => void (inner = c) }),
  );
  inner.enqueue(new Uint8Array(MiB));
  await Promise.resolve();
  backlog.abort("The client stopped reading");
  await assert.rejects(body.getReader().read(), /stopped reading/);
});
