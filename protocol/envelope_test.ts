import assert from "node:assert/strict";
import { newId, nowSeconds } from "./envelope.ts";

Deno.test("newId makes distinct uuid4 ids in hex, across refills of its pool", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const id = newId();
    // Version nibble 4, variant 10xx: what crypto.randomUUID makes.
    assert.match(id, /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 2000);
});

Deno.test("newId's hex digits are all used (the table covers every byte)", () => {
  const digits = new Set<string>();
  for (let i = 0; i < 300; i++) for (const c of newId()) digits.add(c);
  assert.equal(digits.size, 16);
});

Deno.test("nowSeconds() never goes back between two messages", () => {
  // Date.now() plus a fraction of performance.now() went back a few times
  // in each 100,000 calls: an answer stamped before its request.
  let last = 0;
  let back = 0;
  for (let i = 0; i < 1_000_000; i++) {
    const t = nowSeconds();
    if (t < last) back++;
    last = t;
  }
  assert.equal(back, 0);
  assert.ok(Math.abs(nowSeconds() - Date.now() / 1000) < 1);
});
