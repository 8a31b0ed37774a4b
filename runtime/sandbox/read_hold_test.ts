import assert from "node:assert/strict";
import { ReadHold } from "./read_hold.ts";

const never = new Promise<never>(() => {});

Deno.test("ReadHold reads at once before the process is ready and while answers are awaited", () => {
  const process = { isReady: false };
  const ops = new Map<string, unknown>();
  const stops = new Set<string>();
  const reads = new ReadHold(process, [ops, stops], never);
  assert.equal(reads.hold(), null);
  process.isReady = true;
  ops.set("1", {});
  assert.equal(reads.hold(), null);
  ops.clear();
  stops.add("1");
  assert.equal(reads.hold(), null);
});

Deno.test("ReadHold holds an idle reader until the next write", async () => {
  const reads = new ReadHold({ isReady: true }, [new Map()], never);
  let released = false;
  const held = reads.hold()!.then(() => released = true);
  await Promise.resolve();
  assert.equal(released, false);
  reads.wrote();
  await held;
  assert.equal(released, true);
  reads.wrote(); // nothing held: nothing happens
});

Deno.test("ReadHold releases a held reader when the process exits, and holds no more", async () => {
  const exit = Promise.withResolvers<void>();
  const reads = new ReadHold({ isReady: true }, [], exit.promise);
  const held = reads.hold();
  assert.ok(held instanceof Promise);
  exit.resolve();
  await held;
  assert.equal(reads.hold(), null);
});
