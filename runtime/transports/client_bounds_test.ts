import assert from "node:assert/strict";
import {
  bodyRefusal,
  READ_ON_FACTOR,
  readCapped,
  readRequestText,
} from "./client_bounds.ts";
import { SALVAGE_BYTES } from "../../protocol/request_schemas.ts";

function chunked(...parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

Deno.test("readCapped() joins the chunks of a body within the cap", async () => {
  assert.deepEqual(await readCapped(chunked("he", "llo", " é"), 100), {
    text: "hello é",
    bytes: 8,
    over: false,
  });
  assert.deepEqual(await readCapped(chunked("abcd"), 4), {
    text: "abcd",
    bytes: 4,
    over: false,
  });
  assert.deepEqual(await readCapped(null, 4), {
    text: "",
    bytes: 0,
    over: false,
  });
});

Deno.test("readCapped() reads an oversize body to its end, keeping only the start", async () => {
  const head = `{"id":"r1",` + "x".repeat(SALVAGE_BYTES);
  const out = await readCapped(chunked(head, "y".repeat(10_000)), 5000);
  assert.equal(out.over, true);
  assert.equal(out.bytes, head.length + 10_000);
  assert.equal(out.text, head.slice(0, SALVAGE_BYTES));
});

Deno.test("readCapped() keeps the start of a body whose first chunk is over the cap", async () => {
  const body = `{"id":"r1","pad":"${"x".repeat(40)}"}`;
  // Over the cap, but not past READ_ON_FACTOR times it: read to its end.
  const out = await readCapped(chunked(body), 20);
  assert.deepEqual(out, { text: body, bytes: body.length, over: true });
});

Deno.test("readCapped() with stopAtCap cancels an oversize body at the cap", async () => {
  let cancelled = false;
  let pulls = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(new Uint8Array(1000));
    },
    cancel() {
      cancelled = true;
    },
  });
  const out = await readCapped(endless, 4500, { stopAtCap: true });
  assert.equal(out.over, true);
  assert.equal(out.bytes, 5000);
  assert.equal(cancelled, true);
  assert.ok(pulls <= 6, `${pulls} chunks pulled`);
});

Deno.test("readCapped() cuts an endless body at READ_ON_FACTOR times the cap", async () => {
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(new Uint8Array(1000));
    },
    cancel() {
      cancelled = true;
    },
  });
  const out = await readCapped(endless, 4500);
  assert.equal(out.over, true);
  assert.equal(out.cut, true);
  assert.equal(out.bytes, 4500 * READ_ON_FACTOR + 1000);
  assert.equal(cancelled, true);
});

Deno.test("readCapped() stops a body that takes longer than timeoutMs", async () => {
  let cancelled = false;
  // One byte, then nothing: a trickle that stopped.
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(1));
    },
    cancel() {
      cancelled = true;
    },
  });
  const out = await readCapped(stalled, 4500, { timeoutMs: 20 });
  assert.equal(out.timedOut, true);
  assert.equal(out.bytes, 1);
  assert.equal(out.text, "");
  assert.equal(cancelled, true);
});

Deno.test("readRequestText() caps a body whose Content-Length is not digits", async (t) => {
  for (const declared of ["", "0x1", "1e1"]) {
    await t.step(JSON.stringify(declared), async () => {
      const request = new Request("http://x/", {
        method: "POST",
        body: "x".repeat(100),
        headers: { "content-length": declared },
      });
      const bounds = { maxBytes: 10, timeoutMs: 1000 };
      assert.deepEqual(await readRequestText(request, bounds), {
        refused: 413,
      });
    });
  }
});

Deno.test("bodyRefusal() answers as the door's refusals do: JSON, never cached", async () => {
  const read = { text: "", bytes: 0, over: false };
  const late = bodyRefusal({ ...read, timedOut: true }, 2000)!;
  const busy = bodyRefusal({ ...read, busy: true }, 2000)!;
  assert.equal(late.status, 408);
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  for (const refusal of [late, busy]) {
    assert.equal(refusal.headers.get("cache-control"), "no-store");
    assert.match((await refusal.json()).error, /^Cannot read the request body/);
  }
  assert.equal(bodyRefusal(read, 2000), undefined);
});
