import assert from "node:assert/strict";
import {
  attachStream,
  Channel,
  REPLAY_CHARS,
  REPLAY_LIMIT,
  STREAM_CHUNK_BYTES,
} from "./http_sse.ts";
import type { Session } from "../session.ts";

const channel = () => new Channel({} as Session);

Deno.test("Channel counts the backlog of the queue and take() empties it", () => {
  const c = channel();
  c.push("abc");
  c.push("de");
  assert.equal(c.backlog, 5);
  assert.deepEqual(c.take().map((m) => m.text), ["abc", "de"]);
  assert.equal(c.backlog, 0);
  assert.deepEqual(c.queue, []);
  c.push("f");
  assert.deepEqual(c.take().map((m) => m.seq), [3]);
});

Deno.test("Channel keeps at most REPLAY_LIMIT sent messages for a replay", () => {
  const c = channel();
  for (let i = 0; i < REPLAY_LIMIT + 5; i++) c.push("x");
  c.take();
  assert.equal(c.sent.length, REPLAY_LIMIT);
  assert.equal(c.sent[0]?.seq, 6);
});

Deno.test("Channel.resume() puts what the old stream lost before what is queued", () => {
  const c = channel();
  c.push("1");
  c.push("2");
  c.push("3");
  c.take();
  c.push("4");
  c.resume(1);
  assert.deepEqual(c.queue.map((m) => m.text), ["2", "3", "4"]);
  assert.equal(c.backlog, 3);
  assert.deepEqual(c.sent, []);
});

Deno.test("Channel.wait() ends on push, and on its own after the time", async () => {
  const c = channel();
  const woken = c.wait(60_000);
  c.push("x");
  assert.equal(await woken, false, "woken, not timed out");
  // Not at once (a timer of 0 ms fires first), and then with nothing pushed.
  let ended = false;
  const waiting = c.wait(20).then((timedOut) => {
    ended = true;
    return timedOut;
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(ended, false);
  assert.equal(await waiting, true, "timed out");
  c.wake(); // nothing waits: no effect
});

Deno.test("Channel keeps at most REPLAY_CHARS of sent messages, whatever their count", () => {
  const c = channel();
  const big = "x".repeat(1024 * 1024);
  for (let i = 0; i < 20; i++) c.push(big);
  c.take();
  assert.ok(c.sentChars <= REPLAY_CHARS, `${c.sentChars} characters kept`);
  assert.equal(c.sent.length, REPLAY_CHARS / big.length);
  assert.equal(c.forgotten, 20 - c.sent.length);
});

Deno.test("Channel.resume() past the replay buffer says which ids are gone, then replays the rest", () => {
  const c = channel();
  const big = "x".repeat(1024 * 1024);
  for (let i = 0; i < 20; i++) c.push(big);
  c.take();
  c.resume(3);
  const [gap, ...rest] = c.queue;
  const error = JSON.parse(gap!.text);
  assert.equal(error.type, "error");
  assert.equal(error.code, "runtime_error");
  assert.match(error.message, /ids 4 to 12 are no longer kept/);
  assert.equal(gap!.seq, 12);
  assert.deepEqual(rest.map((m) => m.seq), [13, 14, 15, 16, 17, 18, 19, 20]);
});

Deno.test("Channel.resume() within the replay buffer adds no gap", () => {
  const c = channel();
  const big = "x".repeat(1024 * 1024);
  for (let i = 0; i < 20; i++) c.push(big);
  c.take();
  c.resume(15);
  assert.deepEqual(c.queue.map((m) => m.seq), [16, 17, 18, 19, 20]);
});

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

Deno.test("attachStream() hands out a chunk a pull, and a replaced stream keeps none of the rest", async () => {
  const channel = new Channel({} as Session);
  const first = attachStream(channel, undefined).getReader();
  await next(first);
  const big = "x".repeat(3 * STREAM_CHUNK_BYTES);
  channel.push(big);
  channel.push("after");
  // A client that stops reading holds what it was last handed: a chunk,
  // never the whole queue.
  const chunk = await next(first);
  assert.equal(chunk?.length, STREAM_CHUNK_BYTES);
  assert.ok(chunk?.startsWith("id: 1\ndata: xxx"));
  assert.deepEqual(channel.queue.map((m) => m.seq), [2], "the rest waits");
  assert.equal(channel.backlog, "after".length);
  // Replaced (no Last-Event-ID: the client accepts losing what was in
  // flight): the old stream ends, the new one starts with what waited.
  const second = attachStream(channel, undefined).getReader();
  assert.equal(await next(first), null);
  await next(second);
  assert.equal(await next(second), "id: 2\ndata: after\n\n");
  await second.cancel();
  // A reader that keeps reading gets the big message whole, in chunks.
  const third = new Channel({} as Session);
  const reader = attachStream(third, undefined).getReader();
  await next(reader);
  third.push(big);
  let got = "";
  while (!got.endsWith("\n\n")) got += await next(reader);
  assert.equal(got, `id: 1\ndata: ${big}\n\n`);
  await reader.cancel();
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

Deno.test("attachStream() counts the streams whose connections are open until each ends or is cancelled", async () => {
  const c = channel();
  const first = attachStream(c, undefined).getReader();
  await first.read(); // ": connected"
  const pending = first.read(); // a pull waits for a message
  // Never read: a client that stopped reading.
  const stalled = attachStream(c, undefined);
  assert.equal((await pending).done, true); // replaced: it ends at its pull
  assert.equal(c.streams, 1);
  const third = attachStream(c, undefined).getReader();
  assert.equal(c.streams, 2); // the stalled one is never pulled again
  await stalled.cancel(); // its client closed the connection
  assert.equal(c.streams, 1);
  await third.cancel();
  assert.equal(c.streams, 0);
});
