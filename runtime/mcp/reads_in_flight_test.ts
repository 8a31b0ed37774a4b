import assert from "node:assert/strict";
import { ReadsInFlight } from "./reads_in_flight.ts";

const read = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "resources/read",
  params: { uri: "skill://a/SKILL.md" },
});

function taken(held: ReturnType<ReadsInFlight["take"]>): () => void {
  assert.equal(typeof held, "function", "the request was refused");
  return held as () => void;
}

Deno.test("ReadsInFlight.take() counts only bounded requests, and a batch as its requests", async () => {
  const reads = new ReadsInFlight(2);
  assert.equal(
    reads.take({ ...read(1), method: "tools/call" }, "t"),
    undefined,
  );
  // A notification gets no answer: it holds nothing.
  assert.equal(reads.take({ ...read(1), id: undefined }, "t"), undefined);
  const release = taken(reads.take([read(1), read(2)], "t"));
  const refused = reads.take(read(3), "t");
  assert.ok(refused instanceof Response);
  assert.deepEqual(await refused.json(), {
    jsonrpc: "2.0",
    id: 3,
    error: {
      code: -32000,
      message:
        'Cannot handle "resources/read": this token\'s quota of 2 skill, resource and prompt requests in flight is used up: an answer counts until its client has read it',
      data: { quota: "mcp_reads_per_token", retryable: true },
    },
  });
  release();
  release(); // idempotent: gives back no place twice
  const a = taken(reads.take(read(4), "t"));
  const b = taken(reads.take(read(5), "t"));
  assert.ok(reads.take(read(6), "t") instanceof Response);
  a();
  b();
});

Deno.test("ReadsInFlight.take() refuses a batch over the bound whole, every request answered", async () => {
  const reads = new ReadsInFlight(2);
  const refused = reads.take(
    [read(1), { jsonrpc: "2.0", id: 9, method: "ping" }, read(2), read(3)],
    "",
  );
  assert.ok(refused instanceof Response);
  const answers = await refused.json() as {
    id: number;
    error: { message: string };
  }[];
  assert.deepEqual(answers.map((a) => a.id), [1, 9, 2, 3]);
  assert.match(
    answers[0]!.error.message,
    /the quota of clients without a token of 2/,
  );
  // The refused batch took no place.
  taken(reads.take([read(4), read(5)], ""))();
});

Deno.test("ReadsInFlight.hold() gives the place back only once the body was read to its end", async () => {
  const reads = new ReadsInFlight(1);
  const bytes = new Uint8Array(200 * 1024).fill(7);
  const response = reads.hold(
    new Response(bytes, { headers: { "content-type": "application/json" } }),
    taken(reads.take(read(1), "t")),
  );
  assert.equal(response.headers.get("content-type"), "application/json");
  const reader = response.body!.getReader();
  const first = await reader.read();
  // Handed out in slices: the server waits for the socket between them.
  assert.equal(first.value?.byteLength, 64 * 1024);
  assert.ok(reads.take(read(2), "t") instanceof Response);
  let total = first.value!.byteLength;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    total += next.value.byteLength;
  }
  assert.equal(total, bytes.byteLength);
  taken(reads.take(read(3), "t"))();
});

Deno.test("ReadsInFlight.hold() gives the place back when the client cancels the body", async () => {
  const reads = new ReadsInFlight(1);
  let cancelled = false;
  const source = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new Uint8Array(10)),
    cancel: () => {
      cancelled = true;
    },
  });
  const response = reads.hold(
    new Response(source),
    taken(reads.take(read(1), "t")),
  );
  assert.ok(reads.take(read(2), "t") instanceof Response);
  await response.body!.cancel("gone");
  assert.equal(cancelled, true);
  taken(reads.take(read(3), "t"))();
});

Deno.test("ReadsInFlight.hold() keeps the answer's status, status text and headers", async () => {
  const reads = new ReadsInFlight(1);
  const response = reads.hold(
    new Response("{}", {
      status: 202,
      statusText: "Accepted for now",
      headers: { "mcp-session-id": "s1" },
    }),
    taken(reads.take(read(1), "t")),
  );
  assert.equal(response.status, 202);
  assert.equal(response.statusText, "Accepted for now");
  assert.equal(response.headers.get("mcp-session-id"), "s1");
  assert.equal(await response.text(), "{}");
});
