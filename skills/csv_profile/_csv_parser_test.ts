import assert from "node:assert/strict";
import { CsvParser } from "./_csv_parser.ts";

function parse(chunks: string[], delimiter = ","): string[][] {
  const rows: string[][] = [];
  const p = new CsvParser(delimiter, (r) => rows.push(r));
  for (const c of chunks) p.feed(c);
  p.end();
  return rows;
}

Deno.test("CsvParser gives the same rows however the text is chunked", () => {
  const text = 'id,note\r\n1,"a, ""b""\r\nc"\r\n2,plain\n\n3,"x"';
  const whole = parse([text]);
  assert.deepEqual(whole, [
    ["id", "note"],
    ["1", 'a, "b"\r\nc'],
    ["2", "plain"],
    ["3", "x"],
  ]);
  for (let size = 1; size <= 7; size++) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += size) {
      chunks.push(text.slice(i, i + size));
    }
    assert.deepEqual(parse(chunks), whole, `chunks of ${size}`);
  }
});

Deno.test("CsvParser ends rows at CR, LF and CRLF, and skips blank lines", () => {
  assert.deepEqual(parse(["a\rb\nc\r\n\r\nd"]), [["a"], ["b"], ["c"], ["d"]]);
  assert.deepEqual(parse(["a,\n,b"]), [["a", ""], ["", "b"]]);
});

Deno.test("CsvParser uses the delimiter it is given", () => {
  assert.deepEqual(parse(['a;"b;c",d'], ";"), [["a", "b;c,d"]]);
});

Deno.test("CsvParser reports an unterminated quote and still flushes the field", () => {
  const rows: string[][] = [];
  const p = new CsvParser(",", (r) => rows.push(r));
  p.feed('a,"open\nstill open');
  assert.equal(p.inQuotes, true);
  p.end();
  assert.deepEqual(rows, [["a", "open\nstill open"]]);
  const closed = new CsvParser(",", () => {});
  closed.feed('"done"');
  assert.equal(closed.inQuotes, false); // a final quote closes the field
});
