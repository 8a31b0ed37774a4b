import assert from "node:assert/strict";
import { KeptFiles } from "./run_files.ts";
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
