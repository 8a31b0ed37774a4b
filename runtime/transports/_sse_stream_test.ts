import assert from "node:assert/strict";
import { attachStream } from "./_sse_stream.ts";
import { Channel } from "./_sse_channel.ts";
import type { Session } from "../session.ts";

const text = new TextDecoder();

async function next(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const { value, done } = await reader.read();
  return done ? null : text.decode(value);
}

Deno.test("attachStream() sends the queue as events when pulled, one batch per pull", async () => {
  const channel = new Channel({} as Session);
  const reader = attachStream(channel, undefined).getReader();
  assert.equal(await next(reader), ": connected\n\n");
  const pending = next(reader);
  channel.push("a");
  assert.equal(await pending, "id: 1\ndata: a\n\n");
  channel.push("b");
  channel.push("c");
  assert.equal(await next(reader), "id: 2\ndata: b\n\nid: 3\ndata: c\n\n");
  await reader.cancel();
  assert.equal(channel.attached, null);
});

Deno.test("attachStream() replays after Last-Event-ID and ends the stream it replaces", async () => {
  const channel = new Channel({} as Session);
  const first = attachStream(channel, undefined).getReader();
  await next(first);
  channel.push("a");
  channel.push("b");
  assert.equal(await next(first), "id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
  const waiting = next(first);
  const second = attachStream(channel, "0").getReader();
  assert.equal(await waiting, null, "the replaced stream ends");
  await next(second);
  assert.equal(
    await next(second),
    "id: 1\ndata: a\n\nid: 2\ndata: b\n\n",
  );
  await second.cancel();
});

Deno.test("attachStream() ignores a Last-Event-ID that is not a number", async () => {
  const channel = new Channel({} as Session);
  channel.push("a");
  channel.take();
  const reader = attachStream(channel, "abc").getReader();
  await next(reader);
  const pending = next(reader);
  channel.push("b");
  assert.equal(await pending, "id: 2\ndata: b\n\n");
  await reader.cancel();
});

Deno.test("attachStream() sends a keep-alive when quiet and closes once the session ended", async () => {
  const channel = new Channel({} as Session);
  const reader = attachStream(channel, undefined, 20).getReader();
  await next(reader);
  assert.equal(await next(reader), ": keepalive\n\n");
  channel.push("last");
  channel.ended = true;
  channel.wake();
  assert.equal(await next(reader), "id: 1\ndata: last\n\n");
  assert.equal(await next(reader), null);
});
