import assert from "node:assert/strict";
import { newId } from "./envelope.ts";

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
