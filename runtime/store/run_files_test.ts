import assert from "node:assert/strict";
import { type FilesBudget, keepRunFiles, KeptFiles } from "./run_files.ts";
import { Redactor } from "./redact.ts";

const SECRET = "sk-operator-secret-1234";
const bytes = (t: string) => new TextEncoder().encode(t);

Deno.test("a kept text file has the operator's secrets scrubbed; a binary one holding one is not kept", () => {
  const kept = new KeptFiles(
    { maxBytes: 1 << 20, maxFiles: 10 },
    new Redactor([SECRET]),
  );
  const binary = new Uint8Array([0xff, 0xfe, ...bytes(SECRET), 0x00]);
  const summary = kept.add([
    { name: "1/out.txt", size: 40, data: bytes(`key=${SECRET}\n`), note: null },
    { name: "1/blob.bin", size: binary.length, data: binary, note: null },
    {
      name: "1/clean.bin",
      size: 2,
      data: new Uint8Array([0xff, 0]),
      note: null,
    },
  ]);
  const [text, blob, clean] = kept.list();
  const kept0 = new TextDecoder().decode(text!.data!);
  assert.ok(!kept0.includes(SECRET));
  assert.match(kept0, /^key=/);
  assert.equal(blob!.data, null);
  assert.match(blob!.note!, /holds an operator secret/);
  assert.deepEqual([...clean!.data!], [0xff, 0]);
  assert.equal(summary.files, 2);
  assert.equal(summary.truncated, true);
});

Deno.test("the files kept for runs not yet written are bounded in bytes across runs, not only per run", () => {
  const keep = keepRunFiles(undefined, new Redactor())!;
  // Each run may keep 4 MiB (the default cap); 100 skill runs going at
  // once held 400 MiB in the host.
  const data = new Uint8Array(4 << 20).fill(0x61);
  const file = { name: "1/out.txt", size: data.length, data, note: null };
  const runs = Array.from({ length: 100 }, () => keep(null));
  const held = runs.reduce((sum, run) => sum + run.add([file]).bytes, 0);
  assert.ok(held <= 128 << 20, `held ${held} bytes`);
  const last = runs[99]!.take();
  assert.equal(last[0]!.data, null);
  assert.match(last[0]!.note!, /not kept: .*runs' files/);
  // Taken (written), its bytes are free again.
  for (const run of runs.slice(0, 99)) run.take();
  assert.equal(keep(null).add([file]).bytes, data.length);
});

Deno.test("one client's runs cannot take the whole files budget from another's", () => {
  const keep = keepRunFiles(undefined, new Redactor())!;
  const data = new Uint8Array(4 << 20).fill(0x61);
  const file = { name: "1/out.txt", size: data.length, data, note: null };
  // Client A's 40 skill runs going at once, 4 MiB each: 160 MiB asked.
  const a = Array.from({ length: 40 }, () => keep("token-a"));
  for (const run of a) run.add([file]);
  const a39 = a[39]!.take();
  assert.equal(a39[0]!.data, null);
  assert.match(a39[0]!.note!, /not kept: one client's runs' files/);
  // Client B's run and the operator's still keep theirs.
  const b = keep("token-b");
  assert.equal(b.add([file]).bytes, data.length);
  assert.equal(keep(null).add([file]).bytes, data.length);
  assert.equal(b.take()[0]!.data?.length, data.length);
});

Deno.test("the caps hold for the bytes kept when scrubbing a secret makes a file longer", () => {
  // "[redacted]" is longer than the secret it stands for: 40 bytes of
  // "abcd" scrubbed are 100.
  const data = new TextEncoder().encode("abcd".repeat(10));
  const file = { name: "1/a.txt", size: data.length, data, note: null };
  const redactor = new Redactor(["abcd"]);
  const run = new KeptFiles({ maxBytes: 40, maxFiles: 10 }, redactor);
  const kept = run.add([file]);
  assert.equal(kept.truncated, true);
  assert.ok(kept.bytes <= 40, `${kept.bytes} bytes kept`);
  assert.match(run.list()[0]!.note!, /over the 40-byte cap/);
  const budget: FilesBudget = { held: 0, max: 40, note: "not kept: spent" };
  const shared = new KeptFiles({ maxBytes: 1000, maxFiles: 10 }, redactor, [
    budget,
  ]);
  assert.equal(shared.add([file]).bytes, 0);
  assert.ok(budget.held <= 40, `${budget.held} bytes held`);
  assert.equal(shared.list()[0]!.note, "not kept: spent");
});

Deno.test("a kept file's name has the operator's secrets scrubbed, as its content has", () => {
  const kept = new KeptFiles(
    { maxBytes: 1 << 20, maxFiles: 10 },
    new Redactor([SECRET]),
  );
  // A script names a file by what an echoing server sent back: the secret
  // the egress broker put in its request.
  kept.add([
    { name: `1/${SECRET}.txt`, size: 2, data: bytes("ok"), note: null },
    { name: `1/${"d".repeat(490)}${SECRET}`, size: 0, data: null, note: null },
  ]);
  const [named, deep] = kept.list();
  assert.equal(named!.name, "1/[redacted].txt");
  assert.ok(!deep!.name.includes(SECRET.slice(0, 8)), deep!.name);
  assert.ok(deep!.name.length <= 500);
});

Deno.test("a file is scrubbed as text only when it is UTF-8 (a NUL is; a lone surrogate is not)", () => {
  const kept = new KeptFiles(
    { maxBytes: 1 << 20, maxFiles: 10 },
    new Redactor([SECRET]),
  );
  // U+D800 encoded: what a lax decoder passes as text, and UTF-8 refuses.
  const surrogate = new Uint8Array([0xed, 0xa0, 0x80, ...bytes(SECRET)]);
  const nul = new Uint8Array([...bytes(`a${SECRET}`), 0]);
  kept.add([
    { name: "1/nul.txt", size: nul.length, data: nul, note: null },
    { name: "1/half", size: surrogate.length, data: surrogate, note: null },
  ]);
  const [withNul, half] = kept.list();
  assert.equal(
    new TextDecoder().decode(withNul!.data!),
    "a[redacted]\0",
  );
  assert.equal(half!.data, null);
  assert.match(half!.note!, /holds an operator secret/);
});
