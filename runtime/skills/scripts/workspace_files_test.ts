import assert from "node:assert/strict";
import { KeeperStream } from "./workspace_files.ts";

const bytes = (t: string) => new TextEncoder().encode(t);

function stream(text: string | Uint8Array, chunk: number) {
  const all = typeof text === "string" ? bytes(text) : text;
  const parser = new KeeperStream({ maxBytes: 8, maxFiles: 3 });
  for (let at = 0; at < all.length; at += chunk) {
    parser.push(all.subarray(at, at + chunk));
  }
  return parser.end();
}

Deno.test("the keeper's stream parses the same in chunks of any size", () => {
  const text = "R 3 0 7 5\n4 1 5\na.txtabcd0 1 1\nb9 0 7\nc\nd.bin2 1 3\nxyzhi";
  const whole = stream(text, text.length);
  for (const size of [1, 2, 3, 7, 16]) {
    assert.deepEqual(stream(text, size), whole, `chunks of ${size}`);
  }
  assert.equal(whole!.code, 3);
  assert.equal(whole!.bytesFull, true);
  assert.equal(whole!.filesFull, false);
  assert.deepEqual(
    whole!.files.files.map((
      f,
    ) => [f.name, f.size, f.data && String.fromCharCode(...f.data)]),
    [["a.txt", 4, "abcd"], ["b", 0, ""], ["c\nd.bin", 9, null], [
      "xyz",
      2,
      "hi",
    ]]
      .slice(0, 3),
  );
});

Deno.test("a stream that claims more than the caps is cut, never held", () => {
  // A file announced over the byte cap with content following.
  const over = stream("R 0 1 1 1\n99999999999 1 1\na" + "x".repeat(64), 5)!;
  assert.deepEqual(over.files.files, []);
  assert.match(over.files.note!, /listing was cut/);
  // More files than the cap.
  const many = stream("R 0 1 1 9\n" + "0 1 1\na".repeat(5), 4)!;
  assert.equal(many.files.files.length, 3);
  assert.match(
    many.files.note!,
    /over 3 files: 6 of 9 files left out \(the workspace's listing was cut\)/,
  );
  // A header line with no end, or not numbers.
  assert.match(stream("R 0 1 1 1\n" + "9".repeat(500), 50)!.files.note!, /cut/);
  assert.match(stream("R 0 1 1 1\nx y z\n", 50)!.files.note!, /cut/);
  // Only the first line is the report: a file's header has no "R".
  const twice = stream("R 0 1 1 1\nR 1 0 1\na", 50)!;
  assert.deepEqual(twice.files.files, []);
  assert.match(twice.files.note!, /cut/);
  // A stream that never ends is held only up to what the caps allow: a
  // report line, and per file listed a header line and a name, plus the
  // content of all (8 + 129 * 4 + 4096 * 3 bytes).
  const endless = new KeeperStream({ maxBytes: 8, maxFiles: 3 });
  endless.push(bytes("R 0 1 1 1\n"));
  for (let i = 0; i < 100; i++) endless.push(new Uint8Array(64 * 1024));
  assert.equal(endless.held, 12_812);
  assert.match(endless.end()!.files.note!, /listing was cut/);
  // No report at all (the keeper never got there).
  assert.equal(stream("", 1), null);
  assert.equal(stream("garbage\n", 3), null);
});
