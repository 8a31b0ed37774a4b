import assert from "node:assert/strict";
import { EventStream } from "./_event_stream.ts";

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
