import assert from "node:assert/strict";
import { LineSplitter } from "./lines.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function collect(options: ConstructorParameters<typeof LineSplitter>[1] = {}) {
  const lines: string[] = [];
  const dropped: { bytes: number; head: string }[] = [];
  const splitter = new LineSplitter((line) => lines.push(decode(line)), {
    ...options,
    onOversize: (bytes, head) => dropped.push({ bytes, head: decode(head) }),
  });
  return { splitter, lines, dropped };
}

Deno.test("LineSplitter accepts a line at the cap and drops one byte more", () => {
  const { splitter, lines, dropped } = collect({ maxLineBytes: 5 });
  splitter.push(encode("12345\n123456\nok\n"));
  assert.deepEqual(lines, ["12345", "ok"]);
  assert.deepEqual(dropped, [{ bytes: 6, head: "" }]);
});

Deno.test("LineSplitter counts an endless line without holding it, and keeps only its head", () => {
  const { splitter, lines, dropped } = collect({
    maxLineBytes: 1024,
    headBytes: 8,
  });
  const chunk = new Uint8Array(64 * 1024).fill(0x61); // "aaaa…", no newline
  for (let i = 0; i < 160; i++) splitter.push(chunk); // 10 MiB
  splitter.push(encode("\nnext\n"));
  assert.deepEqual(lines, ["next"]);
  assert.deepEqual(dropped, [{ bytes: 160 * 64 * 1024, head: "aaaaaaaa" }]);
});

Deno.test("LineSplitter keeps the head across chunks held before the cap was passed", () => {
  const { splitter, dropped } = collect({ maxLineBytes: 6, headBytes: 5 });
  splitter.push(encode('{"i'));
  splitter.push(encode('d":"x"}\n'));
  assert.deepEqual(dropped, [{ bytes: 10, head: '{"id"' }]);
});

Deno.test("LineSplitter copies a partial line, so the caller may reuse its buffer", () => {
  const { splitter, lines } = collect();
  const buffer = encode("hel");
  splitter.push(buffer);
  buffer.set(encode("XXX"));
  splitter.push(encode("lo\n"));
  assert.deepEqual(lines, ["hello"]);
});

Deno.test("LineSplitter.end() flushes a last line and reports a last oversize one", () => {
  const a = collect({ maxLineBytes: 3 });
  a.splitter.push(encode("ab"));
  a.splitter.end();
  assert.deepEqual(a.lines, ["ab"]);
  const b = collect({ maxLineBytes: 3 });
  b.splitter.push(encode("abcd"));
  b.splitter.end();
  assert.deepEqual(b.lines, []);
  assert.equal(b.dropped[0]?.bytes, 4);
  const c = collect();
  c.splitter.end();
  assert.deepEqual(c.lines, []);
});

Deno.test("LineSplitter passes empty lines through (callers decide what they mean)", () => {
  const { splitter, lines } = collect();
  splitter.push(encode("\n\nx\n"));
  assert.deepEqual(lines, ["", "", "x"]);
});

Deno.test("LineSplitter holds a line trickled a byte a chunk in its bytes, not a chunk each", async () => {
  // A writer sharing the pipe (an imported MCP server, a module writing to
  // fd 1) can pace its writes so that each read brings one byte. Holding a
  // copy per chunk cost ~200 bytes of heap per byte of the line: a line
  // under a 16 MiB cap could take gigabytes and abort the host. Here a
  // 1 MiB line must fit a process whose heap is capped at 32 MiB.
  const script = `
    import { LineSplitter } from ${
    JSON.stringify(import.meta.resolve("./lines.ts"))
  };
    let length = -1;
    const splitter = new LineSplitter((line) => length = line.length);
    const bytes = new Uint8Array(1024).fill(0x61);
    for (let i = 0; i < 1024 * 1024; i++) splitter.push(bytes.subarray(i % 1024, i % 1024 + 1));
    splitter.push(new Uint8Array([0x0a]));
    console.log(length);
  `;
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--max-old-space-size=32", script],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(code, 0);
  assert.equal(decode(stdout).trim(), String(1024 * 1024));
});
