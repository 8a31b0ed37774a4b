import assert from "node:assert/strict";
import { encodeFrame, makeNonce, readFrames } from "./_pipe.ts";

async function collect(
  chunks: (string | Uint8Array)[],
  options: Parameters<typeof readFrames>[1],
): Promise<unknown[]> {
  const encoder = new TextEncoder();
  const stream = ReadableStream.from(
    chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c),
  );
  const out: unknown[] = [];
  for await (const m of readFrames(stream, options)) out.push(m);
  return out;
}

Deno.test("readFrames() keeps only lines with the nonce, across chunk splits", async () => {
  const nonce = makeNonce();
  const frame = encodeFrame(nonce, '{"t":"a"}');
  const got = await collect([
    'forged {"t":"x"}\n',
    frame.slice(0, 10),
    frame.slice(10),
    "junk-no-newline",
    encodeFrame(nonce, '{"t":"b"}'),
  ], { nonce });
  assert.deepEqual(got, [{ t: "a" }, { t: "b" }]);
});

Deno.test("readFrames() drops over-long lines without holding them", async () => {
  const nonce = "N";
  let noise = 0;
  const big = "x".repeat(1000);
  const got = await collect(
    [big, big, `N{"t":"late"}\n`, 'N{"t":"ok"}\n'],
    { nonce, maxLineBytes: 100, onNoise: (n) => noise += n },
  );
  assert.deepEqual(got, [{ t: "ok" }]);
  assert.equal(noise, 2000 + 'N{"t":"late"}'.length);
});

Deno.test("readFrames() treats bad JSON after the nonce as noise", async () => {
  const got = await collect(['N{"t":\n', 'N{"t":1}\n'], { nonce: "N" });
  assert.deepEqual(got, [{ t: 1 }]);
});
