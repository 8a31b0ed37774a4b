import assert from "node:assert/strict";
import { EventStream, KEPT_CHARS, KEPT_ITEMS } from "./_event_stream.ts";

async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

Deno.test("EventStream replays earlier items to a late iterator, then waits for more", async () => {
  const stream = new EventStream<number>();
  stream.push(1);
  const reading = drain(stream);
  stream.push(2);
  stream.end();
  stream.push(3); // after the end: ignored
  assert.deepEqual(await reading, [1, 2]);
  assert.deepEqual(await drain(stream), [1, 2]);
});

Deno.test("EventStream throws its failure after the items", async () => {
  const stream = new EventStream<string>();
  const failure = new Error("boom");
  stream.push("a");
  stream.end({ error: failure });
  stream.end(); // a second end does not clear the failure
  const seen: string[] = [];
  await assert.rejects(async () => {
    for await (const item of stream) seen.push(item);
  }, (error: unknown) => error === failure);
  assert.deepEqual(seen, ["a"]);
});

Deno.test("EventStream serves several iterators at once", async () => {
  const stream = new EventStream<number>();
  const first = drain(stream);
  const second = drain(stream);
  stream.push(7);
  stream.end();
  assert.deepEqual(await Promise.all([first, second]), [[7], [7]]);
});

Deno.test("EventStream keeps at most KEPT_ITEMS items: a late iterator starts at the oldest kept", async () => {
  const stream = new EventStream<number>();
  const total = 3 * KEPT_ITEMS + 5;
  for (let i = 0; i < total; i++) stream.push(i);
  stream.end();
  const seen = await drain(stream);
  assert.equal(seen.length, KEPT_ITEMS);
  assert.equal(seen[0], total - KEPT_ITEMS);
  assert.equal(seen.at(-1), total - 1);
});

Deno.test("EventStream keeps at most KEPT_CHARS characters, and always the newest item", async () => {
  const stream = new EventStream<string>();
  const size = KEPT_CHARS / 4;
  for (let i = 0; i < 10; i++) stream.push(`item ${i}`, size);
  stream.push("huge", 2 * KEPT_CHARS);
  stream.end();
  assert.deepEqual(await drain(stream), ["huge"]);
});

Deno.test("EventStream lets an iterator that keeps up see every item", async () => {
  const stream = new EventStream<number>();
  const seen: number[] = [];
  const reading = (async () => {
    for await (const item of stream) seen.push(item);
  })();
  const total = 2 * KEPT_ITEMS;
  for (let i = 0; i < total; i++) {
    stream.push(i);
    // Let the iterator take it before the next arrives.
    await Promise.resolve();
    await Promise.resolve();
  }
  stream.end();
  await reading;
  assert.equal(seen.length, total);
  assert.ok(seen.every((item, i) => item === i));
});
